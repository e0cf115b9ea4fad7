"""Rehearsals write no usage (issue 25): a policy test, a dry run and the trial run of a PUT policy ask
judges like a live screening, but "nothing written" holds for them, usage rows included (SPEC §12.2-§12.3).

While `rehearsal()` stands, a model call checks the budget caps (a cap still refuses) yet counts no
request, tokens, cost or failure in the day's usage row. With `draft=True` (a draft's judges, asked after
the draft's rolled-back transaction: governance/policy/drafts.py) it writes no governance event either —
a provider failure or a budget refusal is said in the report, as the rolled-back draft would have kept it.
"""
from contextlib import contextmanager
from contextvars import ContextVar

_rehearsing: ContextVar[bool] = ContextVar("gavel_rehearsal", default=False)
_drafting: ContextVar[bool] = ContextVar("gavel_rehearsal_draft", default=False)


@contextmanager
def rehearsal(*, draft: bool = False):
    """Model calls inside count no usage (and, for a draft, write no event)."""
    token = _rehearsing.set(True)
    draft_token = _drafting.set(draft or _drafting.get())
    try:
        yield
    finally:
        _drafting.reset(draft_token)
        _rehearsing.reset(token)


def rehearsing() -> bool:
    return _rehearsing.get()


def drafting() -> bool:
    """Inside a draft's rehearsal: nothing at all is written."""
    return _drafting.get()
