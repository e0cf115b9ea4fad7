"""The callback sweep in the embedded default, where no celery beat runs (issue 25, finding 11).

With a broker, celery beat runs `governance.sweep_callbacks` every `GAVEL_SWEEP_INTERVAL_SECONDS`. The
embedded default (eager Celery, `make run`) has no beat, so a callback left open by a restart of the
process would wait for ever. Here the server's own requests run it: a request that starts when the last
sweep is at least an interval old starts the sweep in a background thread (never on the request's path),
one at a time. `manage.py sweep_callbacks` runs it once from a shell or cron, and waits for its deliveries.
"""
from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import connections

from governance.work.tasks import sweep_callbacks

logger = logging.getLogger("gavel.queue")

_lock = threading.Lock()
_state = {"last": None, "running": False}  # monotonic time of the last start; a sweep in flight


def on_request(**_signal) -> None:
    """`request_started`: start the sweep when it is due (embedded default only; see the module)."""
    if not (settings.CELERY_TASK_ALWAYS_EAGER and settings.GAVEL_SWEEP_ON_REQUESTS):
        return
    now = time.monotonic()
    with _lock:
        last = _state["last"]
        if _state["running"] or (last is not None and now - last < settings.GAVEL_SWEEP_INTERVAL_SECONDS):
            return
        _state["last"], _state["running"] = now, True
    threading.Thread(target=_sweep, name="gavel-callback-sweep", daemon=True).start()


def _sweep() -> None:
    try:
        sweep_callbacks()
    except Exception:  # noqa: BLE001 - a sweep that fails is tried again at the next interval
        logger.warning("the callback sweep failed; it runs again after the next interval", exc_info=True)
    finally:
        _state["running"] = False
        connections.close_all()  # this thread's connections, not the request's


def forget() -> None:
    """As if no sweep had run in this process (tests)."""
    with _lock:
        _state["last"], _state["running"] = None, False
