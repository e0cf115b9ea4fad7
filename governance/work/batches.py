"""Batches (SPEC 10.1): up to 10,000 tasks validated whole, inserted and published in bulk, their
progress counted from the task rows, cancelled while queued, one callback when all have finished.
"""
from __future__ import annotations

import json
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import BadInput, GavelError
from governance.models import Batch, Task
from governance.runs import completions
from governance.screening import service as services
from governance.work import queue
from governance.work import deliveries
from governance.work.callback_urls import refuse_credentials
from governance.work.callbacks import callback_allowed, deliver_in_background, send_callback
from governance.work.sending import (
    DELIVER_BATCH_CALLBACK, PUBLISH_BATCH, RUN_TASK, celery_task, producer_or_acquire,
)

logger = logging.getLogger("gavel.batches")

MAX_ITEMS = 10_000
Status = Task.Status
FINISHED = tuple(str(s) for s in Task.FINISHED)


def _item_error(exc: GavelError, index: int) -> GavelError:
    """The same refusal, its fields named inside the batch: `items[3].configuration`."""
    fields = {f"items[{index}].{name}": messages for name, messages in (exc.fields or {}).items()}
    exc.fields = fields or {f"items[{index}]": [exc.message]}
    return exc


def submit(data: dict, *, consumer, actor: str, correlation_id: str | None = None) -> Batch:
    """Validate every item first (nothing is queued when one is refused), then insert the batch and
    its tasks in one transaction and publish their ids once it is committed."""
    items = data["items"]
    callback_url = data.get("callback_url") or ""
    refuse_credentials(callback_url, "callback_url")
    if callback_url and not queue.callback_allowed(callback_url):
        raise BadInput(_("The callback host is not on the allow-list."), code="invalid", fields={
            "callback_url": [_("Give an http(s) URL whose host is on GAVEL_CALLBACK_HOSTS.")]})
    resolved: dict[tuple, tuple] = {}
    refused_budget: dict[str, str | None] = {}
    rows = []
    batch = Batch(name=data.get("name") or "", consumer=consumer, total=len(items), callback_url=callback_url)
    for index, item in enumerate(items):
        key = (item["configuration"], tuple(item.get("also") or ()))
        try:
            if key not in resolved:
                resolved[key] = services.resolve_configurations(key[0], list(key[1]), consumer)
            configuration, also = resolved[key]
            if configuration.identifier not in refused_budget:
                refused_budget[configuration.identifier] = completions.over_budget(configuration)
            cap = refused_budget[configuration.identifier]
            if cap:
                raise completions.refuse_budget(configuration, cap, correlation_id=correlation_id or "", actor=actor)
        except GavelError as exc:
            raise _item_error(exc, index) from None
        url = item.get("callback_url") or ""
        refuse_credentials(url, f"items[{index}].callback_url")
        if url and not callback_allowed(url):
            raise BadInput(_("The callback host is not on the allow-list."), code="invalid", fields={
                f"items[{index}].callback_url": [_("Give an http(s) URL whose host is on GAVEL_CALLBACK_HOSTS.")]})
        messages = [dict(m) for m in item.get("messages") or []] or [{"role": "user", "content": item["instruction"]}]
        rows.append(Task(kind=item["kind"], consumer=consumer, configuration=configuration.identifier,
                         also=[c.identifier for c in also], messages=messages, field=item.get("field"),
                         site=item.get("site", ""), language=item.get("language", ""), callback_url=url,
                         batch=batch))
    with transaction.atomic():
        batch.save()
        Task.objects.bulk_create(rows, batch_size=1000)
        ids = [row.pk for row in rows]
        transaction.on_commit(lambda: publish(batch.pk, ids))
    return batch


def publish(batch_id, ids) -> None:
    """Ask the workers for the batch with one message; a worker sends the tasks' own messages
    (`fan_out`), so the request that queued 10,000 rows does not wait for 10,000 sends. What cannot
    be sent stays queued; the sweep sends it again."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        for task_id in ids:
            queue.enqueue(task_id)
        return
    try:
        celery_task(PUBLISH_BATCH).apply_async(args=[str(batch_id)], queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    except Exception:  # noqa: BLE001 - a broker outage must not fail the request that queued the rows
        logger.warning("could not send batch %s to the broker; the sweep will send its tasks", batch_id,
                       exc_info=True)


def fan_out(batch_id) -> int:
    """Send a message for every queued task of the batch, over one broker connection (a worker runs this)."""
    run_task = celery_task(RUN_TASK)
    ids = list(Task.objects.filter(batch_id=batch_id, status=Status.QUEUED).order_by("created", "pk")
               .values_list("pk", flat=True))
    with producer_or_acquire() as producer:
        for task_id in ids:
            run_task.apply_async(args=[str(task_id)], queue=settings.CELERY_TASK_DEFAULT_QUEUE, producer=producer)
    return len(ids)


def counts(batch: Batch) -> dict[str, int]:
    found = dict(Task.objects.filter(batch=batch).values_list("status").annotate(n=Count("pk")).order_by())
    return {status: found.get(status, 0) for status in Status.values}


def batch_json(batch: Batch) -> dict:
    by_status = counts(batch)
    finished = sum(by_status[s] for s in FINISHED)
    body = {
        "id": str(batch.pk), "name": batch.name, "created": batch.created.isoformat(), "total": batch.total,
        "counts": by_status, "done": round(finished / batch.total, 4) if batch.total else 1.0,
        "finished": batch.finished_at.isoformat() if batch.finished_at else None,
    }
    if batch.callback_url:
        body["callback"] = {"status": batch.callback_status or "pending", "attempts": batch.callback_attempts,
                            "error": batch.callback_error or None}
    return body


def cancel(batch: Batch) -> int:
    """Cancel every task of the batch still queued; the claimed ones run on. Returns how many."""
    now = timezone.now()
    cancelled = Task.objects.filter(batch=batch, status=Status.QUEUED).update(
        status=Status.CANCELLED, finished_at=now, updated=now)
    check_finished(batch.pk)
    return cancelled


def check_finished(batch_id) -> bool:
    """Mark the batch finished once none of its tasks is queued or running; the one process whose
    UPDATE does it sends the one callback."""
    if batch_id is None:
        return False
    if Task.objects.filter(batch_id=batch_id, status__in=[Status.QUEUED, Status.RUNNING]).exists():
        return False
    done = Batch.objects.filter(pk=batch_id, finished_at__isnull=True).update(finished_at=timezone.now())
    if done and Batch.objects.filter(pk=batch_id).exclude(callback_url="").exists():
        if settings.CELERY_TASK_ALWAYS_EAGER:
            # Eager Celery would deliver inside the request that finished the batch: a hanging host would hang it.
            deliver_on_lane(batch_id)
            return True
        try:
            celery_task(DELIVER_BATCH_CALLBACK).apply_async(args=[str(batch_id)],
                                                           queue=settings.CELERY_TASK_DEFAULT_QUEUE)
        except Exception:  # noqa: BLE001 - a callback never blocks or fails the work that caused it
            logger.warning("could not queue the callback of batch %s", batch_id, exc_info=True)
    return bool(done)


def deliver_on_lane(batch_id) -> None:
    """The embedded default (no broker): the batch's callback goes to its host's lane in this process."""
    url = Batch.objects.filter(pk=batch_id).values_list("callback_url", flat=True).first() or ""
    deliver_in_background(f"batch {batch_id}", lambda: post_callback(batch_id),
                          lambda: give_up_callback(batch_id), url=url,
                          due_again=lambda seconds: deliveries.due_again("batch", batch_id, seconds))


def post_callback(batch_id) -> bool:
    """POST the batch JSON, signed like a task's callback, to its callback URL once; record the attempt.

    True when delivered (or when nothing can be delivered: no batch, no URL, a host off the allow-list).
    """
    if not deliveries.claim("batch", batch_id):
        return True  # delivered already, given up, or another sender holds this try
    batch = Batch.objects.select_related("consumer").filter(pk=batch_id).first()
    if batch is None or not batch.callback_url:
        return True
    if not callback_allowed(batch.callback_url):
        _record(batch, "refused", _("The callback host is no longer on the allow-list."))
        deliveries.settled("batch", batch.pk)
        return True
    secret = batch.consumer.callback_secret if batch.consumer_id else ""
    headers = {"X-Gavel-Batch": str(batch.pk), deliveries.DELIVERY_HEADER: deliveries.delivery_id("batch", batch.pk)}
    delivered, error = send_callback(batch.callback_url, json.dumps(batch_json(batch)).encode("utf-8"),
                                     headers, secret, what=f"batch {batch.pk}")
    _record(batch, "delivered" if delivered else "failing", error)
    if delivered:
        deliveries.settled("batch", batch.pk)
    return delivered


def give_up_callback(batch_id) -> None:
    Batch.objects.filter(pk=batch_id).update(callback_status="failed", callback_due_at=None)


def _record(batch: Batch, status: str, error: str) -> None:
    Batch.objects.filter(pk=batch.pk).update(callback_attempts=F("callback_attempts") + 1, callback_status=status,
                                             callback_error=str(error)[:500])
