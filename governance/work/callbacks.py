"""Callback signing and, in the embedded default, delivery off the request path (SPEC §10).

Every callback carries `X-Gavel-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with the
consumer's callback secret over "<t>." + the raw body (docs/tasks.md shows a receiver's check).
With eager Celery (no broker) a delivery would run inside the request that finished the task, so
it is handed to a background thread of this process instead, with the same retries and backoff:
one thread per callback host, so a host that hangs delays only its own callbacks.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import queue as queues
import threading
import time
from urllib.parse import urlsplit

from django.conf import settings

from governance.work import deliveries

logger = logging.getLogger("gavel.queue")

SIGNATURE_HEADER = "X-Gavel-Signature"


def signature(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The X-Gavel-Signature value for `body`, signed now (or at `timestamp`)."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    digest = hmac.new(secret.encode("utf-8"), f"{t}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={digest}"


# --- eager mode: one lane (a thread and its queue) per callback host ---
# A host that hangs or fails holds only its own lane, its retries sleeping there: other hosts'
# callbacks (other consumers') go on at once. An idle lane's thread ends after LANE_IDLE_SECONDS.
LANE_IDLE_SECONDS = 30.0
_lanes: dict[str, queues.Queue] = {}
_lanes_lock = threading.Lock()
_pending = 0
_pending_changed = threading.Condition(_lanes_lock)


def deliver_in_background(task_id, status: str, *, url: str = "") -> None:
    """Queue one task's delivery (with its retries) on the lane of its callback host."""
    _queue_job(("task", str(task_id), status), url)


def deliver_batch_in_background(batch_id, *, url: str = "") -> None:
    """Queue one batch's delivery (with its retries) on the lane of its callback host."""
    _queue_job(("batch", str(batch_id), None), url)


def lane_key(url: str) -> str:
    parts = urlsplit(url or "")
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{(parts.hostname or '').lower()}:{port or ''}"


def _queue_job(job: tuple, url: str) -> None:
    global _pending
    key = lane_key(url)
    with _lanes_lock:
        _pending += 1
        lane = _lanes.get(key)
        if lane is None:
            lane = _lanes[key] = queues.Queue()
            threading.Thread(target=_work, args=(key, lane), name=f"gavel-callbacks-{key}", daemon=True).start()
        lane.put(job)


def wait_until_idle(timeout: float = 30.0) -> bool:
    """Whether every queued delivery has finished within `timeout` seconds (tests, a clean shutdown)."""
    deadline = time.monotonic() + timeout
    with _pending_changed:
        while _pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _pending_changed.wait(min(left, 0.1))
    return True


def deliver_with_retries(task_id: str, status: str | None, kind: str = "task") -> bool:
    from governance.work import batches
    from governance.work import queue
    from governance.models import Batch

    post = (lambda: queue.post_callback(task_id, status)) if kind == "task" else (lambda: batches.post_callback(task_id))
    attempts = max(settings.GAVEL_CALLBACK_MAX_ATTEMPTS, 1)
    for attempt in range(attempts):
        if post():
            return True
        if attempt + 1 < attempts:
            countdown = settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS * (2 ** attempt)
            deliveries.due_again(kind, task_id, countdown)
            time.sleep(countdown)
    if kind == "task":
        queue.give_up_callback(task_id)
    else:
        Batch.objects.filter(pk=task_id).update(callback_status="failed", callback_due_at=None)
    return False


def _work(key: str, lane: queues.Queue) -> None:
    global _pending
    from django.db import close_old_connections, connection

    while True:
        try:
            kind, object_id, status = lane.get(timeout=LANE_IDLE_SECONDS)
        except queues.Empty:
            with _lanes_lock:
                if lane.empty():
                    del _lanes[key]
                    return
            continue
        try:
            close_old_connections()
            deliver_with_retries(object_id, status, kind)
        except Exception:  # noqa: BLE001 - one failing delivery must not stop the lane
            logger.exception("callback of %s %s could not be delivered", kind, object_id)
        finally:
            connection.close()
            with _pending_changed:
                _pending -= 1
                _pending_changed.notify_all()
