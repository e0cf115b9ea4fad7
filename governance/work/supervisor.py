"""Queued work on every core: `manage.py run_workers` keeps GAVEL_WORKER_PROCESSES Celery worker
processes running (default: one per core this process may run on), each the README's
`celery -A governance worker` with its own thread pool and database pool (governance/celery.py).

One worker process is bound by the interpreter lock to one core's worth of CPU; the processes share
nothing but the broker and the database, so every guarantee of the queue (a task claimed once, its
lease, late acknowledgement, recovery after SIGKILL) is that of separate workers. A child that dies
(SIGKILL, out of memory) is started again after GAVEL_WORKER_RESTART_SECONDS; its unacknowledged
messages come back from the broker once their visibility timeout has passed, and a claim whose
lease ran out is taken again — exactly once, as when any worker dies. SIGTERM / SIGINT / SIGQUIT
are passed to every child (Celery's warm shutdown for TERM) and the supervisor ends when they have.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

logger = logging.getLogger("gavel.workers")

_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)


def worker_command(index: int, celery_args: list[str]) -> list[str]:
    """The README's worker command, named so several run side by side on one host."""
    return [sys.executable, "-m", "celery", "-A", "governance", "worker",
            "-n", f"gavel{index}.{os.getpid()}@%h", *celery_args]


class Supervisor:
    def __init__(self, processes: int, celery_args: list[str], *, restart_seconds: float = 1.0, out=None):
        self.count = processes
        self.celery_args = list(celery_args)
        self.restart_seconds = restart_seconds
        self.children: dict[int, subprocess.Popen] = {}
        self.died_at: dict[int, float] = {}
        self.stopping: int | None = None  # the signal being passed on, once asked to stop
        self.out = out or sys.stdout

    def say(self, message: str) -> None:
        self.out.write(message + "\n")
        self.out.flush()

    def start(self, index: int) -> None:
        child = subprocess.Popen(worker_command(index, self.celery_args))
        self.children[index] = child
        self.say(f"worker {index}: started, pid {child.pid}")

    def stop(self, signum, _frame=None) -> None:
        self.stopping = signum
        for child in self.children.values():
            if child.poll() is None:
                try:
                    child.send_signal(signum)
                except ProcessLookupError:  # it ended meanwhile
                    pass

    def run(self) -> int:
        for signum in _FORWARDED:
            signal.signal(signum, self.stop)
        for index in range(self.count):
            self.start(index)
        while self.stopping is None:
            self.restart_dead()
            time.sleep(0.2)
        for child in self.children.values():
            child.wait()
        self.say("every worker process has stopped")
        return 0

    def restart_dead(self) -> None:
        now = time.monotonic()
        for index, child in list(self.children.items()):
            code = child.poll()
            if code is None:
                continue
            if index not in self.died_at:
                self.died_at[index] = now
                self.say(f"worker {index} (pid {child.pid}) ended with {code}; "
                         f"starting it again in {self.restart_seconds:g} s")
            elif now - self.died_at[index] >= self.restart_seconds and self.stopping is None:
                del self.died_at[index]
                self.start(index)
