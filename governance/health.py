"""GET /healthz: the database and the broker are reachable (SPEC §11.4), and how the cache is.

503 when the database or the broker is down. A cache that is down is reported and makes the status
`degraded` with a 200: screenings still run (the throttle counts in process memory meanwhile), so a
load balancer should keep the instance.

Kept light on purpose: nothing on this path imports litellm or Celery.
"""
import time
from urllib.parse import urlparse

from django.conf import settings
from django.db import connection
from django.http import JsonResponse


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
