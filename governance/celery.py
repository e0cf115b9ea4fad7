"""Celery app: Redis when CELERY_BROKER_URL is set, eager (in-process) otherwise.

A worker runs `GAVEL_WORKER_CONCURRENCY` tasks at once in threads of one process (the settings'
CELERY_WORKER_POOL / CELERY_WORKER_CONCURRENCY, so the README's command needs no flags); its
threads share a bounded pool of PostgreSQL connections (`pool_worker_connections`).
"""
import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "governance.settings")

# Where the task bodies live (governance/work/tasks.py); `governance.work.sending` finds them there too.
TASK_PACKAGES = ["governance.work"]

app = Celery("gavel")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(TASK_PACKAGES)


@worker_init.connect
def preload_model_client(**_kwargs):
    """A worker calls models anyway: load litellm before taking the first task, so the first
    task's latency (and a claim's lease) is not spent importing it. Web processes never do this
    (SPEC §11.4: nothing on the start-up path imports litellm)."""
    from judging.llm import preload

    pool_worker_connections()
    preload()


def pool_worker_connections() -> bool:
    """Let a worker's threads share GAVEL_WORKER_DB_CONNECTIONS PostgreSQL connections.

    Django's psycopg pool replaces the per-thread persistent connection: a thread borrows a
    connection for each stretch of database work and gives it back at the end of the task and
    while it waits for a model (`governance.runs.connections.release`), so 64 calls in flight need a
    handful of connections, not 64. Web processes keep their one persistent connection.
    """
    from django.conf import settings
    from django.db import connections

    database = settings.DATABASES["default"]
    size = settings.GAVEL_WORKER_DB_CONNECTIONS
    # Gavel's backend (settings) or Django's own, named directly: the pool works with both.
    if database["ENGINE"] not in ("governance.postgresql", "django.db.backends.postgresql") or size <= 0:
        return False
    connections.close_all()
    database["CONN_MAX_AGE"] = 0  # the pool keeps the connections; Django must not keep them too
    database.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": size, "timeout": 60,
                                                  "name": "gavel-worker"}
    return True
