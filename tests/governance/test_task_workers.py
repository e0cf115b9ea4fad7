"""Real Celery workers on Redis run queued tasks (SPEC §10): each exactly once, none lost.

Worker processes are started with `celery worker` against the test database (PostgreSQL in
CI); the provider is the local test server, which counts what each task asked for.
"""
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection

from governance.work import queue
from governance.models import Configuration, Task
from termlists.models import TermList
from tests.governance.test_celery_worker import _database_url

ROOT = Path(__file__).resolve().parents[2]
BROKER = os.environ.get("CELERY_BROKER_URL", "")
CLEAN = ("Our planning tool finds a free hour for the whole team, books a room that fits and sends the agenda "
         "before the meeting starts, so nobody has to ask twice and the week keeps its shape.")
TASK_NUMBER = re.compile(r"Task number (\d+)\b")

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]



@pytest.fixture
def broker(settings):
    """The real broker, with this process publishing to a queue of the test's own."""
    from governance.celery import app

    if not BROKER:
        if os.environ.get("GAVEL_REQUIRE_SERVICES"):
            pytest.fail("CELERY_BROKER_URL must be set: the worker tests need Redis")
        pytest.skip("CELERY_BROKER_URL is not set (these tests need Redis and a real worker)")
    if connection.vendor == "sqlite" and os.environ.get("GAVEL_REQUIRE_SERVICES"):
        pytest.fail("the worker tests run on PostgreSQL in CI")
    name = f"gavel-test-{uuid.uuid4().hex[:8]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = name
    yield name
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(name)


class Workers:
    def __init__(self, queue_name: str):
        self.queue = queue_name
        self.processes: list[subprocess.Popen] = []
        self.logs: list[Path] = []

    def start(self, count: int = 1, **env_extra) -> list[subprocess.Popen]:
        started = []
        for _ in range(count):
            index = len(self.processes)
            log = Path(os.environ.get("TMPDIR", "/tmp")) / f"{self.queue}-worker{index}.log"
            env = {**os.environ, "CELERY_BROKER_URL": BROKER, "DATABASE_URL": _database_url(),
                   "GAVEL_TESTING": "1", "GAVEL_CELERY_QUEUE": self.queue, "GAVEL_TASK_RETRY_BASE_SECONDS": "1",
                   **{k: str(v) for k, v in env_extra.items()}}
            # The README's command (its pool and concurrency come from the settings); the queue from
            # GAVEL_CELERY_QUEUE, a name of its own so two workers can run side by side.
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "governance", "worker",
                 "-n", f"w{index}-{self.queue}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
                 "-l", "info"],
                cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
            )
            self.processes.append(process)
            self.logs.append(log)
            started.append(process)
        # A worker loads litellm before it reports ready; wait for that, so the timeouts below
        # measure the work and not the start-up.
        deadline = time.monotonic() + 120
        while not all(" ready." in log.read_text() for log in self.logs[-count:]):
            if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                pytest.fail(f"workers did not start\n{self.output()}")
            time.sleep(0.2)
        return started

    def stop(self):
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
        return "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in self.logs if log.exists())


@pytest.fixture
def workers(broker):
    pool = Workers(broker)
    yield pool
    pool.stop()


@pytest.fixture
def writers(db, provider, make_consumer):
    """`clean-writer` delivers; `strict-writer` has a list that stops the same answer."""
    clean = Configuration.objects.create(identifier="clean-writer", provider=provider, model="writer")
    strict = Configuration.objects.create(identifier="strict-writer", provider=provider, model="writer")
    TermList.objects.create(name="No agendas", forbidden="agenda").configurations.add(strict)
    consumer, _ = make_consumer("batch-app", [clean, strict])
    return consumer, clean, strict


def submit(consumer, configuration, number: int, **extra) -> Task:
    return queue.submit({"kind": "queued_task", "configuration": configuration.identifier,
                         "instruction": f"Task number {number}: write the product text.", **extra},
                        consumer=consumer, actor="test")


def requests_per_task(provider_server) -> Counter:
    counts = Counter()
    for request in provider_server.chat_requests:
        match = TASK_NUMBER.search(request.json["messages"][-1]["content"])
        if match:
            counts[int(match.group(1))] += 1
    return counts


def wait_until(condition, timeout: float, workers: Workers, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}\n{workers.output()}")


def test_two_workers_finish_200_tasks_each_exactly_once(workers, writers, provider_server):
    consumer, clean, strict = writers
    provider_server.set_default({"text": CLEAN})
    workers.start(2)
    tasks = [submit(consumer, clean if i % 2 else strict, i) for i in range(200)]
    ids = [t.pk for t in tasks]
    finished = Task.objects.filter(pk__in=ids, status__in=["ready", "blocked"])
    wait_until(lambda: finished.count() == 200, 240, workers, "200 tasks to finish")

    rows = list(Task.objects.filter(pk__in=ids))
    assert Counter(t.status for t in rows) == {"ready": 100, "blocked": 100}
    assert all(t.attempts == 1 for t in rows), [t.attempts for t in rows if t.attempts != 1]
    # Exactly one generation per task, counted where it happened: at the provider.
    counts = requests_per_task(provider_server)
    assert sorted(counts) == list(range(200)) and set(counts.values()) == {1}
    # Both workers did work (each has a different hostname in its log).
    assert all("succeeded" in log.read_text() for log in workers.logs), workers.output()


def test_a_worker_killed_mid_generation_loses_nothing_and_completes_nothing_twice(workers, writers,
                                                                                    provider_server):
    """SIGKILL while 20 generations are in flight in one worker process (SPEC 10.1)."""
    consumer, clean, _ = writers
    Configuration.objects.filter(pk=clean.pk).update(timeout=4)
    # The first 20 requests hang (the worker is killed meanwhile); every later one answers at once.
    provider_server.script([{"text": CLEAN, "delay": 3.5} for _ in range(20)])
    provider_server.set_default({"text": CLEAN})
    fast_redelivery = {"GAVEL_VISIBILITY_TIMEOUT": 6, "GAVEL_TASK_LEASE_SECONDS": 1,
                       "GAVEL_TASK_LEASE_MARGIN_SECONDS": 1}
    (victim,) = workers.start(1, **fast_redelivery)
    tasks = [submit(consumer, clean, number) for number in range(100, 120)]
    ids = [t.pk for t in tasks]
    wait_until(lambda: len(provider_server.chat_requests) == 20, 120, workers,
               "the first worker to have 20 generations in flight")
    asked = time.monotonic()  # the last message was delivered just before this
    assert Task.objects.filter(pk__in=ids, status="running").count() == 20
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    assert Task.objects.filter(pk__in=ids, status="running").count() == 20  # nothing was stored
    # The dead worker's claims lapse on its 4-second budget; the survivor runs with a production-like
    # one. With 4 s, a survivor still starting on a loaded machine (litellm's import, 20 runs at once)
    # once took a third attempt at a task: its own call timed out, or its claim lapsed under it.
    Configuration.objects.filter(pk=clean.pk).update(timeout=60)

    # kombu's Redis transport gives unacknowledged messages back when a worker starts polling,
    # and then only on every tenth 10-second tick (~100 s): start the survivor once the
    # visibility timeout has passed, so its start-up restore is the one that finds the messages.
    time.sleep(max(0.0, asked + fast_redelivery["GAVEL_VISIBILITY_TIMEOUT"] + 0.5 - time.monotonic()))
    workers.start(1, **fast_redelivery)
    ready = Task.objects.filter(pk__in=ids, status="ready")
    wait_until(lambda: ready.count() == 20, 120, workers, "another worker to finish the dead worker's tasks")
    rows = list(Task.objects.filter(pk__in=ids))
    assert {(row.attempts, row.answer) for row in rows} == {(2, CLEAN)}
    # The dead worker asked once for each (and stored nothing), the survivor once for each.
    assert requests_per_task(provider_server) == Counter({number: 2 for number in range(100, 120)})
    time.sleep(2)
    assert set(Task.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {2}  # no third run


def test_a_duplicated_message_runs_nothing_twice(workers, writers, provider_server):
    from governance.work.tasks import run_task

    consumer, clean, _ = writers
    provider_server.set_default({"text": CLEAN, "delay": 0.5})
    workers.start(2)
    task = submit(consumer, clean, 3)
    for _ in range(3):
        run_task.apply_async(args=[str(task.pk)], queue=workers.queue)  # the same id, three more times
    wait_until(lambda: Task.objects.get(pk=task.pk).status == "ready", 120, workers, "the task to finish")
    time.sleep(3)  # the duplicates arrive and must find nothing to do
    assert requests_per_task(provider_server) == Counter({3: 1})
    assert Task.objects.get(pk=task.pk).attempts == 1


def test_a_task_cancelled_while_queued_is_never_generated(workers, writers, provider_server):
    consumer, clean, _ = writers
    provider_server.set_default({"text": CLEAN})
    task = submit(consumer, clean, 11)  # no worker runs yet: its message waits in Redis
    queue.cancel(task, actor="test")
    workers.start(1)
    marker = submit(consumer, clean, 12)  # sent after the cancelled one, so it is taken later
    wait_until(lambda: Task.objects.get(pk=marker.pk).status == "ready", 120, workers, "the marker task")
    assert Task.objects.get(pk=task.pk).status == "cancelled"
    assert requests_per_task(provider_server) == Counter({12: 1})


def test_the_sweep_sends_a_task_whose_message_was_lost(workers, writers, provider_server, monkeypatch):
    consumer, clean, _ = writers
    provider_server.set_default({"text": CLEAN})
    with monkeypatch.context() as patched:
        patched.setattr(queue, "enqueue", lambda *a, **k: None)  # the broker "was down" at submit
        task = submit(consumer, clean, 21)
    workers.start(1)
    assert queue.sweep(grace_seconds=0) == 1
    wait_until(lambda: Task.objects.get(pk=task.pk).status == "ready", 120, workers, "the swept task")
    assert requests_per_task(provider_server) == Counter({21: 1})
