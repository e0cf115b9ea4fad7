"""Celery app: Redis when CELERY_BROKER_URL is set, eager (in-process) otherwise."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "governance.settings")

app = Celery("gavel")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
