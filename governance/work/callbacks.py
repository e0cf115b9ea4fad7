"""Callbacks on the wire (SPEC §10): the allow-list, signing, one POST, and, in the embedded
default, delivery off the request path.

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
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

logger = logging.getLogger("gavel.queue")

SIGNATURE_HEADER = "X-Gavel-Signature"


def signature(secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The X-Gavel-Signature value for `body`, signed now (or at `timestamp`)."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    digest = hmac.new(secret.encode("utf-8"), f"{t}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={digest}"


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
        allowed_host, allowed_port = host_entry(entry)
        if host == allowed_host and (allowed_port is None or port == allowed_port):
            return True
    return False


def host_entry(entry: str) -> tuple[str, int | None]:
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


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer, never an instruction: following it would reach hosts off the allow-list."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # urllib then raises HTTPError with the 3xx status


_OPENER = urllib.request.build_opener(_NoRedirects)


def _explicitly_allowed(url: str) -> bool:
    """Whether the URL's host and port are named together on the allow-list (not a bare host, any port)."""
    return callback_allowed(url, [entry for entry in settings.GAVEL_CALLBACK_HOSTS
                                  if host_entry(entry)[1] is not None])


def send_callback(url: str, payload: bytes, headers: dict, secret: str, *, what: str) -> tuple[bool, str]:
    """POST `payload`, signed with `secret`, to `url` once: (delivered, the error a consumer may read).

    Redirects are never followed. What the consumer reads says less when the URL reached a port the
    allow-list does not name: "refused" against "HTTP 404" would map a host's ports for anyone who
    can submit a task. The log names `what` (a task or a batch), the host and the status, never text.
    """
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


# --- eager mode: one lane (a thread and its queue) per callback host ---
# A host that hangs or fails holds only its own lane, its retries sleeping there: other hosts'
# callbacks (other consumers') go on at once. An idle lane's thread ends after LANE_IDLE_SECONDS.
LANE_IDLE_SECONDS = 30.0
_lanes: dict[str, queues.Queue] = {}
_lanes_lock = threading.Lock()
_pending = 0
_pending_changed = threading.Condition(_lanes_lock)


def deliver_in_background(what: str, post, give_up, *, url: str = "", due_again=None) -> None:
    """Queue one delivery on the lane of its callback host: `post()` is one attempt (True when
    delivered), retried with backoff; `due_again(seconds)` records when the next attempt is due (so the
    sweep leaves it alone meanwhile); `give_up()` records that every attempt failed. `what` names the
    task or batch in the log."""
    global _pending
    key = lane_key(url)
    with _lanes_lock:
        _pending += 1
        lane = _lanes.get(key)
        if lane is None:
            lane = _lanes[key] = queues.Queue()
            threading.Thread(target=_work, args=(key, lane), name=f"gavel-callbacks-{key}", daemon=True).start()
        lane.put((what, post, give_up, due_again))


def lane_key(url: str) -> str:
    parts = urlsplit(url or "")
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{(parts.hostname or '').lower()}:{port or ''}"


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


def deliver_with_retries(post, give_up, due_again=None) -> bool:
    attempts = max(settings.GAVEL_CALLBACK_MAX_ATTEMPTS, 1)
    for attempt in range(attempts):
        if post():
            return True
        if attempt + 1 < attempts:
            countdown = settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS * (2 ** attempt)
            if due_again is not None:
                due_again(countdown)
            time.sleep(countdown)
    give_up()
    return False


def _work(key: str, lane: queues.Queue) -> None:
    global _pending
    from django.db import close_old_connections, connection

    while True:
        try:
            what, post, give_up, due_again = lane.get(timeout=LANE_IDLE_SECONDS)
        except queues.Empty:
            with _lanes_lock:
                if lane.empty():
                    del _lanes[key]
                    return
            continue
        try:
            close_old_connections()
            deliver_with_retries(post, give_up, due_again)
        except Exception:  # noqa: BLE001 - one failing delivery must not stop the lane
            logger.exception("callback of %s could not be delivered", what)
        finally:
            connection.close()
            with _pending_changed:
                _pending -= 1
                _pending_changed.notify_all()
