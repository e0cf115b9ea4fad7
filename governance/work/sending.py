"""Celery tasks by their registered names, for the services that queue work.

The task bodies (`governance.work.tasks`) call the queue, the batches and the callbacks; those
services send the same tasks. They look a task up by its name (the names are fixed: a running
worker and a queued message know the task by it) instead of importing the bodies, so the
services never import what calls them back. In a web process the bodies are registered on first
use by Celery's own autodiscovery; a worker has them from its start.
"""
from governance.celery import TASK_PACKAGES, app

RUN_TASK = "governance.run_task"
PUBLISH_BATCH = "governance.publish_batch"
DELIVER_CALLBACK = "governance.deliver_callback"
DELIVER_BATCH_CALLBACK = "governance.deliver_batch_callback"


def celery_task(name: str):
    """The Celery task registered under `name`; eager mode runs it in this process as before."""
    if name not in app.tasks:
        app.autodiscover_tasks(TASK_PACKAGES, force=True)
    return app.tasks[name]


def producer_or_acquire():
    """One broker connection for many sends (a batch's fan-out)."""
    return app.producer_or_acquire()
