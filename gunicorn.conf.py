"""gunicorn's settings file. gunicorn reads `./gunicorn.conf.py` from the folder it is started in, as
the README's command is; started from another folder, or given a settings file of its own (`-c`,
`--config`, also through GUNICORN_CMD_ARGS), it does not read this one: pass `-c` with this file's path
or copy the hook. Options on the command line still win over what is set here.

A sync worker serves every request of its life in its main loop; that loop runs beneath one deep
frame (governance/thread_stack.py, issue 30), so the frames of a deep request never map and unmap
memory. Other worker classes (gthread, gevent) serve in other threads or greenlets: they are left
as they are. Each worker says in gunicorn's log whether it serves beneath the frame.
"""


def post_worker_init(worker):
    from gunicorn.workers.sync import SyncWorker

    from governance.thread_stack import run_on_deep_stack

    if not isinstance(worker, SyncWorker):
        worker.log.info("worker %s (%s) serves on its own stack (gunicorn.conf.py)", worker.pid,
                        type(worker).__name__)
        return
    serve = worker.run
    worker.run = lambda: run_on_deep_stack(serve)
    worker.log.info("worker %s serves beneath a deep frame (gunicorn.conf.py)", worker.pid)
