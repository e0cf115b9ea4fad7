"""Benchmark of the evidence export (issue 28, SPEC §13.1): `manage.py export_evidence` of 10,000 and of
100,000 records, each in a process of its own, its peak resident memory measured by the kernel (wait4).

Run: .venv/bin/python benchmarks/evidence_export.py [--postgres postgres://postgres@127.0.0.1:5432]
(prints a table; about a minute on SQLite). Promise: the peak for 100,000 records is within 1.25x the peak
for 10,000 (the rows are read in chunks, memory does not grow with the count), and every line of the
NDJSON is one JSON object with the record's keys.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import setup_django  # noqa: E402

SIZES = (10_000, 100_000)
PROMISED_RATIO = 1.25
KEYS = {"id", "at", "surface", "configuration", "also", "policy_version", "outcome", "checks", "verification",
        "correlation_id", "actor", "task", "review", "text_hash", "key_id"}


def fill(total: int) -> None:
    """Add records until there are `total`: screenings and reviewed tasks' records, realistic check lists."""
    from django.utils import timezone

    from governance.models import EvidenceRecord

    have = EvidenceRecord.objects.count()
    start = timezone.now() - timedelta(days=30)
    checks = [{"check": c, "result": "passed"} for c in ("secret_redaction", "term_list", "citations")]
    checks += [{"check": "pattern_rules", "result": "skipped", "reason": "no_rules"},
               {"check": "rules_judge", "result": "reported"}]
    batch = []
    for i in range(have, total):
        reviewed = i % 3 == 0
        batch.append(EvidenceRecord(
            at=start + timedelta(seconds=i), surface="task" if reviewed else "screening", configuration="newsroom",
            also=["legal"], policy_version=42, outcome="allowed_with_hints", checks=checks,
            verification="not_applicable", correlation_id=uuid.uuid4().hex, actor="consumer:cms",
            review_decision="accepted" if reviewed else "", reviewed_by="erika" if reviewed else "",
            reviewed_at=start + timedelta(seconds=i + 60) if reviewed else None, edited=(i % 2 == 0) if reviewed
            else None, text_hash=f"{i:064x}", key_id="0123456789abcdef"))
        if len(batch) == 5000:
            EvidenceRecord.objects.bulk_create(batch)
            batch = []
    if batch:
        EvidenceRecord.objects.bulk_create(batch)


def export(target: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of `manage.py export_evidence --output target` in its own process."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "manage.py", "export_evidence", "--output", str(target)], cwd=ROOT,
                             env=os.environ.copy())
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"export_evidence exited with {child.returncode}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def validate(target: Path, expected: int) -> None:
    count = 0
    with target.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            assert set(record) == KEYS, sorted(record)
            count += 1
    assert count == expected, (count, expected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="a PostgreSQL server URL; default a SQLite file")
    args = parser.parse_args()
    setup_django("gavel-evidence-bench-", postgres=args.postgres)
    rows, folder = [], Path(tempfile.mkdtemp(prefix="gavel-evidence-export-"))
    for size in SIZES:
        fill(size)
        target = folder / f"evidence-{size}.ndjson"
        seconds, peak = export(target)
        validate(target, size)
        rows.append((size, seconds, peak, target.stat().st_size / 2**20))
    print(f"{'records':>9} {'seconds':>8} {'peak RSS MiB':>13} {'NDJSON MiB':>11}")
    for size, seconds, peak, mib in rows:
        print(f"{size:>9,} {seconds:>8.1f} {peak:>13.1f} {mib:>11.1f}")
    ratio = rows[-1][2] / rows[0][2]
    verdict = "kept" if ratio <= PROMISED_RATIO else "NOT kept"
    print(f"peak RSS 100,000 / 10,000 records: {ratio:.2f}x (promised at most {PROMISED_RATIO}x: {verdict}); "
          "every line validated")


if __name__ == "__main__":
    main()
