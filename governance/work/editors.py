"""An editor's decisions on a finished task (SPEC §10, §10.1): who may decide, accept (an edit is
screened again first), reject, retry a failed task, and what failed before each retry.

The queue (`governance.work.queue`) is used through its module, so a test that replaces
`queue.enqueue` or `queue.generate` replaces it here too.
"""
from __future__ import annotations

import uuid

from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import Conflict, GavelError
from governance.evidence import records as evidence
from governance.models import GovernanceEvent, PolicyVersion, Task
from governance.screening.pipeline import Output, run_pipeline, write_events
from governance.work import queue

EDITORS_GROUP = "editors"
Status = Task.Status


class EditBlocked(GavelError):
    """An edited text that the policy stops cannot be accepted; `block` says why."""

    default_code = "edit_blocked"

    def __init__(self, block: dict):
        super().__init__(block["message"])
        self.block = block


class LiveBlocked(Conflict):
    """A text screened under an older policy version that the live policy stops: not accepted (issue 43).
    A Conflict, so a bulk accept leaves it as it is and counts it."""

    default_code = "blocked_by_live_policy"

    def __init__(self, block: dict, screened: int | None, live: int):
        super().__init__(_("Not accepted: the text was screened under policy version %(old)s, and the live policy "
                           "(version %(new)s) stops it: %(message)s") % {
            "old": screened, "new": live, "message": block.get("message", "")})
        self.block = block


def screened_under_older(task: Task) -> bool:
    """The task's text was screened under a policy version that is no longer live."""
    return bool(task.answer) and task.policy_version is not None and task.policy_version != PolicyVersion.current()


def rescreen(task: Task, *, user, reader_language: str | None = None) -> dict:
    """Screen a ready task's answer again under the live policy and keep the result (hints, checks,
    outcome, version), unless the live policy stops it: then nothing changes and the body says why."""
    body = screen_edit(task, task.answer, user=user, reader_language=reader_language)
    if body["outcome"] != "blocked":
        Task.objects.filter(pk=task.pk, status=Status.READY).update(
            hints=body["hints"], outcome=body["outcome"], checks=body["checks"], verification=body["verification"],
            policy_version=body["policy_version"], updated=timezone.now())
        task.refresh_from_db()
    return body


class EditHasHints(GavelError):
    """An edit that still has hints is accepted only once the editor has seen them; `body` is its screening."""

    default_code = "edit_has_hints"

    def __init__(self, body: dict):
        super().__init__(_("The edited text still has hints."))
        self.body = body


def is_editor(user) -> bool:
    """Editors are members of the group `editors`, staff or superusers (SPEC §1)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_staff or user.is_superuser:
        return True
    return user.groups.filter(name=EDITORS_GROUP).exists()


def editors_group() -> Group:
    group, _created = Group.objects.get_or_create(name=EDITORS_GROUP)
    return group


def _review_event(task: Task, decision: str, *, user, edited: bool, reason: str = "", screening: str = "") -> None:
    detail = {"task": str(task.pk), "kind": task.kind, "edited": edited}
    if screening:
        # An edit is screened again under its own correlation id: the review names it, so a search for the
        # task finds the edit's events too (governance/evidence/trace.py).
        detail["screening"] = screening
    if reason:
        detail["reason"] = reason[:500]  # the editor's words on why, never the task's text
    write_events([{
        "correlation_id": task.correlation_id or str(task.pk), "decision": decision, "check_name": "review",
        "configuration": task.configuration, "provider": (task.completion or {}).get("provider", ""),
        "model": (task.completion or {}).get("model", ""), "actor": f"user:{user.get_username()}"[:150],
        "mode": "", "detail": detail,
    }])


def screen_edit(task: Task, text: str, *, user, reader_language: str | None = None) -> dict:
    """Screen an editor's text under the task's configurations and kind (SPEC §10)."""
    configuration, also = queue.configurations_of(task)
    facts = queue.call_facts(task, configuration, also, actor=f"user:{user.get_username()}")
    facts.reader_language = reader_language
    facts.correlation_id = uuid.uuid4().hex
    screening = run_pipeline(Output(text=text), facts)
    body = screening.as_response(PolicyVersion.current())
    return queue.apply_field_check(task, body, facts)


def accept(task: Task, *, user, edited_text: str | None = None, reader_language: str | None = None,
           confirm_hints: bool = True) -> Task:
    """Accept a ready task, or an edit of it that passes the policy again (hints allowed).

    With `confirm_hints` false, an edited text that still has hints raises EditHasHints instead, so
    the editor sees them before saying yes.
    """
    if task.status != Status.READY:
        raise Conflict(_("Only a ready task can be accepted; this one is %(status)s.")
                       % {"status": task.get_status_display()}, code="not_reviewable")
    edited = edited_text is not None and edited_text != task.answer
    if edited and task.kind == Task.Kind.TOOL_CALL:
        # The call is forwarded with the arguments the agent sent (SPEC §14): accepted or rejected as it is.
        raise Conflict(_("A tool call is accepted or rejected as it is; its arguments cannot be edited."),
                       code="not_editable")
    values, edit_screening = {}, ""
    if edited_text is not None and not edited and not confirm_hints and task.hints:
        raise EditHasHints({"text": task.answer, "hints": task.hints})
    if edited:
        body = screen_edit(task, edited_text, user=user, reader_language=reader_language)
        if body["outcome"] == "blocked":
            raise EditBlocked(body["block"])
        if body["hints"] and not confirm_hints:
            raise EditHasHints(body)
        values = {"edited_text": body.get("text", edited_text), "hints": body["hints"], "outcome": body["outcome"],
                  "checks": body["checks"], "verification": body["verification"],
                  "policy_version": body["policy_version"]}
        edit_screening = body["id"]
    elif screened_under_older(task):
        # Accepted is what the live policy lets through: screened again first (issue 43).
        screened = task.policy_version
        body = screen_edit(task, task.answer, user=user, reader_language=reader_language)
        if body["outcome"] == "blocked":
            raise LiveBlocked(body["block"], screened, body["policy_version"])
        values = {"hints": body["hints"], "outcome": body["outcome"], "checks": body["checks"],
                  "verification": body["verification"], "policy_version": body["policy_version"]}
        edit_screening = body["id"]
    now = timezone.now()
    with transaction.atomic():
        done = Task.objects.filter(pk=task.pk, status=Status.READY).update(
            status=Status.ACCEPTED, review_decision=Task.Review.ACCEPTED, reviewed_by=user, reviewed_at=now,
            edited=edited, updated=now, **values)
        if not done:
            task.refresh_from_db()
            raise Conflict(_("Only a ready task can be accepted; this one is %(status)s.")
                           % {"status": task.get_status_display()}, code="not_reviewable")
        task.refresh_from_db()
        _review_event(task, "accepted", user=user, edited=edited, screening=edit_screening)
        evidence.record_review(task)
        transaction.on_commit(lambda: queue.notify(task.pk))
    return task


def reject(task: Task, *, user, reason: str = "") -> Task:
    """Reject a ready or blocked task; an editor's optional reason goes into the review event."""
    now = timezone.now()
    with transaction.atomic():
        done = Task.objects.filter(pk=task.pk, status__in=[Status.READY, Status.BLOCKED]).update(
            status=Status.REJECTED, review_decision=Task.Review.REJECTED, reviewed_by=user, reviewed_at=now,
            updated=now)
        task.refresh_from_db()
        if not done:
            raise Conflict(_("Only a ready or blocked task can be rejected; this one is %(status)s.")
                           % {"status": task.get_status_display()}, code="not_reviewable")
        _review_event(task, "rejected", user=user, edited=False, reason=reason)
        evidence.record_rejection(task)
        transaction.on_commit(lambda: queue.notify(task.pk))
    return task


def retry(task: Task, *, user) -> Task:
    """Queue a failed task again as a new attempt (SPEC §10.1): the worker claims it as any queued task,
    its attempts count on. What failed is kept in the review event (`retried`), so the page can say it."""
    now = timezone.now()
    with transaction.atomic():
        current = Task.objects.select_for_update().filter(pk=task.pk).first()
        if current is None or current.status != Status.FAILED:
            task.refresh_from_db()
            raise Conflict(_("Only a failed task can be retried; this one is %(status)s.")
                           % {"status": task.get_status_display()}, code="not_retryable")
        failure = current.failure if isinstance(current.failure, dict) else {}
        Task.objects.filter(pk=task.pk, status=Status.FAILED).update(
            status=Status.QUEUED, failure=None, finished_at=None, lease_until=None, next_attempt_at=None,
            updated=now)
        task.refresh_from_db()
        write_events([{
            "correlation_id": task.correlation_id or str(task.pk), "decision": "retried", "check_name": "review",
            "configuration": task.configuration, "provider": (task.completion or {}).get("provider", ""),
            "model": (task.completion or {}).get("model", ""), "actor": f"user:{user.get_username()}"[:150],
            "mode": "", "detail": {"task": str(task.pk), "kind": task.kind, "attempts": task.attempts,
                                   "failure": {"code": str(failure.get("code", "")),
                                               "message": str(failure.get("message", ""))[:500]}},
        }])
        transaction.on_commit(lambda: queue.enqueue(task.pk))
    return task


def earlier_failures(task: Task) -> list[dict]:
    """What failed before each retry of the task, oldest first: {at, by, attempts, code, message}."""
    events = GovernanceEvent.objects.filter(decision="retried", check_name="review", detail__task=str(task.pk))
    found = []
    for event in events.order_by("at", "id").only("at", "actor", "detail"):
        detail = event.detail if isinstance(event.detail, dict) else {}
        failure = detail.get("failure") if isinstance(detail.get("failure"), dict) else {}
        found.append({"at": event.at, "by": event.actor.removeprefix("user:"), "attempts": detail.get("attempts"),
                      "code": failure.get("code", ""), "message": failure.get("message", "")})
    return found
