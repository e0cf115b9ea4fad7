"""Faults mid-batch lose no callback (issue 25, finding 11; Must show 2).

PostgreSQL, a real Celery worker and celery beat on a private Redis (tests/faults/services.py: the
machine's Redis is never stopped). A batch of 200 tasks, each with a callback, and the batch's own:
the worker is SIGKILLed mid-batch, or Redis is stopped and started empty mid-batch (no persistence:
every queued and unacknowledged message is gone). Every callback arrives (by its `X-Gavel-Delivery`
id) within the sweep bound, and each once: a repeated id may come only from a try that was in
flight at the kill (the receiver had answered, the row did not yet say so).

The sweep bound is configured short here (grace 20 s, beat every 3 s) so the test runs in minutes.
"""
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import connection

from governance.models import Batch, Configuration, Task
from governance.work import batches, deliveries
from tests.faults.services import PrivateRedis
from tests.production.servers import test_database_url as database_url

ROOT = Path(__file__).resolve().parents[2]
TOTAL = 200
CONCURRENCY = 8
SWEEP = {"GAVEL_CALLBACK_SWEEP_GRACE_SECONDS": 20, "GAVEL_TASK_SWEEP_GRACE_SECONDS": 20,
         "GAVEL_SWEEP_INTERVAL_SECONDS": 3}
# From the fault to the last callback: a worker's start (litellm loads first), the rest of the batch
# (200 x 0.05 s at the provider over 8 threads, and the machine's load), a lease (timeout 2 s + margin 1 s), then both sweeps' grace and
# interval and one try's timeout. On a shared 2-core machine at load 8 a worker ran ~2 tasks and
# ~1 callback a second (2026-12-03), so the bound is wide; on an idle machine it is far shorter.
BOUND_SECONDS = 360

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


class Receiver:
    """The consumer's callback endpoint: records every delivery id with its arrival time."""

    def __init__(self):
        self.deliveries: list[tuple[str, float]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    receiver.deliveries.append((self.headers.get("X-Gavel-Delivery", ""), time.monotonic()))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/gavel"

    def ids(self) -> Counter:
        with self.lock:
            return Counter(delivery for delivery, _at in self.deliveries)

    def last_at(self) -> float:
        with self.lock:
            return max(at for _delivery, at in self.deliveries)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Services:
    """Worker and beat processes on the private Redis; logs in the test's directory."""

    def __init__(self, directory: Path, broker: str, queue: str):
        self.directory, self.broker, self.queue = directory, broker, queue
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    def _env(self) -> dict:
        return {**os.environ, "CELERY_BROKER_URL": self.broker, "DATABASE_URL": database_url(),
                "GAVEL_TESTING": "1", "GAVEL_CELERY_QUEUE": self.queue, "GAVEL_CALLBACK_HOSTS": "127.0.0.1",
                "GAVEL_CALLBACK_RETRY_BASE_SECONDS": "1", "GAVEL_WORKER_CONCURRENCY": str(CONCURRENCY),
                "GAVEL_VISIBILITY_TIMEOUT": "20", "GAVEL_TASK_LEASE_SECONDS": "1",
                "GAVEL_TASK_LEASE_MARGIN_SECONDS": "1", "GAVEL_TASK_RETRY_BASE_SECONDS": "1",
                # 64 messages reserved for the 8 threads: a worker whose reserved window is full reads again
                # only on its next poll (docs/decisions/0015), and with 0.05 s tasks the 8 threads otherwise
                # ran 16 tasks every 5-10 s (a test of 130 s instead of 50).
                "GAVEL_WORKER_PREFETCH_MULTIPLIER": "8",
                **{key: str(value) for key, value in SWEEP.items()}}

    def _start(self, name: str, arguments: list[str]) -> tuple[subprocess.Popen, Path]:
        log = self.directory / f"{name}.log"
        process = subprocess.Popen([sys.executable, "-m", "celery", "-A", "governance", *arguments], cwd=ROOT,
                                   env=self._env(), stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.processes.append(process)
        self.logs.append(log)
        return process, log

    def worker(self) -> subprocess.Popen:
        index = sum(1 for log in self.logs if log.name.startswith("worker"))
        process, log = self._start(f"worker{index}", [
            "worker", "-n", f"w{index}-{self.queue}@%h", "--without-gossip", "--without-mingle",
            "--without-heartbeat", "-l", "info"])
        deadline = time.monotonic() + 120
        while " ready." not in log.read_text():
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail(f"the worker did not start\n{self.output()}")
            time.sleep(0.2)
        return process

    def beat(self) -> subprocess.Popen:
        process, _log = self._start("beat", ["beat", "-s", str(self.directory / "beat-schedule"),
                                             "--max-interval", "1", "-l", "info"])
        return process

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def output(self) -> str:
        return "\n".join(f"--- {log.name}\n{log.read_text()[-4000:]}" for log in self.logs if log.exists())


BROKER_SETTINGS = ("broker_url", "broker_read_url", "broker_write_url", "task_always_eager")


def use_broker(app, values: tuple) -> None:
    """Point this process's sends at another broker: the read and write URLs too (Celery copies broker_url
    into them when it is configured, and sends by the write URL), and without the connection and producer
    pools made for the one before (as Celery does after a fork). With broker_url alone, the batch's message
    went to the machine's Redis, and only the sweep, 20 s later, sent the batch's tasks."""
    for name, value in zip(BROKER_SETTINGS, values, strict=True):
        setattr(app.conf, name, value)
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def redis_server(tmp_path):
    server = PrivateRedis(tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def stack(redis_server, settings, tmp_path):
    """This process publishes to the private Redis, on a queue of the test's own; the services run there."""
    from governance.celery import app

    if connection.vendor != "postgresql":
        if os.environ.get("GAVEL_REQUIRE_SERVICES"):
            pytest.fail("the callback fault tests run on PostgreSQL in CI")
        pytest.skip("needs PostgreSQL (DATABASE_URL): a worker and this test share the database")
    broker = f"{redis_server.url}/0"
    queue_name = f"gavel-faults-{uuid.uuid4().hex[:8]}"
    saved = tuple(getattr(app.conf, name) for name in BROKER_SETTINGS)
    use_broker(app, (broker, broker, broker, False))
    settings.CELERY_BROKER_URL, settings.CELERY_TASK_ALWAYS_EAGER = broker, False
    settings.CELERY_TASK_DEFAULT_QUEUE = queue_name
    settings.GAVEL_CALLBACK_HOSTS = ["127.0.0.1"]
    logs = Path(os.environ.get("GAVEL_FAULT_LOG_DIR") or tmp_path)
    logs.mkdir(parents=True, exist_ok=True)
    services = Services(logs, broker, queue_name)
    receiver = Receiver()
    yield services, receiver, redis_server
    services.stop()
    receiver.close()
    use_broker(app, saved)


@pytest.fixture
def writer(db, provider, make_consumer, provider_server):
    configuration = Configuration.objects.create(identifier="fault-writer", provider=provider, model="writer",
                                                 timeout=2)
    provider_server.set_default({"text": "A short product text, as asked.", "delay": 0.05})
    consumer, _token = make_consumer("fault-app", [configuration], throttle_rate="100000/min")
    return consumer, configuration


def submit_batch(consumer, configuration, url: str) -> Batch:
    items = [{"kind": "queued_task", "configuration": configuration.identifier,
              "instruction": f"Task number {number}: write the product text.", "callback_url": url}
             for number in range(TOTAL)]
    return batches.submit({"name": "faults", "callback_url": url, "items": items}, consumer=consumer, actor="test")


def wait_for(condition, timeout: float, services: Services, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}\n{services.output()}")


def finished(batch: Batch) -> int:
    return Task.objects.filter(batch=batch, status="ready").count()


def expected_ids(batch: Batch) -> set[str]:
    tasks = {deliveries.delivery_id("task", pk, "ready")
             for pk in Task.objects.filter(batch=batch).values_list("pk", flat=True)}
    return tasks | {deliveries.delivery_id("batch", batch.pk)}


def assert_every_callback_once(batch: Batch, receiver: Receiver, services: Services, fault_at: float,
                               in_flight: int) -> float:
    expected = expected_ids(batch)
    deadline = time.monotonic() + BOUND_SECONDS
    while not set(receiver.ids()) >= expected and time.monotonic() < deadline:
        time.sleep(0.2)
    if not set(receiver.ids()) >= expected:
        missing = expected - set(receiver.ids())
        by_id = {deliveries.delivery_id("task", t.pk, "ready"): t for t in Task.objects.filter(batch=batch)}
        rows = [(t.status, t.attempts, t.callback_status, t.callback_attempts, t.callback_due_at, t.updated)
                for key, t in by_id.items() if key in missing]
        batch_row = Batch.objects.filter(pk=batch.pk).values().first()
        pytest.fail(f"{len(missing)} callbacks missing {BOUND_SECONDS} s after the fault: {rows[:10]}\n"
                    f"batch: {batch_row}\n{services.output()}")
    took = receiver.last_at() - fault_at
    time.sleep(6)  # a sweep or a late message would post a delivered callback again now
    ids = receiver.ids()
    assert set(ids) == expected
    repeated = {delivery: count for delivery, count in ids.items() if count > 1}
    assert sum(count - 1 for count in repeated.values()) <= in_flight, repeated
    rows = Task.objects.filter(batch=batch)
    assert Counter(rows.values_list("status", flat=True)) == {"ready": TOTAL}
    assert set(rows.values_list("callback_status", flat=True)) == {"delivered"}
    assert Batch.objects.get(pk=batch.pk).callback_status == "delivered"
    return took


def test_a_worker_killed_mid_batch_loses_no_callback(stack, writer):
    services, receiver, _redis = stack
    consumer, configuration = writer
    victim = services.worker()
    services.beat()
    batch = submit_batch(consumer, configuration, receiver.url)
    wait_for(lambda: finished(batch) >= 40, 120, services, "40 tasks of the batch to finish")
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    killed_at = time.monotonic()
    assert finished(batch) < TOTAL, "the kill must come mid-batch"
    services.worker()
    took = assert_every_callback_once(batch, receiver, services, killed_at, in_flight=CONCURRENCY)
    print(f"SIGKILL: every callback delivered {took:.1f} s after the kill")


def test_a_redis_restart_mid_batch_loses_no_callback(stack, writer):
    services, receiver, redis_server = stack
    consumer, configuration = writer
    services.worker()
    services.beat()
    batch = submit_batch(consumer, configuration, receiver.url)
    wait_for(lambda: finished(batch) >= 40, 120, services, "40 tasks of the batch to finish")
    redis_server.stop()
    stopped_at = time.monotonic()
    assert finished(batch) < TOTAL, "the restart must come mid-batch"
    time.sleep(3)
    redis_server.start()  # empty: every queued and unacknowledged message is gone
    took = assert_every_callback_once(batch, receiver, services, stopped_at, in_flight=0)
    print(f"Redis restart: every callback delivered {took:.1f} s after Redis stopped")
