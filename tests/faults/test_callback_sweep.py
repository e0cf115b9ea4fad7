"""Callbacks are never lost and never sent twice to the receiver (issue 25, findings 11 and 12).

The row is the callback's source of truth: a message lost with a broker restart or a killed worker
is sent again by the callback sweep; every try of one callback carries the same delivery id; a
callback that is delivered or held by another sender is not posted again. In the embedded default
one host that hangs holds only its own callbacks. The same with a real worker, a SIGKILL and a Redis
restart: tests/faults/test_callbacks_under_faults.py.
"""
import hashlib
import hmac
import json
import socket
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone

from governance.models import Batch, Task
from governance.work import deliveries, queue
from governance.work.callbacks import wait_until_idle

pytestmark = pytest.mark.django_db(transaction=True)


class Receiver:
    """A callback endpoint on 127.0.0.1 that answers the statuses it is given, then 200, and keeps headers."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.received: list[tuple[dict, dict, bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append((dict(self.headers), json.loads(raw), raw))
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/gavel"

    def ids(self) -> list[str]:
        return [headers["X-Gavel-Delivery"] for headers, _body, _raw in self.received]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def eager(settings):
    from governance.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    settings.CELERY_TASK_ALWAYS_EAGER = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def hooks(settings, eager):
    settings.GAVEL_CALLBACK_HOSTS = ["127.0.0.1"]
    settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS = 0
    settings.GAVEL_CALLBACK_SWEEP_GRACE_SECONDS = 60
    made = []

    def make(statuses=()):
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    assert wait_until_idle(30)
    for receiver in made:
        receiver.close()


def finished_task(url: str, consumer=None, *, minutes_ago: float = 5, status="ready") -> Task:
    """A task a worker finished `minutes_ago`, whose callback message never reached the broker."""
    task = Task.objects.create(kind="queued_task", configuration="newsroom", status=status, outcome="allowed",
                               answer="Done.", callback_url=url, consumer=consumer, finished_at=timezone.now())
    Task.objects.filter(pk=task.pk).update(updated=timezone.now() - timedelta(minutes=minutes_ago))
    return task


def test_a_callback_whose_message_was_lost_is_sent_by_the_sweep_once(hooks, make_consumer):
    from governance.work.tasks import sweep_callbacks

    hook = hooks()
    consumer, _token = make_consumer("hook-app")
    lost = finished_task(hook.url, consumer)
    recent = finished_task(hook.url, consumer, minutes_ago=0)  # its message may still be on its way

    assert sweep_callbacks() == 1
    assert wait_until_idle(30)  # without a broker, on its host's lane
    assert [body["id"] for _h, body, _r in hook.received] == [str(lost.pk)]
    headers, _body, raw = hook.received[0]
    assert headers["X-Gavel-Delivery"] == deliveries.delivery_id("task", lost.pk, "ready")
    t, v1 = (part.split("=", 1)[1] for part in headers["X-Gavel-Signature"].split(","))
    assert v1 == hmac.new(consumer.callback_secret.encode(), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    row = Task.objects.get(pk=lost.pk)
    assert (row.callback_status, row.callback_attempts, row.callback_due_at) == ("delivered", 1, None)

    assert sweep_callbacks() == 0  # delivered: never again
    assert len(hook.received) == 1
    assert Task.objects.get(pk=recent.pk).callback_status == ""


def test_a_failing_callback_whose_retry_was_lost_is_sent_again_with_the_same_delivery_id(hooks, settings):
    from governance.work.tasks import sweep_callbacks

    hook = hooks([503])
    task = finished_task(hook.url)
    assert queue.post_callback(task.pk, "ready") is False  # the first try; its retry message is then lost
    deliveries.due_again("task", task.pk, 10)
    assert sweep_callbacks() == 0  # not yet past its due time and the grace period
    Task.objects.filter(pk=task.pk).update(callback_due_at=timezone.now() - timedelta(minutes=2))
    assert sweep_callbacks() == 1
    assert wait_until_idle(30)
    assert len(hook.received) == 2 and len(set(hook.ids())) == 1
    assert Task.objects.get(pk=task.pk).callback_status == "delivered"


def test_a_callback_held_by_another_sender_or_delivered_is_not_posted_again(hooks):
    hook = hooks()
    task = finished_task(hook.url)
    assert deliveries.claim("task", task.pk)  # another worker is sending it right now
    assert queue.post_callback(task.pk, "ready") is True and hook.received == []
    Task.objects.filter(pk=task.pk).update(callback_due_at=None)
    assert queue.post_callback(task.pk, "ready") is True and len(hook.received) == 1
    assert queue.post_callback(task.pk, "ready") is True and len(hook.received) == 1  # a late duplicate


def test_each_callback_of_a_task_has_its_own_delivery_id_kept_over_its_retries(hooks):
    hook = hooks([500])
    task = finished_task(hook.url)
    queue.notify(task.pk)
    assert wait_until_idle(30)
    Task.objects.filter(pk=task.pk).update(status="accepted")
    queue.notify(task.pk)  # the review's callback is a new one, though the first was delivered
    assert wait_until_idle(30)
    ids = hook.ids()
    assert [body["status"] for _h, body, _r in hook.received] == ["ready", "ready", "accepted"]
    assert ids[0] == ids[1] != ids[2]


def test_a_batch_whose_last_worker_died_before_marking_it_is_finished_and_called_back(hooks):
    from governance.work.tasks import sweep_callbacks

    hook = hooks()
    batch = Batch.objects.create(name="lost", total=1, callback_url=hook.url)
    Batch.objects.filter(pk=batch.pk).update(created=timezone.now() - timedelta(minutes=5))
    Task.objects.create(kind="queued_task", configuration="newsroom", status="ready", batch=batch)
    sweep_callbacks()  # marks it finished and (eager) sends its one callback in the background
    assert wait_until_idle(30)
    assert Batch.objects.get(pk=batch.pk).finished_at is not None
    assert hook.ids() == [deliveries.delivery_id("batch", batch.pk)]
    Batch.objects.filter(pk=batch.pk).update(finished_at=timezone.now() - timedelta(minutes=5))
    assert sweep_callbacks() == 0 and len(hook.received) == 1


def test_celery_beat_runs_the_callback_sweep(settings):
    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule["governance.sweep_callbacks"] == schedule["governance.sweep_tasks"]


# --- finding 12: in the embedded default a hanging host delays only its own callbacks ---
class HangingHost:
    """Accepts connections and never answers."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(connection)

    def close(self):
        self.stopped = True
        self.listener.close()
        for connection in self.accepted:
            connection.close()


def test_one_consumers_hanging_host_does_not_delay_another_consumers_callbacks(hooks, settings, make_consumer):
    settings.GAVEL_CALLBACK_TIMEOUT = 2
    settings.GAVEL_CALLBACK_MAX_ATTEMPTS = 1
    hanging = HangingHost()
    good = hooks()
    slow_app, _ = make_consumer("slow-app")
    quick_app, _ = make_consumer("quick-app")
    try:
        stuck = [finished_task(f"http://127.0.0.1:{hanging.port}/hook", slow_app) for _ in range(2)]
        for task in stuck:
            queue.notify(task.pk)
        time.sleep(0.2)  # the hanging host's first try is under way
        started = time.monotonic()
        quick = finished_task(good.url, quick_app)
        queue.notify(quick.pk)
        while not good.received and time.monotonic() - started < 20:
            time.sleep(0.02)
        waited = time.monotonic() - started
        assert good.ids() == [deliveries.delivery_id("task", quick.pk, "ready")]
        assert waited < 1.5, f"the other consumer's callback waited {waited:.1f} s behind a hanging host"
    finally:
        assert wait_until_idle(60)
        hanging.close()
    assert {row.callback_status for row in Task.objects.filter(pk__in=[t.pk for t in stuck])} == {"failed"}


# --- finding 11 in the embedded default: no celery beat, so the server's requests run the sweep ---
@pytest.fixture
def sweeping_requests(settings):
    from governance.work import embedded_sweep

    settings.GAVEL_SWEEP_ON_REQUESTS = True
    settings.GAVEL_SWEEP_INTERVAL_SECONDS = 60
    embedded_sweep.forget()
    yield embedded_sweep
    deadline = time.monotonic() + 30
    while embedded_sweep._state["running"] and time.monotonic() < deadline:
        time.sleep(0.02)
    embedded_sweep.forget()


def wait_for(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


def test_without_a_broker_a_request_starts_the_sweep_at_most_once_an_interval(hooks, sweeping_requests, client,
                                                                            make_consumer):
    hook = hooks()
    consumer, _token = make_consumer("hook-app")
    lost = finished_task(hook.url, consumer)  # left open by a process that stopped before delivering it
    assert client.get("/healthz").status_code in (200, 503)
    wait_for(lambda: len(hook.received) == 1)
    assert hook.ids() == [deliveries.delivery_id("task", lost.pk, "ready")]
    wait_for(lambda: Task.objects.get(pk=lost.pk).callback_status == "delivered")

    # Within the interval another request starts no sweep: a second lost callback waits for the next one.
    second = finished_task(hook.url, consumer)
    wait_for(lambda: not sweeping_requests._state["running"])
    client.get("/healthz")
    time.sleep(1.0)
    assert len(hook.received) == 1 and Task.objects.get(pk=second.pk).callback_status == ""
    sweeping_requests._state["last"] -= 61  # the interval has passed
    client.get("/healthz")
    wait_for(lambda: len(hook.received) == 2)
    assert hook.ids()[1] == deliveries.delivery_id("task", second.pk, "ready")


def test_with_a_broker_the_requests_leave_the_sweep_to_celery_beat(hooks, sweeping_requests, settings, client):
    hook = hooks()
    finished_task(hook.url)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    client.get("/healthz")
    time.sleep(1.0)
    assert sweeping_requests._state["last"] is None and hook.received == []


def test_the_sweep_command_delivers_without_a_broker_and_waits(hooks, make_consumer):
    from io import StringIO

    from django.core.management import call_command

    hook = hooks()
    consumer, _token = make_consumer("hook-app")
    lost = finished_task(hook.url, consumer)
    out = StringIO()
    call_command("sweep_callbacks", stdout=out)
    assert "Sent 1 callback(s) again (delivered here)." in out.getvalue()
    assert hook.ids() == [deliveries.delivery_id("task", lost.pk, "ready")]  # delivered before it returned
    assert Task.objects.get(pk=lost.pk).callback_status == "delivered"
