"""Undo a review for a short while (issue 29): a reject, or an accept without an edit, goes back to the
status it had, as long as nobody acted on the task since and the review is younger than UNDO_SECONDS.

Recorded as a governance event (`check` `review`, `decision` `undone`, facts: task, the decision undone);
the consuming system gets a callback with the restored status, as for any change it is told about.
"""
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import Conflict
from governance.evidence.records import withdraw_review
from governance.models import Task
from governance.screening.pipeline import write_events
from governance.work.queue import notify

UNDO_SECONDS = 60
Status = Task.Status


def undoable(task: Task, *, now=None) -> bool:
    """Whether the task's review may still be undone."""
    now = now or timezone.now()
    if task.reviewed_at is None or now - task.reviewed_at > timedelta(seconds=UNDO_SECONDS):
        return False
    return task.status == Status.REJECTED or (task.status == Status.ACCEPTED and not task.edited)


def undo_review(task: Task, *, user) -> Task:
    """Put a rejected or (unedited) accepted task back where it was before the review."""
    with transaction.atomic():
        current = Task.objects.select_for_update().filter(pk=task.pk).first()
        if current is None or not undoable(current):
            task.refresh_from_db()
            raise Conflict(_("This review can no longer be undone (the task is %(status)s).")
                           % {"status": task.get_status_display()}, code="not_undoable")
        undone = current.review_decision
        if undone == "accepted":
            withdraw_review(current)  # evidence says only what stands: the accept was undone
        back = Status.BLOCKED if current.outcome == "blocked" else Status.READY
        Task.objects.filter(pk=task.pk).update(status=back, review_decision="", reviewed_by=None, reviewed_at=None,
                                               updated=timezone.now())
        task.refresh_from_db()
        write_events([{
            "correlation_id": task.correlation_id or str(task.pk), "decision": "undone", "check_name": "review",
            "configuration": task.configuration, "provider": (task.completion or {}).get("provider", ""),
            "model": (task.completion or {}).get("model", ""), "actor": f"user:{user.get_username()}"[:150],
            "mode": "", "detail": {"task": str(task.pk), "kind": task.kind, "undone": undone},
        }])
        transaction.on_commit(lambda: notify(task.pk))
    return task
