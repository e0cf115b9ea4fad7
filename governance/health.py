"""GET /healthz: the database and the broker are reachable (SPEC §11.4), and how the cache is.

503 when the database or the broker is down. A cache that is down is reported and makes the status
`degraded` with a 200: screenings still run (the throttle counts in process memory meanwhile), so a
load balancer should keep the instance.

Kept light on purpose: nothing on this path imports litellm or Celery.
"""
import logging
import time
from urllib.parse import urlparse

from django.conf import settings
from django.db import connection
from django.http import JsonResponse

from governance.middleware import error_response, is_outage

logger = logging.getLogger("gavel.request")


def _database() -> dict:
    started = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "not reachable"; the reason is logged, not leaked
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True, "ms": round((time.monotonic() - started) * 1000, 1)}


def _broker() -> dict:
    url = settings.CELERY_BROKER_URL
    if not url:
        return {"ok": True, "mode": "eager"}
    scheme = urlparse(url).scheme
    if scheme not in ("redis", "rediss"):
        return {"ok": True, "mode": scheme, "note": "not probed"}
    started = time.monotonic()
    try:
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        client.ping()
        client.close()
    except Exception as exc:
        return {"ok": False, "mode": "redis", "error": type(exc).__name__}
    return {"ok": True, "mode": "redis", "ms": round((time.monotonic() - started) * 1000, 1)}


def _cache() -> dict:
    from django.core.cache import cache

    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    started = time.monotonic()
    try:
        cache.set("gavel:healthz", 1, 10)
        if cache.get("gavel:healthz") != 1 and backend != "DummyCache":
            return {"ok": False, "backend": backend, "error": "not_stored"}
    except Exception as exc:
        return {"ok": False, "backend": backend, "error": type(exc).__name__}
    return {"ok": True, "backend": backend, "ms": round((time.monotonic() - started) * 1000, 1)}


def healthz(request):
    database, broker, cache = _database(), _broker(), _cache()
    ok = database["ok"] and broker["ok"]
    status = ("ok" if cache["ok"] else "degraded") if ok else "unavailable"
    return JsonResponse({"status": status, "database": database, "broker": broker, "cache": cache},
                        status=200 if ok else 503)


class HealthProbeMiddleware:
    """Answers GET/HEAD /healthz and GET /metrics before CommonMiddleware's Host check: a load balancer
    probes, and Prometheus scrapes, each instance by its address over plain HTTP, and must not get a 400
    (`ALLOWED_HOSTS=gavel.example.org`) or a redirect (`GAVEL_HTTPS=1`: SecurityMiddleware, before this one,
    exempts both paths, SECURE_REDIRECT_EXEMPT, and adds its headers and the Content-Security-Policy here as
    to every other answer).

    Safe to skip the Host check for these two: their answers build no URL from the Host header (what
    ALLOWED_HOSTS guards) and set no cookie; /healthz holds no secret (only whether the database, broker and
    cache answer) and /metrics keeps its own guard (loopback, else GAVEL_METRICS_TOKEN). Every other path,
    /healthz/ with a slash or another method included, goes through the whole stack as before.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info
        if path == "/healthz" and request.method in ("GET", "HEAD"):
            view = healthz
        elif path == "/metrics" and request.method == "GET":
            from governance.evidence.scrape import metrics_view as view  # prometheus_client: only when scraped
        else:
            return self.get_response(request)
        try:
            return view(request)
        except Exception as exc:  # as the views' errors are answered: JSON, the trace in the log only
            outage = is_outage(exc)
            logger.error("%s failed (request %s)", path, getattr(request, "request_id", "-"), exc_info=not outage)
            return error_response(503 if outage else 500, path)
