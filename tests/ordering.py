"""The tests that wait share one worker, and the longest start first (loaded with `-p tests.ordering`).

pytest-xdist hands out tests in collection order (`--no-loadscope-reorder`, Makefile): a test of several
minutes collected last keeps one worker busy while the others have nothing left. pytest-django sorts
transactional tests after the rest, which puts the schema fuzz and the callback fault tests last; this hook
runs after that sort and moves the tests of LONG_FIRST to the front, in that order, keeping the order
within each. The files of WAITING are one xdist group (tests/conftest.py), so one worker runs them one after
another: two of them side by side left a core idle for minutes, and one beside a computing test left half of
one.

Running transactional tests first is safe here: their flush empties every model table, and the only row
a migration writes (0003: the policy version counter) is created again by PolicyVersion when missing
(tests/governance/test_review_fixes.py); the verdict cache, which no flush empties, is cleared around
every test (tests/conftest.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The tests that mostly wait (for Celery workers, a restarted Redis, kombu's restore, the sweeps, the 60-second
# rate window, timeouts), by file: they run one after another on one worker, the waiting lane (xdist_group
# "waiting", tests/conftest.py), while the other workers compute. `make test` starts one worker more than the
# machine has cores for it (Makefile). Measured per test: these files took 242 s of a worker's time and 68 s
# of CPU (their own and their processes'); run beside the rest they left a core idle (docs/testing.md).
WAITING = (
    "faults/test_callbacks_under_faults.py",
    "governance/test_provider_limits.py",
    "faults/test_callback_sweep.py",
    "faults/test_draft_judges_lock.py",
    "governance/test_security_workers.py",
    "governance/test_openai_gateway.py",
)
# The tests that compute for minutes each (`make test` prints its 30 slowest with --durations), by file: the
# schema fuzz's two seeds and the README's examples on a fresh copy (one module-scoped `make run`: left to
# the end, one worker ran it alone). The waiting lane is handed out first, so it starts at once.
LONG_FIRST = (*WAITING, "production/test_schema_fuzz.py", "test_readme.py")


def path_of(item: pytest.Item) -> str | None:
    """The test's file relative to tests/, or None for a file outside it."""
    try:
        return item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None


def rank(item: pytest.Item) -> int:
    path = path_of(item)
    return LONG_FIRST.index(path) if path in LONG_FIRST else len(LONG_FIRST)


@pytest.hookimpl(trylast=True)  # after pytest-django's sort, which puts transactional tests last
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=rank)  # stable: the order within each rank stays
