"""A gunicorn worker serves beneath one deep frame (governance/thread_stack.py, gunicorn.conf.py): a
call that dips back and forth across the edge of CPython's 16 KiB frame chunks maps fresh memory each
time on a shallow stack, and none beneath the deep frame."""
import importlib.util
import resource
import threading
from pathlib import Path

import pytest

from governance.thread_stack import on_deep_stack, run_on_deep_stack

ROOT = Path(__file__).resolve().parents[2]


def dip(depth: int) -> int:
    """Recurse `depth` frames (about 100 bytes of frame stack each) and come back."""
    a, b, c, d = depth, depth + 1, depth + 2, depth + 3
    return dip(depth - 1) + a + b - c - d + 2 if depth else 0


def page_faults_of(work) -> int:
    """Minor page faults of this thread while `work` runs: a new frame chunk's pages are faulted in."""
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    work()
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before


def dips(times: int = 2000, depth: int = 300):
    for _ in range(times):
        dip(depth)  # 300 frames: about 30 KB of frames, past the edge of at least one 16 KiB chunk


def in_a_thread(work):
    """Run `work` in a new thread (a fresh frame stack, as a worker's) and return its result."""
    results = []
    thread = threading.Thread(target=lambda: results.append(work()))
    thread.start()
    thread.join()
    return results[0]


def test_a_deep_call_maps_no_frame_memory_beneath_the_deep_frame():
    shallow = in_a_thread(lambda: page_faults_of(dips))
    deep = in_a_thread(lambda: run_on_deep_stack(page_faults_of, dips))
    # On a shallow stack each dip faults in a new chunk's pages (2,000 dips, 4 pages or more each);
    # beneath the deep frame the dips stay inside its chunk. If a CPython release stops freeing
    # chunks at once, the first assertion fails and the deep frame is no longer needed.
    assert shallow >= 4000, shallow
    assert deep < shallow / 20, (deep, shallow)


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


def test_gunicorn_settings_run_the_worker_loop_beneath_the_deep_frame():
    spec = importlib.util.spec_from_file_location("gunicorn_settings", ROOT / "gunicorn.conf.py")
    settings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(settings)

    class Worker:
        def run(self):
            return on_deep_stack()

    worker = Worker()
    settings.post_worker_init(worker)
    assert worker.run() is True
    assert not on_deep_stack()
