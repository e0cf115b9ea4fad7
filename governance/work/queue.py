"""Queued tasks and field fills (SPEC §10): submit, claim, run, cancel, callbacks, sweep, purge.

An editor's decisions on a finished task are in `governance.work.editors`.

The database row is the source of truth; a Celery message carries only the id.
A worker claims a row with one conditional UPDATE and finishes it with another
that names its claim (the attempt number), so a duplicate message, a
redelivery or a worker that was presumed dead never completes a task twice.
How a row left `running` by a dead worker is recovered: docs/tasks.md.
"""
from __future__ import annotations

import json
import logging
import random
import uuid
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import (
    BadInput, BudgetExceeded, Conflict, GavelError, ProviderBusy, ProviderFailed, ProviderTimedOut,
)
from governance.messages import settle_reported_hints
from governance.evidence import records as evidence
from governance.models import Provider, Task
from governance.runs import completions
from governance.screening import service as services
from governance.screening.pipeline import CallFacts, write_events
from governance.work import claims, deliveries
from governance.work.callback_urls import refuse_credentials
from governance.work.callbacks import callback_allowed, deliver_in_background, send_callback
from governance.work.sending import DELIVER_CALLBACK, RUN_TASK, celery_task
from judging.judges import JUDGE_TIMEOUT_CAP

logger = logging.getLogger("gavel.queue")

Status = Task.Status


class Retry(Exception):
    """The provider failed in a way worth another attempt later (429, 5xx, timeout)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --- submit ---
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
    refuse_credentials(callback_url, "callback_url")
    if callback_url and not callback_allowed(callback_url):
        raise BadInput(_("The callback host is not on the allow-list."), code="invalid", fields={
            "callback_url": [_("Give an http(s) URL whose host is on GAVEL_CALLBACK_HOSTS.")]})
    messages = [dict(m) for m in data.get("messages") or []]
    if not messages:
        messages = [{"role": "user", "content": data["instruction"]}]
    task = Task.objects.create(  # the row masks its input before it is stored (Task.mask_secrets)
        kind=data["kind"], consumer=consumer, configuration=configuration.identifier,
        also=[c.identifier for c in also], messages=messages, field=data.get("field"),
        site=data.get("site", ""), language=data.get("language", ""), callback_url=callback_url,
    )
    transaction.on_commit(lambda: enqueue(task.pk))
    return task


def enqueue(task_id, *, countdown: float | None = None) -> None:
    """Send the task's id to the workers. A broker that cannot be reached loses nothing: the
    row stays `queued` and the sweep sends it again."""
    try:
        celery_task(RUN_TASK).apply_async(args=[str(task_id)], countdown=countdown,
                                          queue=settings.CELERY_TASK_DEFAULT_QUEUE)
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
    own budget from the start (one write, one commit). Both statements are written once per
    process (governance/work/claims.py): the ORM would compile them again for every task.
    """
    task = claims.read(task_id)  # with the consumer's name: it names the actor
    if task is None:
        return None, 0.0
    now = timezone.now()
    if task.status == Status.RUNNING and task.lease_until and task.lease_until >= now:
        return None, max((task.lease_until - now).total_seconds(), 0.0) + 1.0
    if task.status not in (Status.QUEUED, Status.RUNNING):
        return None, 0.0
    lease = lease_seconds()
    try:
        configuration, also = configurations_of(task)
        lease = max(lease, run_budget_seconds(configuration, also))
    except GavelError:
        pass  # the run fails it with the reason
    lease_until = now + timedelta(seconds=lease)
    if claims.take(task, now, lease_until):
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
    seconds = sum(c.effective_timeout() for c in completions.chain_of(configuration))
    for config in [configuration, *also]:
        if config.rule_mode != "off":
            judges = config.rule_judges
            seconds += (len(judges) if isinstance(judges, list) else judges.count()) * JUDGE_TIMEOUT_CAP
    if configuration.escalation_id:
        seconds += sum(c.effective_timeout() for c in completions.chain_of(configuration.escalation))
    return int(seconds) + settings.GAVEL_TASK_LEASE_MARGIN_SECONDS


def _finish(task: Task, *, record: dict | None = None, **values) -> bool:
    """Write the result only while this attempt still holds the claim (with `record`, the evidence
    record's values, in the same statement: claims.finish_with_record)."""
    now = timezone.now()
    values.setdefault("finished_at", now)
    rows = Task.objects.filter(pk=task.pk, status=Status.RUNNING, attempts=task.attempts)
    changes = {"updated": now, "lease_until": None, **values}
    done = claims.finish_with_record(rows, changes, record) if record is not None else rows.update(**changes)
    if not done:
        logger.warning("task %s attempt %s lost its claim; its result is discarded", task.pk, task.attempts)
        return False
    # The row as written, so what follows (the callback, the batch) needs no second read of it.
    task.updated, task.lease_until, task.status, task.finished_at = now, None, values["status"], values["finished_at"]
    task.finished_by_this_run = True
    return True


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


def call_facts(task: Task, configuration, also, *, served_by=None, actor: str = "") -> CallFacts:
    return CallFacts(configuration=configuration, also=also, kind=task.kind, site=task.site,
                     language=task.language, served_by=served_by, actor=actor or _task_actor(task),
                     correlation_id=task.correlation_id or uuid.uuid4().hex)


def _task_actor(task: Task) -> str:
    return f"consumer:{task.consumer.name}" if task.consumer_id else "task"


def configurations_of(task: Task):
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
    stored = {"check": block["check"], "message": block["stored_message"], "stored_message": block["stored_message"]}
    if block.get("suggestion"):
        stored["suggestion"] = block["suggestion"]  # a policy fact (term and replacement), no passage
    return stored


def _store_result(task: Task, body: dict) -> bool:
    """The result and, for a delivered answer, its evidence record, both or neither: a task is never
    ready without its evidence (nor the evidence there for a result that was not stored). On
    PostgreSQL one statement writes both; elsewhere one transaction."""
    blocked = body["outcome"] == "blocked"
    before = (task.status, task.lease_until, task.updated, task.finished_at)
    result = {"status": Status.BLOCKED if blocked else Status.READY, "outcome": body["outcome"],
              "answer": "" if blocked else (body.get("text") or ""), "hints": body.get("hints") or [],
              "refusal": _stored_block(body.get("block")), "verification": body.get("verification") or {},
              "checks": body.get("checks") or [], "completion": body.get("completion"),
              "policy_version": body.get("policy_version"), "correlation_id": body.get("id") or "", "failure": None}
    try:
        record = evidence.task_generation(task, body) if claims.one_statement_results() else None
        if record is not None:
            stored = _finish(task, record=record, **result)
            if stored:
                evidence.counted_task_generation(task, body)
        else:
            with transaction.atomic():
                stored = _finish(task, **result)
                if stored:
                    evidence.record_task_generation(task, body)  # the answer is delivered (SPEC §13.1)
    except Exception:
        # Rolled back: the row is still running under this claim, as the task in memory says again.
        task.status, task.lease_until, task.updated, task.finished_at = before
        task.finished_by_this_run = False
        raise
    return stored


def generate(task: Task) -> dict:
    """Generate through the configuration (fallbacks, budgets, zones, escalation — the completion
    service) and screen with the task's kind; the §11.1 body plus the field check."""
    configuration, also = configurations_of(task)
    messages = list(task.messages)
    if task.kind == Task.Kind.FIELD_FILL and task.field:
        messages = [{"role": "system", "content": field_prompt(task.field)}, *messages]
    call = completions.PreparedCall(
        configuration=configuration, also=also, messages=messages, tools=[], read_tools=frozenset(),
        kind=task.kind, site=task.site, language=task.language, actor=_task_actor(task), reader_language=None,
        correlation_id=task.correlation_id or uuid.uuid4().hex, policy_version=configuration.policy_version,
        surface="task", busy_wait=None if settings.CELERY_TASK_ALWAYS_EAGER else settings.GAVEL_TASK_LIMIT_WAIT_SECONDS,
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
    return Provider.objects.filter(name=name).first()


def run(task_id, *, attempt_limit: int | None = None) -> str:
    """Claim and run one task; return what happened (for the Celery entry point and the logs).

    'done' / 'busy:<seconds>' / 'nothing' / 'retry:<reason>' / 'failed'.
    """
    return run_claimed(task_id, attempt_limit=attempt_limit)[0]


def run_claimed(task_id, *, attempt_limit: int | None = None) -> tuple[str, Task | None]:
    """`run`, and the task as this run claimed it: after 'done' or 'failed', with the status it wrote
    (`finished_by_this_run`), so the callback and the batch need no second read of the row."""
    task, wait = claim(task_id)
    if task is None:
        return (f"busy:{wait:.0f}" if wait else "nothing"), None
    return _run(task, attempt_limit), task


def _run(task: Task, attempt_limit: int | None) -> str:
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
        deliver_on_lane(task_id, task.status, task.callback_url)
        return
    try:
        celery_task(DELIVER_CALLBACK).apply_async(args=[str(task_id), task.status],
                                                  queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    except Exception:  # noqa: BLE001 - a callback never blocks or fails the screening that caused it
        logger.warning("could not queue the callback of task %s (the sweep sends it)", task_id, exc_info=True)


def deliver_on_lane(task_id, status: str, url: str | None = None) -> None:
    """The embedded default (no broker): the callback goes to its host's lane, a thread of this process."""
    if url is None:
        url = Task.objects.filter(pk=task_id).values_list("callback_url", flat=True).first() or ""
    deliver_in_background(f"task {task_id}", lambda: post_callback(task_id, status),
                          lambda: give_up_callback(task_id), url=url,
                          due_again=lambda seconds: deliveries.due_again("task", task_id, seconds))


def post_callback(task_id, status: str) -> bool:
    """POST the task JSON, signed, to its callback URL once; record the attempt. True when delivered."""
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
