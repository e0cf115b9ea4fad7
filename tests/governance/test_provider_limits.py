"""Provider limits (SPEC 2.1, 10.1): max_concurrency, requests_per_minute and tokens_per_minute hold
across processes; a completion over a limit waits up to its timeout, then 429 provider_busy; a queued
task over a limit waits and is sent again — never lost, never a 429 at the provider."""
import os
import threading
import time

import pytest

from governance.runs import limits
from governance.models import Configuration, Provider, Task
from tests.governance.test_task_workers import broker, workers, writers  # noqa: F401  (fixtures)

CLEAN = ("Our planning tool finds a free hour for the whole team, books a room that fits and sends the agenda "
         "before the meeting starts, so nobody has to ask twice and the week keeps its shape.")


def _redis_cache() -> bool:
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    return isinstance(caches["default"], RedisCache)


@pytest.fixture(params=["redis", "local"])
def counts(request, monkeypatch):
    """The rules under test, with Redis (the cache's server) and in one process."""
    if request.param == "redis":
        if not _redis_cache():
            if os.environ.get("GAVEL_REQUIRE_SERVICES"):
                pytest.fail("CACHE_URL must name Redis")
            pytest.skip("CACHE_URL does not name Redis")
        return limits._counts()
    local = limits.LocalCounts()
    monkeypatch.setattr(limits, "_counts", lambda: local)
    return local


def _provider(**values) -> Provider:
    return Provider(name=f"p-{time.monotonic_ns()}", route="openai", timeout=5, **values)


def test_no_limit_takes_no_place(counts):
    provider = _provider()
    assert limits.acquire(provider) is limits.NO_LIMIT


def test_at_most_max_concurrency_at_once_and_a_released_place_comes_back(db, counts):
    provider = _provider(max_concurrency=2)
    first, second = limits.acquire(provider), limits.acquire(provider)
    with pytest.raises(limits.ProviderBusy) as busy:
        limits.acquire(provider)
    assert busy.value.code == "provider_busy" and busy.value.reason == "max_concurrency"
    first.release()
    third = limits.acquire(provider)
    second.release()
    third.release()


def test_a_place_never_released_expires(db, counts):
    provider = _provider(max_concurrency=1)
    limits.acquire(provider, slot_seconds=1)  # its process "died": never released
    with pytest.raises(limits.ProviderBusy):
        limits.acquire(provider)
    limits.acquire(provider, wait_up_to=3).release()


def test_requests_per_minute_is_a_sliding_window(db, counts, settings):
    settings.GAVEL_LIMIT_WINDOW_SECONDS = 2
    provider = _provider(requests_per_minute=3)
    started = time.monotonic()
    for _ in range(3):
        limits.acquire(provider).release()
    with pytest.raises(limits.ProviderBusy) as busy:
        limits.acquire(provider)
    assert busy.value.reason == "requests_per_minute" and 0 < busy.value.wait <= 2.1
    limits.acquire(provider, wait_up_to=3).release()  # waits for the window to slide
    assert time.monotonic() - started >= 1.9


def test_tokens_per_minute_counts_what_the_provider_reported(db, counts, settings):
    settings.GAVEL_LIMIT_WINDOW_SECONDS = 2
    provider = _provider(tokens_per_minute=100)
    slot = limits.acquire(provider, tokens=10)
    slot.release(90)  # the estimate was 10; the provider counted 90
    with pytest.raises(limits.ProviderBusy) as busy:
        limits.acquire(provider, tokens=20)
    assert busy.value.reason == "tokens_per_minute"
    limits.acquire(provider, tokens=10).release(10)  # 90 + 10 fits


def test_a_completion_over_the_limit_waits_its_timeout_then_answers_429_provider_busy(api, configuration, provider,
                                                                                      provider_server):
    Provider.objects.filter(pk=provider.pk).update(max_concurrency=1)
    provider.refresh_from_db()
    Configuration.objects.filter(pk=configuration.pk).update(timeout=1)
    provider_server.set_default({"text": CLEAN})
    held = limits.acquire(provider)  # another process holds the one place
    started = time.monotonic()
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    waited = time.monotonic() - started
    assert response.status_code == 429, response.content
    assert response.json()["error"]["code"] == "provider_busy"
    assert int(response["Retry-After"]) >= 1
    assert 0.9 <= waited < 5
    assert provider_server.chat_requests == []  # the provider was never asked
    held.release()
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    assert response.status_code == 200, response.content


def test_a_completion_waits_for_a_place_that_frees_up_in_time(api, provider, provider_server):
    Provider.objects.filter(pk=provider.pk).update(max_concurrency=1)
    provider.refresh_from_db()
    provider_server.set_default({"text": CLEAN})
    held = limits.acquire(provider)
    threading.Timer(0.5, held.release).start()
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    assert response.status_code == 200, response.content
    assert len(provider_server.chat_requests) == 1


# --- across worker processes (Redis broker and cache, real workers) ---
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_max_concurrency_holds_across_two_worker_processes_with_64_tasks_in_flight(workers, writers,
                                                                                 provider_server):
    from tests.governance.test_task_workers import requests_per_task, submit, wait_until

    if not _redis_cache():
        pytest.fail("the limits are shared through Redis: set CACHE_URL") if os.environ.get(
            "GAVEL_REQUIRE_SERVICES") else pytest.skip("CACHE_URL does not name Redis")
    consumer, clean, _ = writers
    Provider.objects.filter(pk=clean.provider_id).update(max_concurrency=5)
    provider_server.set_default({"text": CLEAN, "delay": 0.3})
    workers.start(2, GAVEL_WORKER_CONCURRENCY=32)  # 64 generations in flight across the two
    ids = [submit(consumer, clean, number).pk for number in range(64)]
    ready = Task.objects.filter(pk__in=ids, status="ready")
    wait_until(lambda: ready.count() == 64, 180, workers, "64 tasks under max_concurrency 5")
    assert provider_server.max_in_flight == 5  # the limit was reached, and never passed
    counts = requests_per_task(provider_server)
    assert sorted(counts) == list(range(64)) and set(counts.values()) == {1}  # none lost, none twice
    assert set(Task.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {1}  # waiting is no attempt
    assert all(r.response.get("status", 200) == 200 for r in provider_server.chat_requests)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_requests_per_minute_60_no_minute_holds_more_than_60(workers, writers, provider_server):
    """The real 60-second window: 75 tasks at once; 60 go in the first minute, 15 after it slid."""
    from tests.governance.test_task_workers import requests_per_task, submit, wait_until

    if not _redis_cache():
        pytest.fail("the limits are shared through Redis: set CACHE_URL") if os.environ.get(
            "GAVEL_REQUIRE_SERVICES") else pytest.skip("CACHE_URL does not name Redis")
    consumer, clean, _ = writers
    Provider.objects.filter(pk=clean.provider_id).update(requests_per_minute=60)
    provider_server.set_default({"text": CLEAN})
    workers.start(2)
    ids = [submit(consumer, clean, number).pk for number in range(75)]
    ready = Task.objects.filter(pk__in=ids, status="ready")
    wait_until(lambda: ready.count() == 75, 200, workers, "75 tasks under 60 requests per minute")
    times = sorted(r.at for r in provider_server.chat_requests)
    assert len(times) == 75
    # Every window of 60 seconds, starting at any request: at most 60 requests.
    assert max(sum(1 for t in times if start <= t < start + 60) for start in times) <= 60
    assert times[60] - times[0] >= 59.5  # the 61st waited for the window
    counts = requests_per_task(provider_server)
    assert set(counts.values()) == {1}
