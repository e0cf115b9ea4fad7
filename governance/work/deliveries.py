"""Callbacks that survive faults (SPEC §10): one delivery id per callback, a claim per try, a sweep.

A callback is *open* while its row says so (`callback_status` blank: pending, or `failing`: another
try follows). Its message lives in the broker, and a broker restart without persistence, or a worker
killed between finishing a task and queueing its callback, loses it. The row stays the source of
truth, as for tasks: `sweep_callbacks` (celery beat, every `GAVEL_SWEEP_INTERVAL_SECONDS`) sends an
open callback again once it is `GAVEL_CALLBACK_SWEEP_GRACE_SECONDS` past its due time.

Two senders of one callback (the sweep's message and a message kombu gives back late) never post at
the same time and a delivered callback is never posted again: each try first *claims* the row with
one conditional UPDATE that holds it for the length of one try. What remains (a worker dying after
the receiver answered 2xx but before the row says delivered) the receiver recognises: every try of
one callback carries the same `X-Gavel-Delivery` id.
"""
from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from governance.models import Batch, Task

logger = logging.getLogger("gavel.queue")

DELIVERY_HEADER = "X-Gavel-Delivery"
OPEN = ("", "failing")
# A retry's message may be handed over a little before its due time (clocks of two hosts, ETA rounding).
EARLY_SECONDS = 2
_NAMESPACE = uuid.UUID("6f1d3c52-6a4e-4f0e-9a51-3c1b8e0f2a77")
TASK_STATUSES = ("ready", "blocked", "failed", "accepted", "rejected")


def delivery_id(kind: str, object_id, status: str | None = None) -> str:
    """The same id on every try of one callback: a task's per status it reports, a batch's once."""
    return str(uuid.uuid5(_NAMESPACE, f"{kind}:{object_id}:{status or ''}"))


def hold_seconds() -> float:
    """How long one try holds its callback: the receiver's timeout and a margin."""
    return float(settings.GAVEL_CALLBACK_TIMEOUT) + 30.0


def grace_seconds() -> float:
    return float(settings.GAVEL_CALLBACK_SWEEP_GRACE_SECONDS)


def _model(kind: str):
    return Task if kind == "task" else Batch


def opened(kind: str, object_id) -> None:
    """A new callback of this task or batch is due now (it reached a status its consumer is told about)."""
    _model(kind).objects.filter(pk=object_id).update(callback_status="", callback_due_at=timezone.now())


def claim(kind: str, object_id) -> bool:
    """Whether this process may send the callback now; if so, no other sender may for one try's length."""
    now = timezone.now()
    free = Q(callback_due_at__isnull=True) | Q(callback_due_at__lte=now + timedelta(seconds=EARLY_SECONDS))
    rows = _model(kind).objects.filter(Q(pk=object_id), Q(callback_status__in=OPEN), free)
    return rows.update(callback_due_at=now + timedelta(seconds=hold_seconds())) == 1


def due_again(kind: str, object_id, countdown: float) -> None:
    """The next try of a failing callback is due in `countdown` seconds."""
    _model(kind).objects.filter(pk=object_id, callback_status="failing").update(
        callback_due_at=timezone.now() + timedelta(seconds=countdown))


def settled(kind: str, object_id) -> None:
    """The callback is delivered, refused or given up: nothing holds it any more."""
    _model(kind).objects.filter(pk=object_id).update(callback_due_at=None)


def _lost(model, reference: str, now=None, limit: int = 1000) -> list:
    """Open callbacks of `model` past their due time (or `reference`, when none) and the grace period,
    each marked due again now as it is taken: one conditional UPDATE per row, so of two sweeps at once
    only one sends it, and later sweeps wait a grace period for the message sent now."""
    now = now or timezone.now()
    late = now - timedelta(seconds=grace_seconds())
    lost = Q(callback_due_at__lt=late) | Q(callback_due_at__isnull=True, **{f"{reference}__lt": late})
    rows = model.objects.filter(callback_status__in=OPEN).exclude(callback_url="").filter(lost)
    if model is Task:
        rows = rows.filter(status__in=TASK_STATUSES)
    else:
        rows = rows.filter(finished_at__isnull=False)
    taken = []
    for row in rows.values("pk", *(["status"] if model is Task else []))[:limit]:
        if model.objects.filter(Q(pk=row["pk"]), Q(callback_status__in=OPEN), lost).update(callback_due_at=now):
            taken.append(row)
    return taken


def lost_task_callbacks(now=None, limit: int = 1000) -> list[tuple[str, str]]:
    """(task id, status) of open callbacks whose message may be lost, taken for sending again."""
    return [(str(row["pk"]), row["status"]) for row in _lost(Task, "updated", now, limit)]


def lost_batch_callbacks(now=None, limit: int = 1000) -> list[str]:
    """Ids of finished batches whose open callback's message may be lost, taken for sending again."""
    return [str(row["pk"]) for row in _lost(Batch, "finished_at", now, limit)]


def unfinished_batches(now=None, limit: int = 100) -> list[str]:
    """Batches not marked finished, older than the grace period: their last task's worker may have died
    after finishing the task and before marking the batch (the sweep looks again)."""
    now = now or timezone.now()
    rows = Batch.objects.filter(finished_at__isnull=True, created__lt=now - timedelta(seconds=grace_seconds()))
    return [str(pk) for pk in rows.values_list("pk", flat=True)[:limit]]
