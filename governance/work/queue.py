"""Queued tasks and field fills (SPEC §10): submit, claim, run, cancel, review, purge.

The database row is the source of truth; a Celery message carries only the id.
A worker claims a row with one conditional UPDATE and finishes it with another
that names its claim (the attempt number), so a duplicate message, a
redelivery or a worker that was presumed dead never completes a task twice.
How a row left `running` by a dead worker is recovered: docs/tasks.md.
"""
from __future__ import annotations

import logging
import uuid
from datetime import timedelta
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.runs import completions

from governance.screening import service as services
from governance.errors import (
    BadInput, BudgetExceeded, Conflict, GavelError, ProviderBusy, ProviderFailed, ProviderTimedOut,
)
from governance.models import PolicyVersion, Task
from governance.screening.pipeline import CallFacts, Output, run_pipeline, write_events
from governance.work import deliveries

logger = logging.getLogger("gavel.queue")

EDITORS_GROUP = "editors"
Status = Task.Status


class EditBlocked(GavelError):
    """An edited text that the policy stops cannot be accepted; `block` says why."""

    default_code = "edit_blocked"

    def __init__(self, block: dict):
        super().__init__(block["message"])
        self.block = block


class EditHasHints(GavelError):
    """An edit that still has hints is accepted only once the editor has seen them; `body` is its screening."""

    default_code = "edit_has_hints"

    def __init__(self, body: dict):
        super().__init__(_("The edited text still has hints."))
        self.body = body


class Retry(Exception):
    """The provider failed in a way worth another attempt later (429, 5xx, timeout)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --- who may review ---
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


# --- submit ---
def callback_allowed(url: str, hosts: list[str] | None = None) -> bool:
    """http(s) to a host on GAVEL_CALLBACK_HOSTS: `host` allows any port, `host:port` that port."""
    hosts = settings.GAVEL_CALLBACK_HOSTS if hosts is None else hosts
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    for entry in hosts:
        allowed_host, allowed_port = _host_entry(entry)
        if host == allowed_host and (allowed_port is None or port == allowed_port):
            return True
    return False


def _host_entry(entry: str) -> tuple[str, int | None]:
    """An allow-list entry as (host, port or None for any): `host`, `host:port`, `[v6]`, `[v6]:port`, bare v6."""
    entry = entry.strip().lower()
    if entry.startswith("["):
        host, _bracket, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif entry.count(":") == 1:
        host, _sep, port = entry.partition(":")
    else:
        host, port = entry, ""  # a host name, or an IPv6 address without brackets (any port)
    if port and not port.isdigit():
        return "", None  # a malformed entry allows nothing
    return host, (int(port) if port else None)


def submit(data: dict, *, consumer, actor: str, correlation_id: str | None = None) -> Task:
    """Validate and queue one task; the worker is asked only once the row is committed.

    The refusals of `completions` apply before anything is queued: 404/403 for the
    configurations, 429 over a budget, 400 for a callback host not on the allow-list.
    """
    configuration, also = services.resolve_configurations(data["configuration"], data.get("also") or [], consumer)
    cap = completions.over_budget(configuration)
    if cap:
        raise completions.refuse_budget(configuration, cap, correlation_id=correlation_id or uuid.uuid4().hex,
                                        actor=actor)
    callback_url = data.get("callback_url") or ""
    if callback_url and not callback_allowed(callback_url):
        raise BadInput(_("The callback host is not on the allow-list."), code="invalid", fields={
            "callback_url": [_("Give an http(s) URL whose host is on GAVEL_CALLBACK_HOSTS.")]})
    messages = [dict(m) for m in data.get("messages") or []]
    if not messages:
        messages = [{"role": "user", "content": data["instruction"]}]
    messages = masked_messages(messages)
    task = Task.objects.create(
        kind=data["kind"], consumer=consumer, configuration=configuration.identifier,
        also=[c.identifier for c in also], messages=messages, field=data.get("field"),
        site=data.get("site", ""), language=data.get("language", ""), callback_url=callback_url,
    )
    transaction.on_commit(lambda: enqueue(task.pk))
    return task


def masked_messages(messages: list[dict]) -> list[dict]:
    """A task's input with every secret masked before it is stored and shown to editors (SPEC §9).
    The model is asked with the masked text too: a key it never needs is never sent on."""
    from governance.screening.redaction import redact

    def mask(value):
        if isinstance(value, str):
            return redact(value).text
        if isinstance(value, list):
            return [mask(item) for item in value]
        if isinstance(value, dict):
            return {key: mask(item) for key, item in value.items()}
        return value

    return [{**message, "content": mask(message.get("content"))} if "content" in message else message
            for message in messages]


def enqueue(task_id, *, countdown: float | None = None) -> None:
    """Send the task's id to the workers. A broker that cannot be reached loses nothing: the
    row stays `queued` and the sweep sends it again."""
    from governance.work.tasks import run_task

    try:
        run_task.apply_async(args=[str(task_id)], countdown=countdown, queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    except GavelError:
        raise
    except Exception:  # noqa: BLE001 - a broker outage must not fail the request that queued the row
        if settings.CELERY_TASK_ALWAYS_EAGER:
            raise
        logger.warning("could not send task %s to the broker; the sweep will send it again", task_id, exc_info=True)


# --- cancel ---
def cancel(task: Task, *, actor: str) -> Task:
    """A queued task becomes cancelled; once a worker claimed it, 409 naming its status."""
    now = timezone.now()
    if Task.objects.filter(pk=task.pk, status=Status.QUEUED).update(status=Status.CANCELLED, finished_at=now,
                                                                   updated=now):
        task.refresh_from_db()
        return task
    task.refresh_from_db()
    raise Conflict(
        _("The task cannot be cancelled: it is %(status)s.") % {"status": task.get_status_display()},
        code="not_cancellable",
    )


# --- the worker ---
def lease_seconds() -> int:
    return settings.GAVEL_TASK_LEASE_SECONDS


def claim(task_id) -> tuple[Task | None, float]:
    """Take the task for this worker: (task, 0) — or (None, seconds to wait) when another
    worker's lease is still running, or (None, 0) when there is nothing to do.

    One conditional UPDATE decides: a queued row, or a running row whose lease has passed (its
    worker died), becomes running under a new attempt number — the attempt number read just
    before, so of two workers that read the same row only one takes it. The lease is the run's
    own budget from the start (one write, one commit).
    """
    task = Task.objects.select_related("consumer").filter(pk=task_id).first()  # the consumer names the actor
    if task is None:
        return None, 0.0
    now = timezone.now()
    if task.status == Status.RUNNING and task.lease_until and task.lease_until >= now:
        return None, max((task.lease_until - now).total_seconds(), 0.0) + 1.0
    if task.status not in (Status.QUEUED, Status.RUNNING):
        return None, 0.0
    lease = lease_seconds()
    try:
        configuration, also = _configurations(task)
        lease = max(lease, run_budget_seconds(configuration, also))
    except GavelError:
        pass  # the run fails it with the reason
    lease_until = now + timedelta(seconds=lease)
    claimed = Task.objects.filter(pk=task_id, attempts=task.attempts).filter(
        Q(status=Status.QUEUED) | Q(status=Status.RUNNING, lease_until__lt=now)
    ).update(status=Status.RUNNING, lease_until=lease_until, attempts=F("attempts") + 1, next_attempt_at=None,
             updated=now)
    if claimed:
        task.status, task.lease_until, task.attempts, task.next_attempt_at, task.updated = (
            Status.RUNNING, lease_until, task.attempts + 1, None, now)
        return task, 0.0
    task = Task.objects.filter(pk=task_id).first()  # another worker was quicker: say how long it holds it
    if task is not None and task.status == Status.RUNNING and task.lease_until:
        return None, max((task.lease_until - now).total_seconds(), 0.0) + 1.0
    return None, 0.0


def run_budget_seconds(configuration, also) -> int:
    """How long one run may legitimately take: the chain's timeouts, each judge's capped call,
    the escalation's chain, and a margin. A claim never lapses before it (no takeover of a
    worker that is merely slow)."""
    from judging.judges import JUDGE_TIMEOUT_CAP

    seconds = sum(c.effective_timeout() for c in completions.chain_of(configuration))
    for config in [configuration, *also]:
        if config.rule_mode != "off":
            judges = config.rule_judges
            seconds += (len(judges) if isinstance(judges, list) else judges.count()) * JUDGE_TIMEOUT_CAP
    if configuration.escalation_id:
        seconds += sum(c.effective_timeout() for c in completions.chain_of(configuration.escalation))
    return int(seconds) + settings.GAVEL_TASK_LEASE_MARGIN_SECONDS


def _finish(task: Task, **values) -> bool:
    """Write the result only while this attempt still holds the claim."""
    now = timezone.now()
    values.setdefault("finished_at", now)
    done = Task.objects.filter(pk=task.pk, status=Status.RUNNING, attempts=task.attempts).update(
        updated=now, lease_until=None, **values)
    if not done:
        logger.warning("task %s attempt %s lost its claim; its result is discarded", task.pk, task.attempts)
    return bool(done)


def release_for_retry(task: Task, countdown: float) -> bool:
    """Give the row back to the queue until the next attempt (it may be cancelled meanwhile)."""
    now = timezone.now()
    return bool(Task.objects.filter(pk=task.pk, status=Status.RUNNING, attempts=task.attempts).update(
        status=Status.QUEUED, lease_until=None, next_attempt_at=now + timedelta(seconds=countdown), updated=now))


def release_for_limit(task: Task, countdown: float) -> bool:
    """Give the row back to the queue without counting the attempt: the provider was at a limit
    and was never asked (the attempt number goes back, so a later claim takes the same number;
    this worker's claim ends here, so no write of it can follow)."""
    now = timezone.now()
    return bool(Task.objects.filter(pk=task.pk, status=Status.RUNNING, attempts=task.attempts).update(
        status=Status.QUEUED, attempts=F("attempts") - 1, lease_until=None,
        next_attempt_at=now + timedelta(seconds=countdown), updated=now))


def limit_countdown(wait: float) -> float:
    """When a task held back by a provider limit is sent again: after the limit's own wait, at
    least a second, spread so that the held tasks do not all come back at the same instant."""
    import random

    return max(wait, 1.0) + random.random()  # noqa: S311 - spreading, not secrecy


def fail(task: Task, code: str, message: str) -> bool:
    return _finish(task, status=Status.FAILED, failure={"code": code, "message": str(message)})


def field_prompt(field: dict) -> str:
    """The field facts as the model reads them (SPEC §10)."""
    lines = [
        "You propose the value of one field of a record that lives outside Gavel.",
        f"Record: {field['record']}",
        f"Field: {field['name']}",
    ]
    if field.get("label"):
        lines.append(f"Label shown to people: {field['label']}")
    if field.get("max_length"):
        lines.append(f"The value must be at most {field['max_length']} characters long.")
    lines.append("Answer with the value only, without quotes or explanation.")
    return "\n".join(lines)


def _facts(task: Task, configuration, also, *, served_by=None, actor: str = "") -> CallFacts:
    return CallFacts(configuration=configuration, also=also, kind=task.kind, site=task.site,
                     language=task.language, served_by=served_by, actor=actor or _task_actor(task),
                     correlation_id=task.correlation_id or uuid.uuid4().hex)


def _task_actor(task: Task) -> str:
    return f"consumer:{task.consumer.name}" if task.consumer_id else "task"


def _configurations(task: Task):
    """The task's configurations as they are now (this process's copy for the current policy
    version, with their providers and links); a missing one fails the task with a reason.
    Read once per run: the claim and the generation of one attempt use the same copy."""
    resolved = getattr(task, "_resolved_configurations", None)
    if resolved is not None:
        return resolved
    try:
        resolved = services.resolve_configurations(task.configuration, list(task.also), None)
    except GavelError as exc:
        raise GavelError(exc.message, code="unknown_configuration") from exc
    task._resolved_configurations = resolved
    return resolved


def apply_field_check(task: Task, body: dict, facts: CallFacts, screening_events: list | None = None) -> dict:
    """A field fill's answer longer than max_length is a finding of check `field` (SPEC §10).

    Handled under the strictest rule_mode of the task's configurations, `off` counting as
    report: a too-long value is never silently accepted. No passage is quoted.
    """
    field = task.field or {}
    limit = field.get("max_length")
    if task.kind != Task.Kind.FIELD_FILL or not limit:
        return body
    if body.get("block"):
        body["checks"].append({"check": "field", "result": "skipped", "reason": "earlier_block"})
        return body
    text = body.get("text") or ""
    if len(text) <= limit:
        body["checks"].append({"check": "field", "result": "passed"})
        return body
    blocking = facts.strictest_mode == "block"
    message = _("The proposed value of %(field)s has %(length)d characters; at most %(limit)d are allowed.") % {
        "field": field.get("label") or field["name"], "length": len(text), "limit": limit}
    detail = {"type": "too_long", "field": field["name"], "length": len(text), "max_length": limit}
    write_events([{
        "correlation_id": facts.correlation_id, "decision": "blocked" if blocking else "reported",
        "check_name": "field", "configuration": facts.configuration.identifier,
        "provider": getattr(facts.served_by, "name", "") or facts.configuration.provider.name,
        "model": facts.configuration.model, "actor": facts.actor[:150],
        "mode": "block" if blocking else (facts.strictest_mode if facts.strictest_mode != "off" else "report"),
        "detail": detail,
    }])
    if blocking:
        from governance.messages import settle_reported_hints

        settle_reported_hints(body["hints"], facts.reader_language)
        body["outcome"] = "blocked"
        body.pop("text", None)
        body.pop("tool_calls", None)
        body["block"] = {"check": "field", "message": message, "stored_message": message}
        body["checks"].append({"check": "field", "result": "blocked"})
    else:
        body["hints"].append({"check": "field", "type": "too_long", "passage": None, "start": None, "end": None,
                              "max_length": limit, "length": len(text), "message": message})
        body["outcome"] = "allowed_with_hints"
        body["checks"].append({"check": "field", "result": "reported"})
    return body


def _stored_block(block: dict | None) -> dict | None:
    """What outlives the request keeps the message without the passage (SPEC §9)."""
    if not block:
        return None
    return {"check": block["check"], "message": block["stored_message"], "stored_message": block["stored_message"]}


def _store_result(task: Task, body: dict) -> bool:
    blocked = body["outcome"] == "blocked"
    return _finish(
        task,
        status=Status.BLOCKED if blocked else Status.READY,
        outcome=body["outcome"],
        answer="" if blocked else (body.get("text") or ""),
        hints=body.get("hints") or [],
        refusal=_stored_block(body.get("block")),
        verification=body.get("verification") or {},
        checks=body.get("checks") or [],
        completion=body.get("completion"),
        policy_version=body.get("policy_version"),
        correlation_id=body.get("id") or "",
        failure=None,
    )


def generate(task: Task) -> dict:
    """Generate through the configuration (fallbacks, budgets, zones, escalation — the completion
    service) and screen with the task's kind; the §11.1 body plus the field check."""
    configuration, also = _configurations(task)
    messages = list(task.messages)
    if task.kind == Task.Kind.FIELD_FILL and task.field:
        messages = [{"role": "system", "content": field_prompt(task.field)}, *messages]
    call = completions.PreparedCall(
        configuration=configuration, also=also, messages=messages, tools=[], read_tools=frozenset(),
        kind=task.kind, site=task.site, language=task.language, actor=_task_actor(task), reader_language=None,
        correlation_id=task.correlation_id or uuid.uuid4().hex, policy_version=configuration.policy_version,
        busy_wait=None if settings.CELERY_TASK_ALWAYS_EAGER else settings.GAVEL_TASK_LIMIT_WAIT_SECONDS,
    )
    body = completions.run(call)
    served = None
    if body.get("completion"):
        served = _provider_named(body["completion"]["provider"], configuration)
    return apply_field_check(task, body, call.facts(served))


def _provider_named(name: str, configuration):
    """The provider that served the call: one of the chains' (already loaded), else read by name."""
    chains = completions.chain_of(configuration)
    if configuration.escalation_id:
        chains = chains + completions.chain_of(configuration.escalation)
    for candidate in chains:
        if candidate.provider.name == name:
            return candidate.provider
    from governance.models import Provider

    return Provider.objects.filter(name=name).first()


def run(task_id, *, attempt_limit: int | None = None) -> str:
    """Claim and run one task; return what happened (for the Celery entry point and the logs).

    'done' / 'busy:<seconds>' / 'nothing' / 'retry:<reason>' / 'failed'.
    """
    task, wait = claim(task_id)
    if task is None:
        return f"busy:{wait:.0f}" if wait else "nothing"
    limit = attempt_limit or settings.GAVEL_TASK_MAX_ATTEMPTS
    if task.attempts > limit:
        # Runs that died without a word (the process was killed, the claim lapsed) count too.
        return _unexpected(task, limit)
    try:
        body = generate(task)
    except ProviderBusy as exc:
        # The provider is at one of its limits (SPEC 10.1): not an attempt; sent again later.
        return f"limited:{exc.wait:.3f}"
    except (ProviderFailed, ProviderTimedOut) as exc:
        if getattr(exc, "retryable", True) and task.attempts < limit:
            return f"retry:{exc.code}"
        fail(task, exc.code, _("%(reason)s Gave up after %(n)d attempts; check the provider and resubmit.")
             % {"reason": exc.message, "n": task.attempts})
        return "failed"
    except BudgetExceeded as exc:
        fail(task, exc.code, exc.message + " " + _("Raise the cap or resubmit tomorrow."))
        return "failed"
    except GavelError as exc:
        fail(task, exc.code, exc.message)
        return "failed"
    except Exception:  # noqa: BLE001 - a worker must never leave a row running because of a bug
        logger.exception("task %s attempt %s failed unexpectedly", task.pk, task.attempts)
        return _unexpected(task, limit)
    try:
        stored = _store_result(task, body)
    except Exception:  # noqa: BLE001 - a result the database refuses is bounded like any other bug
        logger.exception("task %s attempt %s: storing the result failed", task.pk, task.attempts)
        return _unexpected(task, limit)
    return "done" if stored else "lost_claim"


def _unexpected(task: Task, limit: int) -> str:
    """An unexpected error is retried, at most `limit` runs in all, then the task fails with
    `internal_error` (SPEC §10.1: never re-run for ever, never left running)."""
    if task.attempts < limit:
        return "retry:internal_error"
    fail(task, "internal_error", _("Gavel could not run this task (%(n)d attempts); it has been logged. "
                                   "Resubmit it, or ask an administrator to look at the log.") % {"n": task.attempts})
    return "failed"


def retry_delay(attempt: int) -> float:
    """Exponential backoff for provider failures: base, 2·base, 4·base … capped at 5 minutes."""
    return min(settings.GAVEL_TASK_RETRY_BASE_SECONDS * (2 ** max(attempt - 1, 0)), 300.0)


# --- review (SPEC §10) ---
def _review_event(task: Task, decision: str, *, user, edited: bool) -> None:
    write_events([{
        "correlation_id": task.correlation_id or str(task.pk), "decision": decision, "check_name": "review",
        "configuration": task.configuration, "provider": (task.completion or {}).get("provider", ""),
        "model": (task.completion or {}).get("model", ""), "actor": f"user:{user.get_username()}"[:150],
        "mode": "", "detail": {"task": str(task.pk), "kind": task.kind, "edited": edited},
    }])


def screen_edit(task: Task, text: str, *, user, reader_language: str | None = None) -> dict:
    """Screen an editor's text under the task's configurations and kind (SPEC §10)."""
    configuration, also = _configurations(task)
    facts = _facts(task, configuration, also, actor=f"user:{user.get_username()}")
    facts.reader_language = reader_language
    facts.correlation_id = uuid.uuid4().hex
    screening = run_pipeline(Output(text=text), facts)
    body = screening.as_response(PolicyVersion.current())
    return apply_field_check(task, body, facts)


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
    values = {}
    if edited_text is not None and not edited and not confirm_hints and task.hints:
        raise EditHasHints({"text": task.answer, "hints": task.hints})
    if edited:
        body = screen_edit(task, edited_text, user=user, reader_language=reader_language)
        if body["outcome"] == "blocked":
            raise EditBlocked(body["block"])
        if body["hints"] and not confirm_hints:
            raise EditHasHints(body)
        values = {"edited_text": body.get("text", edited_text), "hints": body["hints"], "outcome": body["outcome"],
                  "checks": body["checks"], "verification": body["verification"]}
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
        _review_event(task, "accepted", user=user, edited=edited)
        transaction.on_commit(lambda: notify(task.pk))
    return task


def reject(task: Task, *, user) -> Task:
    """Reject a ready or blocked task."""
    now = timezone.now()
    with transaction.atomic():
        done = Task.objects.filter(pk=task.pk, status__in=[Status.READY, Status.BLOCKED]).update(
            status=Status.REJECTED, review_decision=Task.Review.REJECTED, reviewed_by=user, reviewed_at=now,
            updated=now)
        task.refresh_from_db()
        if not done:
            raise Conflict(_("Only a ready or blocked task can be rejected; this one is %(status)s.")
                           % {"status": task.get_status_display()}, code="not_reviewable")
        _review_event(task, "rejected", user=user, edited=False)
        transaction.on_commit(lambda: notify(task.pk))
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
        transaction.on_commit(lambda: enqueue(task.pk))
    return task


def earlier_failures(task: Task) -> list[dict]:
    """What failed before each retry of the task, oldest first: {at, by, attempts, code, message}."""
    from governance.models import GovernanceEvent

    events = GovernanceEvent.objects.filter(decision="retried", check_name="review", detail__task=str(task.pk))
    found = []
    for event in events.order_by("at", "id").only("at", "actor", "detail"):
        detail = event.detail if isinstance(event.detail, dict) else {}
        failure = detail.get("failure") if isinstance(detail.get("failure"), dict) else {}
        found.append({"at": event.at, "by": event.actor.removeprefix("user:"), "attempts": detail.get("attempts"),
                      "code": failure.get("code", ""), "message": failure.get("message", "")})
    return found


# --- the task as JSON (SPEC §10) ---
def task_json(task: Task) -> dict:
    body = {
        "id": str(task.pk), "kind": task.kind, "status": task.status, "configuration": task.configuration,
        "also": list(task.also), "field": task.field, "created": task.created.isoformat(),
        "updated": task.updated.isoformat(), "attempts": task.attempts, "failure": task.failure,
        "review": None,
    }
    if task.review_decision:
        body["review"] = {"decision": task.review_decision,
                          "by": task.reviewed_by.get_username() if task.reviewed_by_id else None,
                          "at": task.reviewed_at.isoformat() if task.reviewed_at else None, "edited": task.edited}
    if task.outcome:
        body["outcome"] = task.outcome
        if task.outcome != "blocked":
            body["text"] = task.edited_text if task.edited else task.answer
        body["hints"] = task.hints
        body["block"] = task.refusal
        body["verification"] = task.verification
        body["checks"] = task.checks
        body["completion"] = task.completion
    if task.callback_url:
        body["callback"] = {"status": task.callback_status or "pending", "attempts": task.callback_attempts,
                            "error": task.callback_error or None}
    return body


# --- callbacks (SPEC §10) ---
CALLBACK_STATUSES = (Status.READY, Status.BLOCKED, Status.FAILED, Status.ACCEPTED, Status.REJECTED)


def notify(task_id, *, task: Task | None = None) -> None:
    """Queue the callback of a task that reached a status its consumer is told about (`task`: the
    row as just read, with at least callback_url and status, saving a query)."""
    if task is None:
        task = Task.objects.filter(pk=task_id).only("callback_url", "status").first()
    if task is None or not task.callback_url or task.status not in CALLBACK_STATUSES:
        return
    # The row first: if the message below is lost, the callback sweep sends it (governance/work/deliveries.py).
    deliveries.opened("task", task_id)
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Eager Celery would deliver inside the request that finished the task: a hanging host would hang it.
        from governance.work.callbacks import deliver_in_background

        deliver_in_background(task_id, task.status, url=task.callback_url)
        return
    from governance.work.tasks import deliver_callback

    try:
        deliver_callback.apply_async(args=[str(task_id), task.status], queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    except Exception:  # noqa: BLE001 - a callback never blocks or fails the screening that caused it
        logger.warning("could not queue the callback of task %s (the sweep sends it)", task_id, exc_info=True)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer, never an instruction: following it would reach hosts off the allow-list."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # urllib then raises HTTPError with the 3xx status


_OPENER = urllib.request.build_opener(_NoRedirects)


def _explicitly_allowed(url: str) -> bool:
    """Whether the URL's host and port are named together on the allow-list (not a bare host, any port)."""
    return callback_allowed(url, [entry for entry in settings.GAVEL_CALLBACK_HOSTS
                                  if _host_entry(entry)[1] is not None])


def send_callback(url: str, payload: bytes, headers: dict, secret: str, *, what: str) -> tuple[bool, str]:
    """POST `payload`, signed with `secret`, to `url` once: (delivered, the error a consumer may read).

    Redirects are never followed. What the consumer reads says less when the URL reached a port the
    allow-list does not name: "refused" against "HTTP 404" would map a host's ports for anyone who
    can submit a task. The log names `what` (a task or a batch), the host and the status, never text.
    """
    from governance.work.callbacks import SIGNATURE_HEADER, signature

    host = urlsplit(url).hostname or "?"
    headers = {"Content-Type": "application/json", "User-Agent": "Gavel", **headers}
    if secret:
        headers[SIGNATURE_HEADER] = signature(secret, payload)
    request = urllib.request.Request(url, data=payload, method="POST", headers=headers)
    detailed = _explicitly_allowed(url)
    generic = _("The callback was not delivered: the receiver gave no 2xx answer.")
    try:
        with _OPENER.open(request, timeout=settings.GAVEL_CALLBACK_TIMEOUT) as response:
            code = response.status
    except urllib.error.HTTPError as exc:
        code = exc.code
        exc.close()
    except (urllib.error.URLError, OSError) as exc:
        reason = type(getattr(exc, "reason", exc)).__name__
        logger.warning("callback of %s to %s failed: %s", what, host, reason)
        return False, (_("Could not reach the callback host (%(reason)s).") % {"reason": reason}
                       if detailed else generic)
    if 200 <= code < 300:
        logger.info("callback of %s to %s delivered (%s)", what, host, code)
        return True, ""
    logger.warning("callback of %s to %s answered %s", what, host, code)
    if 300 <= code < 400:
        return False, _("The callback host answered with a redirect; redirects are never followed, so it was not "
                        "delivered. Give the final URL.")
    return False, (_("The callback host answered HTTP %(code)s.") % {"code": code} if detailed else generic)


def post_callback(task_id, status: str) -> bool:
    """POST the task JSON, signed, to its callback URL once; record the attempt. True when delivered."""
    import json

    if not deliveries.claim("task", task_id):
        return True  # delivered already, given up, or another sender holds this try (docs/tasks.md)
    task = Task.objects.select_related("reviewed_by", "consumer").filter(pk=task_id).first()
    if task is None or not task.callback_url:
        return True
    if not callback_allowed(task.callback_url):
        _record_callback(task, "refused", _("The callback host is no longer on the allow-list."))
        deliveries.settled("task", task.pk)
        logger.warning("callback of task %s to %s refused: host not allowed", task.pk,
                       urlsplit(task.callback_url).hostname or "?")
        return True  # nothing a retry can change
    payload = json.dumps(task_json(task)).encode("utf-8")
    secret = task.consumer.callback_secret if task.consumer_id else ""
    headers = {"X-Gavel-Task": str(task.pk), "X-Gavel-Task-Status": status,
               deliveries.DELIVERY_HEADER: deliveries.delivery_id("task", task.pk, status)}
    delivered, error = send_callback(task.callback_url, payload, headers, secret, what=f"task {task.pk}")
    _record_callback(task, "delivered" if delivered else "failing", error)
    if delivered:
        deliveries.settled("task", task.pk)
    return delivered


def _record_callback(task: Task, status: str, error: str) -> None:
    Task.objects.filter(pk=task.pk).update(callback_attempts=F("callback_attempts") + 1, callback_status=status,
                                           callback_error=str(error)[:500])


def give_up_callback(task_id) -> None:
    Task.objects.filter(pk=task_id).update(callback_status="failed", callback_due_at=None)


# --- recovery and retention ---
def sweep(*, now=None, grace_seconds: int | None = None) -> int:
    """Send again the tasks a message may have been lost for; return how many.

    A queued row older than the grace period (the broker was down when it was
    submitted, or its retry message is overdue) and a running row whose lease has
    passed (its worker died) are sent again. The claim makes a duplicate harmless.
    """
    now = now or timezone.now()
    grace = timedelta(seconds=settings.GAVEL_TASK_SWEEP_GRACE_SECONDS if grace_seconds is None else grace_seconds)
    stale = Task.objects.filter(
        Q(status=Status.QUEUED, next_attempt_at__isnull=True, updated__lt=now - grace)
        | Q(status=Status.QUEUED, next_attempt_at__lt=now - grace)
        | Q(status=Status.RUNNING, lease_until__lt=now)
    ).values_list("pk", "status", "next_attempt_at")[:1000]
    ids = []
    for task_id, status, next_attempt_at in stale:
        if status == Status.QUEUED:
            # Mark it sent again (one conditional UPDATE: of two sweeps at once only one sends), so
            # the next sweeps leave it alone for a grace period instead of piling up copies behind it.
            field = "next_attempt_at" if next_attempt_at else "updated"
            if not Task.objects.filter(pk=task_id, status=Status.QUEUED,
                                       **{f"{field}__lt": now - grace}).update(**{field: now}):
                continue
        ids.append(task_id)
        enqueue(task_id)
    if ids:
        logger.info("sweep sent %d task(s) again", len(ids))
    return len(ids)


def purge_contents(days: int, *, now=None) -> int:
    """Empty input, answer, edited text and hint passages of tasks created more than `days` days ago.

    The row stays with its status, facts (rule numbers, list names, terms) and timestamps.
    """
    if days < 1:
        raise ValueError("days must be at least 1")
    now = now or timezone.now()
    cutoff = now - timedelta(days=days)
    count = 0
    rows = Task.objects.filter(created__lt=cutoff, purged_at__isnull=True).only("pk", "hints")
    for task in rows.iterator(chunk_size=500):
        hints = [{**hint, "passage": None, "start": None, "end": None} for hint in task.hints or []]
        count += Task.objects.filter(pk=task.pk).update(messages=[], answer="", edited_text="", hints=hints,
                                                        purged_at=now)
    return count
