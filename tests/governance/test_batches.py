"""Batches (SPEC 10.1): validated whole before anything is queued, progress, cancel, one callback."""
import json

import pytest

from governance.work import batches
from governance.work.callbacks import wait_until_idle
from governance.models import Batch, Consumer, Task
from tests.governance.test_security import receivers, verify  # noqa: F401  (fixtures)
from tests.governance.test_task_workers import CLEAN
from tests.governance.test_tasks_api import eager, receiver  # noqa: F401  (fixtures)
from tests.governance.test_task_workers import broker, workers, writers  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db


def item(number: int, **extra) -> dict:
    return {"kind": "queued_task", "configuration": "newsroom", "instruction": f"Write text {number}.", **extra}


def field_fill(number: int) -> dict:
    return {"kind": "field_fill", "configuration": "newsroom", "instruction": f"Describe page {number}.",
            "field": {"record": f"page:{number}", "name": "meta_description", "max_length": 300}}


@pytest.fixture
def post(api, django_capture_on_commit_callbacks):
    def send(body, run=True):
        with django_capture_on_commit_callbacks(execute=run):
            return api.post("/api/v1/batches", body, format="json")

    return send


def test_a_batch_is_202_with_its_progress_and_every_task_runs(api, post, eager, provider_server):
    provider_server.set_default({"text": CLEAN})
    response = post({"name": "Meta descriptions", "items": [field_fill(i) for i in range(3)] + [item(9)]})
    assert response.status_code == 202, response.content
    body = response.json()
    assert set(body) >= {"id", "name", "created", "total", "counts", "done", "finished"}
    assert body["name"] == "Meta descriptions" and body["total"] == 4
    after = api.get(f"/api/v1/batches/{body['id']}").json()
    assert after["counts"]["ready"] == 4 and after["done"] == 1.0 and after["finished"]
    assert len(provider_server.chat_requests) == 4
    listed = api.get(f"/api/v1/batches/{body['id']}/tasks?status=ready").json()
    assert listed["count"] == 4 and {t["field"]["record"] for t in listed["results"] if t["field"]} == {
        "page:0", "page:1", "page:2"}
    assert api.get("/api/v1/batches?finished=true").json()["count"] == 1
    assert api.get("/api/v1/batches?finished=false").json()["count"] == 0


def test_one_bad_item_is_400_naming_it_and_nothing_is_queued(api, post, provider_server):
    bad = {"kind": "field_fill", "configuration": "newsroom", "instruction": "Describe it."}  # no field
    response = post({"items": [item(0), item(1), bad]})
    assert response.status_code == 400
    assert "items[2].field" in response.json()["error"]["fields"]
    assert Task.objects.count() == Batch.objects.count() == 0 and provider_server.chat_requests == []


def test_an_unknown_configuration_names_its_item_and_nothing_is_queued(api, post):
    response = post({"items": [item(0), item(1, configuration="nowhere")]})
    assert response.status_code == 404
    assert "items[1].configuration" in response.json()["error"]["fields"]
    assert Task.objects.count() == Batch.objects.count() == 0


def test_more_than_10000_items_is_400(api, post):
    response = post({"items": [item(i) for i in range(10_001)]}, run=False)
    assert response.status_code == 400 and any(f.startswith("items") for f in response.json()["error"]["fields"])
    assert Task.objects.count() == 0


def test_cancel_stops_what_is_still_queued(api, post, monkeypatch, provider_server):
    monkeypatch.setattr(batches, "publish", lambda batch_id, ids: None)  # no worker has taken any yet
    body = post({"items": [item(i) for i in range(5)]}).json()
    first = Task.objects.filter(batch_id=body["id"]).order_by("created").first()
    Task.objects.filter(pk=first.pk).update(status="running")  # a worker claimed this one
    response = api.post(f"/api/v1/batches/{body['id']}/cancel")
    assert response.status_code == 200
    assert response.json()["counts"]["cancelled"] == 4 and response.json()["counts"]["running"] == 1
    assert response.json()["finished"] is None and response.json()["done"] == 0.8
    assert provider_server.chat_requests == []


def test_another_consumers_batch_is_404(api, post, make_consumer, configuration, monkeypatch):
    from rest_framework.test import APIClient

    monkeypatch.setattr(batches, "publish", lambda batch_id, ids: None)
    body = post({"items": [item(0)]}).json()
    _consumer, token = make_consumer("other-app", [configuration])
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    for response in (other.get(f"/api/v1/batches/{body['id']}"), other.get(f"/api/v1/batches/{body['id']}/tasks"),
                     other.post(f"/api/v1/batches/{body['id']}/cancel")):
        assert response.status_code == 404
    assert other.get("/api/v1/batches").json()["count"] == 0


@pytest.mark.django_db(transaction=True)
def test_one_callback_when_the_batch_has_finished_signed_off_the_request_path(api, post, eager, provider_server,
                                                                             receivers, settings):
    provider_server.set_default({"text": CLEAN})
    hook = receivers()
    settings.GAVEL_CALLBACK_HOSTS = ["127.0.0.1"]
    response = post({"items": [item(i) for i in range(3)], "callback_url": hook.url})
    assert response.status_code == 202
    assert wait_until_idle(30)  # in the embedded default the callback thread delivers it, not the request
    assert len(hook.raw) == 1  # one for the batch, not one per task
    sent = json.loads(hook.raw[0])
    assert sent["id"] == response.json()["id"] and sent["counts"]["ready"] == 3 and sent["done"] == 1.0
    secret = Consumer.objects.get(pk=api.consumer.pk).callback_secret
    assert verify(secret, hook.raw[0], hook.headers[0]["X-Gavel-Signature"])  # signed like a task's callback
    assert api.get(f"/api/v1/batches/{sent['id']}").json()["callback"]["status"] == "delivered"


@pytest.mark.django_db(transaction=True)
def test_a_batch_callback_never_follows_a_redirect(api, post, eager, provider_server, receivers, settings):
    provider_server.set_default({"text": CLEAN})
    elsewhere = receivers()
    redirecting = receivers(status=302, location=elsewhere.url)
    settings.GAVEL_CALLBACK_HOSTS = [f"127.0.0.1:{redirecting.port}"]
    response = post({"items": [item(0)], "callback_url": redirecting.url})
    assert response.status_code == 202
    assert wait_until_idle(30)
    assert elsewhere.raw == [] and len(redirecting.raw) == 2  # GAVEL_CALLBACK_MAX_ATTEMPTS of the fixture
    callback = api.get(f"/api/v1/batches/{response.json()['id']}").json()["callback"]
    assert callback["status"] == "failed" and "redirect" in callback["error"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_real_workers_run_a_batch_sent_as_one_message_and_finish_it(workers, writers, provider_server):
    """The batch is published as one message; a worker sends its tasks' messages; all finish once."""
    from tests.governance.test_task_workers import requests_per_task, wait_until

    consumer, clean, _ = writers
    provider_server.set_default({"text": CLEAN})
    workers.start(1)
    data = {"name": "catalogue", "items": [
        {"kind": "queued_task", "configuration": clean.identifier, "instruction": f"Task number {n}: write."}
        for n in range(40)]}
    batch = batches.submit(data, consumer=consumer, actor="test")  # committed at once (transaction=True)
    wait_until(lambda: Batch.objects.get(pk=batch.pk).finished_at is not None, 120, workers, "the batch to finish")
    body = batches.batch_json(Batch.objects.get(pk=batch.pk))
    assert body["counts"]["ready"] == 40 and body["done"] == 1.0
    assert set(requests_per_task(provider_server).values()) == {1} and len(requests_per_task(provider_server)) == 40
