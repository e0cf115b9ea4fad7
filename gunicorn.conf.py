"""gunicorn's settings file: gunicorn reads `./gunicorn.conf.py` by itself when started from the
project's folder, as the README's command is. Options given on the command line still win.

Each worker serves its requests beneath one deep frame (governance/thread_stack.py, issue 30): a
sync worker's loop runs every request of the worker's life, so the frames of a deep request never
map and unmap memory. Other worker classes (gthread, gevent) serve in other threads or greenlets
and are left as they are.
"""


def post_worker_init(worker):
    from governance.thread_stack import run_on_deep_stack

    serve = worker.run
    worker.run = lambda: run_on_deep_stack(serve)
