"""A real Celery worker on Redis runs Gavel's tasks against the test database."""
import os
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from governance.models import GovernanceEvent

ROOT = Path(__file__).resolve().parents[2]
BROKER = os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/14"

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _redis_reachable(url: str) -> bool:
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        client.ping()
        client.close()
        return True
    except redis.RedisError:
        return False


def _database_url() -> str:
    settings = connection.settings_dict
    if settings["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{settings['NAME']}"
    return f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"


@pytest.fixture
def worker():
    """Start `celery worker` on its own queue; stop it after the test."""
    if not _redis_reachable(BROKER):
        if os.environ.get("GAVEL_REQUIRE_SERVICES"):
            pytest.fail(f"Redis is required but not reachable at {BROKER}")
        pytest.skip(f"Redis not reachable at {BROKER}")
    if connection.settings_dict["NAME"].startswith("file:") or ":memory:" in connection.settings_dict["NAME"]:
        pytest.skip("the test database lives in memory; a worker process cannot open it")
    queue = f"gavel-test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "CELERY_BROKER_URL": BROKER, "DATABASE_URL": _database_url(), "GAVEL_TESTING": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "governance", "worker", "-Q", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    yield queue
    process.terminate()
    try:
        output, _ = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    if process.returncode not in (0, -15):
        print(output)


def test_a_worker_on_redis_purges_old_governance_events(worker):
    from celery import Celery

    now = timezone.now()
    old = GovernanceEvent.objects.create(correlation_id="old", decision="blocked", check_name="term_list",
                                         at=now - timedelta(days=40))
    recent = GovernanceEvent.objects.create(correlation_id="recent", decision="blocked", check_name="term_list",
                                            at=now - timedelta(days=2))
    client = Celery("gavel-test-client", broker=BROKER)
    result_id = client.send_task("governance.purge_governance", args=[30], queue=worker).id
    assert result_id
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and GovernanceEvent.objects.filter(pk=old.pk).exists():
        time.sleep(0.2)
    assert not GovernanceEvent.objects.filter(pk=old.pk).exists(), "the worker did not run the task within 60 s"
    assert GovernanceEvent.objects.filter(pk=recent.pk).exists()


def test_without_a_broker_tasks_run_eagerly(settings):
    from governance.celery import app
    from governance.work.tasks import purge_governance_task

    if not app.conf.task_always_eager:
        pytest.skip("a broker is configured for this run")
    GovernanceEvent.objects.create(correlation_id="old", decision="blocked", check_name="term_list",
                                   at=timezone.now() - timedelta(days=40))
    assert purge_governance_task.delay(30).get() == 1
