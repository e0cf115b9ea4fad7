"""A long-lived thread's work on a deep frame stack (issue 30; docs/decisions.md, "Request threads run
on a deep frame stack").

CPython 3.11 keeps the frames of Python calls on a per-thread stack of 16 KiB chunks. A call that
does not fit in the current chunk maps a new one, and returning from the first frame of a chunk
unmaps it at once. A request that dips back and forth across a chunk's edge therefore maps and
unmaps 16 KiB each time, and touches its pages anew: a plain gateway call did it 27 times, a held
stream about 115 times (strace), and each round costs 13 µs of CPU on this machine before its effect
on the caches. A request's stack is deep (gunicorn, Django's handler and middleware, DRF, Gavel,
litellm, the openai client, httpx): well past one chunk.

`run_on_deep_stack(work)` runs `work` beneath one frame so large that CPython gives it a chunk of
its own of 256 KiB; the frames of everything `work` calls fit in the rest of that chunk (about
131 KiB), so none of them maps memory. strace saw no `mmap` left in a gunicorn worker's requests (a
plain gateway call, a held stream, a screening, a 404). It is meant for the bottom of a thread that
serves work for its whole life, a gunicorn sync worker's loop (gunicorn.conf.py): the chunk is
mapped once per thread. It costs 256 KiB of address space per thread, of which the frame itself
(125 KiB, its slots set to NULL when it is entered) is resident. A Celery worker's threads do not
need it: in a steady stream of tasks neither its consumer nor its pool threads mapped any (strace).

Pure: imports nothing of Django or of Gavel.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Slots of the big frame (8 bytes each). CPython 3.11 sizes a new chunk as 16 KiB doubled until it
# holds the frame and a reserve of 1,000 slots (push_chunk, MINIMUM_OVERHEAD): 16,000 slots and the
# reserve need about 136,000 bytes, more than 128 KiB, so the chunk is 256 KiB and about 131 KiB stays
# free above the frame. At about 15,300 slots or fewer the chunk would be 128 KiB with almost nothing free.
SLOTS = 16_000

_thread = threading.local()


def _frame_of(slots: int) -> Callable[..., Any]:
    """A function whose frame has `slots` local variables (never assigned: the assignment is dead
    code, but the names are locals all the same, and CPython reserves a slot for each)."""
    names = " = ".join(f"_{index}" for index in range(slots))
    source = (f"def beneath(work, args, kwargs):\n"
              f"    if False:\n"
              f"        {names} = None\n"
              f"    return work(*args, **kwargs)\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<thread_stack>", "exec"), namespace)  # noqa: S102 - fixed source, no input
    return namespace["beneath"]


_beneath = _frame_of(SLOTS)


def run_on_deep_stack(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Return `work(*args, **kwargs)`, run beneath the big frame; at once if this thread is already
    beneath one."""
    if on_deep_stack():
        return work(*args, **kwargs)
    _thread.deep = True
    try:
        return _beneath(work, args, kwargs)
    finally:
        _thread.deep = False


def on_deep_stack() -> bool:
    """True inside `run_on_deep_stack` on this thread."""
    return getattr(_thread, "deep", False)
