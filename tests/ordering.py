"""The longest tests start first, so `make test`'s workers finish together (loaded with `-p tests.ordering`).

pytest-xdist hands out tests in collection order (`--no-loadscope-reorder`, Makefile): a test of several
minutes collected last keeps one worker busy while the others have nothing left. pytest-django sorts
transactional tests after the rest, which puts the schema fuzz and the callback fault tests last; this hook
runs after that sort and moves the tests of LONG_FIRST to the front, in that order, keeping the order
within each.

Running transactional tests first is safe here: their flush empties every model table, and the only row
a migration writes (0003: the policy version counter) is created again by PolicyVersion when missing
(tests/governance/test_review_fixes.py); the verdict cache, which no flush empties, is cleared around
every test (tests/conftest.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# The tests that take minutes each (`make test` prints its 30 slowest with --durations), by file or by node id
# without its parameters: the schema fuzz's three seeds (computing), the callback fault tests (mostly waiting
# for Celery, for Redis to restart, for kombu to restore), the 60-second rate-limit test (waiting) and the
# README's examples on a fresh copy (one module-scoped `make run`: left to the end, one worker ran it alone).
LONG_FIRST = (
    "production/test_schema_fuzz.py",
    "faults/test_callbacks_under_faults.py",
    "governance/test_provider_limits.py::test_requests_per_minute_60_no_minute_holds_more_than_60",
    "test_readme.py",
)


def rank(item: pytest.Item) -> int:
    try:
        path = item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return len(LONG_FIRST)
    name = f"{path}::{item.name.split('[')[0]}"
    for position, entry in enumerate(LONG_FIRST):
        if entry in (path, name):
            return position
    return len(LONG_FIRST)


@pytest.hookimpl(trylast=True)  # after pytest-django's sort, which puts transactional tests last
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=rank)  # stable: the order within each rank stays
