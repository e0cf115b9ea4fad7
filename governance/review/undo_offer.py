"""The offer after a review (issue 29): undo it for a short while, or keep the task as a policy example.

Kept in the session, shown by the `undo_offer` tag on the next review pages until it runs out."""
import time

from governance.models import Task
from governance.work.undo import UNDO_SECONDS

SESSION_KEY = "review_undo"


def offer_undo(request, task: Task, scope: dict) -> None:
    """Remember the last review for the offer shown on the next pages (for UNDO_SECONDS)."""
    request.session[SESSION_KEY] = {
        "task": str(task.pk), "decision": task.review_decision, "edited": bool(task.edited),
        "until": time.time() + UNDO_SECONDS, "scope": {k: str(v) for k, v in scope.items() if v}}


def offer_bulk_undo(request, tasks: list, scope: dict) -> None:
    """After a bulk accept: one offer that undoes every task it accepted (issue 43), for UNDO_SECONDS."""
    request.session[SESSION_KEY] = {
        "task": str(tasks[0].pk), "tasks": [str(t.pk) for t in tasks], "decision": "accepted", "edited": False,
        "until": time.time() + UNDO_SECONDS, "scope": {k: str(v) for k, v in scope.items() if v}}


def current_offer(request) -> dict | None:
    offer = request.session.get(SESSION_KEY) if request is not None and hasattr(request, "session") else None
    if not isinstance(offer, dict) or offer.get("until", 0) < time.time():
        return None
    return offer


def withdraw(request) -> None:
    request.session.pop(SESSION_KEY, None)
