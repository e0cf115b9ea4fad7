"""CPU (and wall time) of the health check a request makes on a reused PostgreSQL connection (issue 30):
Django's backend (`SELECT 1`, one round trip) beside Gavel's (`governance.postgresql`: one poll of the
socket), each on its own persistent connection to the same server, rounds interleaved.

Run (no table is touched; the `postgres` database is only connected to):
    .venv/bin/python benchmarks/health_check_cpu.py [--checks 5000] [--rounds 3]
        [--postgres postgres://postgres@127.0.0.1:5432]

Each check is what a request does before its first query: `health_check_done = False`, then
`close_if_health_check_failed()`. Rows keep each backend's lowest round; the ratio is Gavel's over
Django's. The database server's own CPU is not included (Django's check costs it a statement too).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(wrapper, checks: int) -> tuple[float, float]:
    """Microseconds of CPU and of wall time per check."""
    wrapper.ensure_connection()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(checks):
        wrapper.health_check_done = False
        wrapper.close_if_health_check_failed()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert wrapper.connection is not None, "the connection failed its check"
    return cpu / checks * 1e6, wall / checks * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    args = parser.parse_args()

    os.environ.update(DATABASE_URL=f"{args.postgres.rstrip('/')}/postgres", SECRET_KEY="benchmark",
                      DJANGO_SETTINGS_MODULE="governance.settings", LOG_LEVEL="WARNING")
    import django

    django.setup()
    from django.db import connections
    from django.db.backends.postgresql.base import DatabaseWrapper as DjangoWrapper

    gavel = connections["default"]
    django_own = DjangoWrapper({**connections.settings["default"], "ENGINE": "django.db.backends.postgresql"},
                               alias="django")
    assert type(gavel).__module__ == "governance.postgresql.base", type(gavel)
    rows = {"Django's backend (SELECT 1)": [], "Gavel's backend (poll)": []}
    for _ in range(args.rounds):
        rows["Django's backend (SELECT 1)"].append(timed(django_own, args.checks))
        rows["Gavel's backend (poll)"].append(timed(gavel, args.checks))
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{args.checks} checks x {args.rounds} rounds, lowest round kept; load average {load}\n")
    print("| backend | CPU per check, µs | wall per check, µs |")
    print("|---|---|---|")
    best = {name: (min(c for c, _ in runs), min(w for _, w in runs)) for name, runs in rows.items()}
    for name, (cpu, wall) in best.items():
        print(f"| {name} | {cpu:.1f} | {wall:.1f} |")
    (old_cpu, old_wall), (new_cpu, new_wall) = best.values()
    print(f"\nGavel's / Django's: CPU {new_cpu / old_cpu:.3f}x, wall {new_wall / old_wall:.3f}x")
    django_own.close()
    gavel.close()


if __name__ == "__main__":
    main()
