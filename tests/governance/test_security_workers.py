"""No provider answer can poison a task, with a real worker (issue 17, finding 7; SPEC §9, §10.1).

PostgreSQL refuses NUL in text and lone surrogates cannot be encoded: before the fix such an
answer left the task `running`, re-run for ever, a provider call each time. Here a worker
started as in test_task_workers.py runs them against the test database (PostgreSQL in CI),
and a database trigger makes storing one task's result fail, so its run raises unexpectedly.
"""
import pytest
from django.db import connection

from governance.models import Configuration, Task
from tests.governance.test_task_workers import (  # noqa: F401  (fixtures)
    CLEAN, broker, requests_per_task, submit, wait_until, workers, writers,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

POISON = "POISON-ROW-7"


@pytest.fixture
def refusing_database(db):
    """A trigger that makes the database refuse a task result holding POISON, as a bug in storing would."""
    table = Task._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"""
                CREATE OR REPLACE FUNCTION gavel_test_refuse_poison() RETURNS trigger AS $$
                BEGIN
                    IF NEW.answer LIKE '%{POISON}%' THEN RAISE EXCEPTION 'refused by the test trigger'; END IF;
                    RETURN NEW;
                END $$ LANGUAGE plpgsql""")
            cursor.execute(f"CREATE TRIGGER gavel_test_refuse_poison BEFORE UPDATE ON {table} "
                           "FOR EACH ROW EXECUTE FUNCTION gavel_test_refuse_poison()")
        else:
            cursor.execute(f"CREATE TRIGGER gavel_test_refuse_poison BEFORE UPDATE ON {table} "
                           f"WHEN NEW.answer LIKE '%{POISON}%' BEGIN SELECT RAISE(ABORT, 'refused'); END")
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER IF EXISTS gavel_test_refuse_poison"
                       f"{' ON ' + table if connection.vendor == 'postgresql' else ''}")


def test_surrogates_and_nul_end_ready_cleaned_and_a_task_whose_run_raises_is_bounded(
        workers, writers, provider_server, refusing_database):
    consumer, clean, _strict = writers
    Configuration.objects.filter(pk=clean.pk).update(timeout=10)
    provider_server.script([
        {"text": f"{CLEAN} Lone \ud800 surrogate.", "for_model": "writer"},
    ])
    provider_server.set_default({"text": CLEAN})
    workers.start(1, GAVEL_TASK_MAX_ATTEMPTS=3)

    surrogate = submit(consumer, clean, 1)
    wait_until(lambda: Task.objects.get(pk=surrogate.pk).status not in ("queued", "running"), 90, workers,
               "the surrogate task to finish")
    provider_server.script([{"text": f"{CLEAN} A NUL \u0000 here."}])
    nul = submit(consumer, clean, 2)
    wait_until(lambda: Task.objects.get(pk=nul.pk).status not in ("queued", "running"), 90, workers,
               "the NUL task to finish")
    for task, cleaned in ((surrogate, "Lone \ufffd surrogate."), (nul, "A NUL  here.")):
        row = Task.objects.get(pk=task.pk)
        assert row.status == "ready", (row.status, row.failure, workers.output())
        assert row.answer.endswith(cleaned) and row.attempts == 1

    provider_server.set_default({"text": f"{CLEAN} {POISON}"})
    poisoned = submit(consumer, clean, 3)
    wait_until(lambda: Task.objects.get(pk=poisoned.pk).status == "failed", 120, workers,
               "the task whose run raises to fail")
    row = Task.objects.get(pk=poisoned.pk)
    assert row.failure["code"] == "internal_error" and row.attempts == 3
    assert "refused by the test trigger" not in row.failure["message"]  # no internals for the consumer
    assert requests_per_task(provider_server)[3] <= 3
    # And it stays failed: no further run, no further provider call.
    import time

    time.sleep(3)
    assert Task.objects.get(pk=poisoned.pk).attempts == 3 and requests_per_task(provider_server)[3] == 3
