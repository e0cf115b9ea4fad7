"""The README's worker line, `manage.py run_workers`, runs GAVEL_WORKER_PROCESSES Celery worker
processes and starts a killed one again; a task in flight in the killed process is run again once,
by a worker of the same supervisor, and nothing twice (SPEC §10, governance/work/supervisor.py)."""
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from governance.models import Configuration, Task
from tests.governance.test_celery_worker import _database_url
from tests.governance.test_task_workers import (  # noqa: F401 - fixtures
    BROKER, CLEAN, ROOT, broker, requests_per_task, submit, writers,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
STARTED = re.compile(r"worker (\d+): started, pid (\d+)")


class Supervised:
    def __init__(self, queue_name: str, folder: Path):
        self.queue, self.folder = queue_name, folder
        self.output = folder / "supervisor.log"
        self.process = None

    def start(self, processes: int, **env_extra):
        env = {**os.environ, "CELERY_BROKER_URL": BROKER, "DATABASE_URL": _database_url(), "GAVEL_TESTING": "1",
               "GAVEL_CELERY_QUEUE": self.queue, "GAVEL_WORKER_PROCESSES": str(processes),
               **{k: str(v) for k, v in env_extra.items()}}
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "run_workers", "-l", "info", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "--logfile", str(self.folder / "%n.log")],
            cwd=ROOT, env=env, stdout=self.output.open("w"), stderr=subprocess.STDOUT)
        self.wait_until(lambda: self.ready() >= processes, 120, f"{processes} worker processes to be ready")

    def logs(self) -> list[Path]:
        return sorted(self.folder.glob("gavel*.log"))

    def ready(self) -> int:
        return sum(log.read_text().count(" ready.") for log in self.logs())

    def pids(self) -> dict[int, int]:
        """worker index -> pid of its latest start"""
        return {int(index): int(pid) for index, pid in STARTED.findall(self.output.read_text())}

    def text(self) -> str:
        return "\n".join(f"--- {path.name}\n{path.read_text()[-3000:]}" for path in [self.output, *self.logs()])

    def wait_until(self, condition, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        pytest.fail(f"timed out waiting for {what}\n{self.text()}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pid in self.pids().values():  # a child left behind by a failed test
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def supervised(broker, tmp_path):  # noqa: F811 - the fixture imported above
    runner = Supervised(broker, tmp_path)
    yield runner
    runner.stop()


def test_run_workers_starts_the_processes_asked_for_and_ends_them_on_sigterm(supervised):
    supervised.start(2)
    pids = supervised.pids()
    assert sorted(pids) == [0, 1] and len(set(pids.values())) == 2
    assert "2 worker processes" in supervised.output.read_text()
    supervised.process.send_signal(signal.SIGTERM)
    assert supervised.process.wait(timeout=30) == 0
    for pid in pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # every child has ended (and was reaped by the supervisor)


def test_a_killed_worker_process_is_started_again_and_its_tasks_run_exactly_once(supervised, writers,  # noqa: F811
                                                                                  provider_server):
    consumer, clean, _ = writers
    Configuration.objects.filter(pk=clean.pk).update(timeout=4)
    provider_server.script([{"text": CLEAN, "delay": 3.5} for _ in range(20)])
    provider_server.set_default({"text": CLEAN})
    # The killed process's messages come back when its visibility timeout has passed and a worker starts
    # polling (kombu's Redis transport): the supervisor starts it again after that.
    supervised.start(2, GAVEL_VISIBILITY_TIMEOUT=6, GAVEL_TASK_LEASE_SECONDS=1, GAVEL_TASK_LEASE_MARGIN_SECONDS=1,
                     GAVEL_WORKER_RESTART_SECONDS=7, GAVEL_TASK_RETRY_BASE_SECONDS=1)
    ids = [submit(consumer, clean, number).pk for number in range(100, 120)]
    supervised.wait_until(lambda: len(provider_server.chat_requests) == 20, 120, "20 generations in flight")
    received = {log: log.read_text().count(" received") for log in supervised.logs()}
    busiest = max(received, key=received.get)
    index = int(re.match(r"gavel(\d+)\.", busiest.name).group(1))
    victim = supervised.pids()[index]
    os.kill(victim, signal.SIGKILL)
    assert Task.objects.filter(pk__in=ids, status="running").count() == 20  # nothing stored yet
    supervised.wait_until(lambda: supervised.pids()[index] != victim, 30, "the killed process to be started again")
    ready = Task.objects.filter(pk__in=ids, status="ready")
    supervised.wait_until(lambda: ready.count() == 20, 180, "every task to be ready")
    rows = list(Task.objects.filter(pk__in=ids))
    attempts = Counter(row.attempts for row in rows)
    assert set(attempts) <= {1, 2} and attempts[2] == received[busiest] > 0, (attempts, received)
    assert {row.answer for row in rows} == {CLEAN}
    # One generation per attempt, counted at the provider: the dead process's, then one more.
    number_of = {pk: number for number, pk in zip(range(100, 120), ids)}
    assert requests_per_task(provider_server) == Counter({number_of[row.pk]: row.attempts for row in rows})
    time.sleep(2)
    assert Counter(Task.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == attempts  # no third run
