"""What a screening costs with less of the stack around it (issue 30): CPU per request through gunicorn
for the screening as served (DRF), the same work in a plain Django view, the same work in a bare WSGI
function before Django's handler, a JSON 404 (Django's handler and middleware, no view) and a bare
WSGI 404 (gunicorn's own part), each as a ratio to the JSON 404 of the same run. It shows where the
1.5 ms target for a screening sits against the framework Gavel is built on. The stripped paths live
in benchmarks/screening_floor_app.py and are never served by Gavel.

Run (a new PostgreSQL database is made and dropped):
    .venv/bin/python benchmarks/screening_floor.py [--requests 300] [--rounds 4] [--terms 1000]

Real parts: gunicorn (2 sync workers), PostgreSQL, Redis (CACHE_URL), one
term list of `--terms` forbidden words on the configuration, the same 2,000-character text as
benchmarks/gunicorn_cpu.py. The rows are measured in blocks of `--requests`, the rows taking turns block
by block for `--rounds` rounds, and summed: a drift in the machine's speed weighs on every row alike.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.gunicorn_cpu import (  # noqa: E402
    TARGET_SCREENING_MS, django_on_new_database, newsletter_consumer, poster, start_gunicorn, tree_cpu,
)
from benchmarks.load import TEXT  # noqa: E402

ROWS = [
    ("screening as served (DRF view)", "/api/v1/screenings", 200),
    ("the same in a plain Django view", "/bench/plain-view/screenings", 200),
    ("the same before Django's handler", "/bench/no-handler/screenings", 200),
    ("floor: a JSON 404 (no view)", "/api/v1/no-such-endpoint", 404),
    ("gunicorn alone (a bare WSGI 404)", "/bench/nothing", 404),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--terms", type=int, default=1000)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--port", type=int, default=18560)
    args = parser.parse_args()

    django_on_new_database(args.postgres, args.cache, "gavel-screening-floor-", LOG_LEVEL="ERROR")
    from governance.models import Provider

    provider = Provider.objects.create(name="local", route="openai", api_base="http://127.0.0.1:9/v1",
                                       trust_zone="local", timeout=10)
    token = newsletter_consumer(provider, [f"forbidden{i:06d}" for i in range(args.terms)])

    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    server = start_gunicorn(ROOT, env, args.port, app="benchmarks.screening_floor_app:application")
    post = poster(args.port, token)
    body = {"configuration": "newsletter", "text": TEXT}
    spent = dict.fromkeys((name for name, _path, _expect in ROWS), 0.0)
    try:
        for name, path, expect in ROWS:
            first = json.loads(post(path, body, expect) or b"{}")
            if expect == 200 and first.get("outcome") != "allowed":
                sys.exit(f"{name}: expected an allowed screening, got {first}")
            with ThreadPoolExecutor(2) as pair:  # both workers warm on every path
                list(pair.map(lambda _: post(path, body, expect), range(40)))
        for _round in range(args.rounds):
            for name, path, expect in ROWS:
                time.sleep(0.2)
                before = tree_cpu(server.pid)
                for _ in range(args.requests):
                    post(path, body, expect)
                time.sleep(0.3)  # the workers' own after-response work
                spent[name] += tree_cpu(server.pid) - before
    finally:
        server.terminate()
        server.wait(timeout=30)

    per = {name: value * 1000 / (args.requests * args.rounds) for name, value in spent.items()}
    floor = per["floor: a JSON 404 (no view)"]
    print(f"\nCPU per request through gunicorn (2 sync workers, master + workers from /proc): {args.requests} requests "
          f"x {args.rounds} rounds per row, the rows taking turns; a list of {args.terms:,} terms; load "
          f"{os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    print(f"{'request':<36}{'CPU ms':>9}{'x 404':>8}")
    for name, value in per.items():
        print(f"{name:<36}{value:>9.2f}{value / floor:>7.2f}x")
    served = per["screening as served (DRF view)"]
    print(f"\ntarget screening <= {TARGET_SCREENING_MS:g} ms: {'met' if served <= TARGET_SCREENING_MS else 'NOT met'} "
          f"({served:.2f} ms); without Django's handler at all: {per[ROWS[2][0]]:.2f} ms")


if __name__ == "__main__":
    main()
