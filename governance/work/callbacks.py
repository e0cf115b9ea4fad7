"""Callback signing and, in the embedded default, delivery off the request path (SPEC §10).

Every callback carries `X-Gavel-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with the
consumer's callback secret over "<t>." + the raw body (docs/tasks.md shows a receiver's check).
With eager Celery (no broker) a delivery would run inside the request that finished the task, so
it is handed to one background thread of this process instead, with the same retries and backoff.
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import queue as queues
import threading
import time

from django.conf import settings

logger = logging.getLogger("gavel.queue")

SIGNATURE_HEADER = "X-Gavel-Signature"


def signature(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The X-Gavel-Signature value for `body`, signed now (or at `timestamp`)."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    digest = hmac.new(secret.encode("utf-8"), f"{t}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={digest}"


# --- eager mode: one background thread per process ---
_jobs: queues.Queue = queues.Queue()
_started = threading.Lock()
_thread: threading.Thread | None = None


def deliver_in_background(task_id, status: str) -> None:
    """Queue one task's delivery (with its retries) for this process's callback thread."""
    _queue_job(("task", str(task_id), status))


def deliver_batch_in_background(batch_id) -> None:
    """Queue one batch's delivery (with its retries) for this process's callback thread."""
    _queue_job(("batch", str(batch_id), None))


def _queue_job(job: tuple) -> None:
    global _thread
    with _started:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="gavel-callbacks", daemon=True)
            _thread.start()
    _jobs.put(job)


def wait_until_idle(timeout: float = 30.0) -> bool:
    """Whether every queued delivery has finished within `timeout` seconds (tests, a clean shutdown)."""
    deadline = time.monotonic() + timeout
    while _jobs.unfinished_tasks:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
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
            time.sleep(settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS * (2 ** attempt))
    if kind == "task":
        queue.give_up_callback(task_id)
    else:
        Batch.objects.filter(pk=task_id).update(callback_status="failed")
    return False


def _work() -> None:
    from django.db import close_old_connections, connection

    while True:
        kind, object_id, status = _jobs.get()
        try:
            close_old_connections()
            deliver_with_retries(object_id, status, kind)
        except Exception:  # noqa: BLE001 - one failing delivery must not stop the thread
            logger.exception("callback of %s %s could not be delivered", kind, object_id)
        finally:
            connection.close()
            _jobs.task_done()
