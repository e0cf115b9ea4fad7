"""Rehearsals write no usage (issue 25): a policy test, a dry run and the trial run of a PUT policy ask
judges like a live screening, but "nothing written" holds for them, usage rows included (SPEC §12.2-§12.3).

While `rehearsal()` stands, a model call checks the budget caps (a cap still refuses) yet counts no
request, tokens, cost or failure in the day's usage row.
"""
from contextlib import contextmanager
from contextvars import ContextVar

_rehearsing: ContextVar[bool] = ContextVar("gavel_rehearsal", default=False)


@contextmanager
def rehearsal():
    """Model calls inside count no usage."""
    token = _rehearsing.set(True)
    try:
        yield
    finally:
        _rehearsing.reset(token)


def rehearsing() -> bool:
    return _rehearsing.get()
