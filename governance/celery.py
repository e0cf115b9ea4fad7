"""Celery app: Redis when CELERY_BROKER_URL is set, eager (in-process) otherwise."""
import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "governance.settings")

app = Celery("gavel")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def preload_model_client(**_kwargs):
    """A worker calls models anyway: load litellm before taking the first task, so the first
    task's latency (and a claim's lease) is not spent importing it. Web processes never do this
    (SPEC §11.4: nothing on the start-up path imports litellm)."""
    from judging.llm import preload

    preload()
