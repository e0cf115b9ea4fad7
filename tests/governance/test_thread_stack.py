"""A gunicorn worker serves beneath one deep frame (governance/thread_stack.py, gunicorn.conf.py): a
call that dips back and forth across the edge of CPython's 16 KiB frame chunks maps fresh memory each
time on a shallow stack, and none beneath the deep frame."""
import resource
import threading
from pathlib import Path

import pytest

from governance.thread_stack import on_deep_stack, run_on_deep_stack

ROOT = Path(__file__).resolve().parents[2]
per_thread_faults = pytest.mark.skipif(not hasattr(resource, "RUSAGE_THREAD"),
                                       reason="a thread's own page faults are counted on Linux only")


def dip(depth: int) -> int:
    """Recurse `depth` frames (about 100 bytes of frame stack each) and come back."""
    a, b, c, d = depth, depth + 1, depth + 2, depth + 3
    return dip(depth - 1) + a + b - c - d + 2 if depth else 0


def page_faults_of(work) -> int:
    """Minor page faults of this thread while `work` runs: a new frame chunk's pages are faulted in."""
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    work()
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


def dips(times: int = 2000, depth: int = 300, down=dip):
    for _ in range(times):
        down(depth)  # dip: 300 frames, about 30 KB, past the edge of at least one 16 KiB chunk


def _wide():
    """A function with a frame of 40 locals (about 440 bytes)."""
    body = "".join(f"    v{i} = depth + {i}\n" for i in range(40))
    namespace = {}
    exec(f"def wide(depth):\n{body}    return wide(depth - 1) + v0 - v1 + 1 if depth else 0\n", namespace)
    return namespace["wide"]


wide = _wide()


def in_a_thread(work):
    """Run `work` in a new thread (a fresh frame stack, as a worker's) and return its result."""
    results = []
    thread = threading.Thread(target=lambda: results.append(work()))
    thread.start()
    thread.join()
    return results[0]


@per_thread_faults
def test_a_deep_call_maps_no_frame_memory_beneath_the_deep_frame():
    shallow = in_a_thread(lambda: page_faults_of(dips))
    deep = in_a_thread(lambda: run_on_deep_stack(page_faults_of, dips))
    # On a shallow stack each dip faults in a new chunk's pages (2,000 dips, 4 pages or more each);
    # beneath the deep frame the dips stay inside its chunk. If a CPython release stops freeing
    # chunks at once, the first assertion fails and the deep frame is no longer needed.
    assert shallow >= 4000, shallow
    assert deep < shallow / 20, (deep, shallow)


@per_thread_faults
def test_the_deep_frame_leaves_room_for_about_100_kb_of_frames_above_it():
    # 250 frames of 40 locals each, over 100 KB: a request deeper than any seen (strace found no
    # mapping left in gunicorn's requests) still stays inside the big frame's chunk.
    shallow = in_a_thread(lambda: page_faults_of(lambda: dips(depth=250, down=wide)))
    deep = in_a_thread(lambda: run_on_deep_stack(page_faults_of, lambda: dips(depth=250, down=wide)))
    assert shallow >= 20000, shallow
    assert deep < 200, deep  # only the first dip's pages


def test_the_work_gets_its_arguments_and_its_result_and_errors_come_through():
    assert run_on_deep_stack(lambda a, b=0: (a, b, on_deep_stack()), 1, b=2) == (1, 2, True)
    assert not on_deep_stack()
    with pytest.raises(ZeroDivisionError):
        run_on_deep_stack(lambda: 1 / 0)
    assert not on_deep_stack()  # left, also after an error


def test_inside_a_deep_stack_the_work_runs_at_once():
    def nested():
        return run_on_deep_stack(on_deep_stack)

    assert run_on_deep_stack(nested) is True


def gunicorn_settings():
    """gunicorn's settings as gunicorn loads them from the project's gunicorn.conf.py."""
    from gunicorn.app.base import Application
    from gunicorn.config import Config

    class Settings(Application):
        def __init__(self):  # no command line to parse
            self.cfg = Config()

    settings = Settings()
    assert settings.cfg.config == "./gunicorn.conf.py"  # what gunicorn reads from the folder it starts in
    settings.load_config_from_file(str(ROOT / "gunicorn.conf.py"))
    return settings.cfg


class QuietLog:
    def __init__(self):
        self.lines = []

    def info(self, message, *args):
        self.lines.append(message % args)


def a_worker(worker_class):
    """A worker of `worker_class` as post_worker_init sees it, its loop replaced by a probe."""
    worker = worker_class.__new__(worker_class)
    worker.pid, worker.log = 4242, QuietLog()
    worker.run = on_deep_stack
    return worker


def test_gunicorn_runs_a_sync_worker_loop_beneath_the_deep_frame():
    from gunicorn.workers.sync import SyncWorker

    worker = a_worker(SyncWorker)
    gunicorn_settings().post_worker_init(worker)
    assert worker.run() is True
    assert not on_deep_stack()
    assert worker.log.lines == ["worker 4242 serves beneath a deep frame (gunicorn.conf.py)"]


def test_gunicorn_leaves_a_threaded_worker_as_it_is():
    from gunicorn.workers.gthread import ThreadWorker

    worker = a_worker(ThreadWorker)
    gunicorn_settings().post_worker_init(worker)
    assert worker.run() is False
    assert worker.log.lines == ["worker 4242 (ThreadWorker) serves on its own stack (gunicorn.conf.py)"]
