"""Fault: Redis down, then back (a private redis-server; the shared one is never touched).

While the cache is down, screenings are served (the throttle counts in process memory, a
warning is logged), /healthz says `degraded`; the broker down makes /healthz 503. When Redis
is back, the shared count resumes and /healthz is `ok`, with no restart of Gavel.
"""
import pytest
import redis
from django.test import override_settings

from governance.api import auth
from tests.faults.services import PrivateRedis

pytestmark = pytest.mark.django_db

TEXT = "A quiet harbour at dawn."


@pytest.fixture
def private_redis(tmp_path):
    server = PrivateRedis(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def on_private_redis(private_redis, monkeypatch):
    caches = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": f"{private_redis.url}/0",
                          "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}}}
    monkeypatch.setattr(auth, "SHARED_CACHE_RETRY", 0.2)
    with override_settings(CACHES=caches, CELERY_BROKER_URL=f"{private_redis.url}/1"):
        yield private_redis
    auth._shared_cache_down_until = 0.0
    auth._fallback_cache.clear()


def throttle_keys(server) -> list:
    return redis.Redis.from_url(f"{server.url}/0").keys("*throttle_consumer*")


def screen(api):
    return api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json")


def test_redis_down_then_back(api, client, on_private_redis):
    import time

    server = on_private_redis
    assert screen(api).status_code == 200
    assert throttle_keys(server), "the throttle counts in the shared cache while it is up"
    assert client.get("/healthz").json()["status"] == "ok"

    server.stop()
    for _ in range(3):
        response = screen(api)
        assert response.status_code == 200, response.content
        assert response.json()["outcome"] == "allowed"
    health = client.get("/healthz")
    assert health.status_code == 503  # the broker is this Redis too
    assert health.json()["cache"]["ok"] is False and health.json()["broker"]["ok"] is False

    server.start()  # an empty Redis on the same port, as after a restart without persistence
    time.sleep(0.3)  # the throttle retries the shared cache after SHARED_CACHE_RETRY (0.2 s here)
    assert screen(api).status_code == 200
    assert throttle_keys(server), "the shared count resumed without a restart of Gavel"
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
