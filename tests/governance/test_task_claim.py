"""The worker's path through one task (governance/work/queue.py, claims.py): the claim written as SQL
reads the row once and takes it as the queryset did; the result and its evidence record land together."""
import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from governance.models import EvidenceRecord, Task
from governance.work import claims, queue
from governance.work.tasks import run_task

CLEAN = "The planning tool books a room for the whole team and sends the agenda before the meeting."


@pytest.fixture
def queued(api, configuration, provider_server, settings):
    """A queued task of the `api` consumer, not yet run; the provider answers CLEAN."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    provider_server.set_default({"text": CLEAN})
    return Task.objects.create(kind="queued_task", consumer=api.consumer, configuration=configuration.identifier,
                               messages=[{"role": "user", "content": "Write the launch text."}])


def test_the_claim_reads_the_row_with_its_consumer_and_takes_it_once(queued):
    task, wait = queue.claim(queued.pk)
    assert (task.pk, task.status, task.attempts, wait) == (queued.pk, "running", 1, 0.0)
    assert task.lease_until is not None
    with CaptureQueriesContext(connection) as seen:
        assert task.consumer.name == queued.consumer.name  # loaded with the row: no query
    assert seen.captured_queries == []
    row = Task.objects.get(pk=queued.pk)
    assert (row.status, row.attempts, row.lease_until) == ("running", 1, task.lease_until)
    # A second claim while the lease runs takes nothing and says how long to wait.
    again, wait = queue.claim(queued.pk)
    assert again is None and wait > 1
    assert Task.objects.get(pk=queued.pk).attempts == 1


def test_a_claim_read_before_another_worker_took_the_row_takes_nothing(queued):
    from django.utils import timezone

    stale = claims.read(queued.pk)  # read by this worker ...
    assert queue.claim(queued.pk)[0] is not None  # ... taken meanwhile by another
    now = timezone.now()
    assert claims.take(stale, now, now) is False  # the attempt number it read is gone
    assert Task.objects.get(pk=queued.pk).attempts == 1


def test_an_unknown_or_finished_task_is_not_claimed(queued):
    import uuid

    assert queue.claim(uuid.uuid4()) == (None, 0.0)
    Task.objects.filter(pk=queued.pk).update(status="cancelled")
    assert queue.claim(queued.pk) == (None, 0.0)


def test_a_run_reads_the_task_row_once(queued):
    """The claim's SELECT is the run's one read of its task: the callback and the batch after it use
    the row as the run wrote it."""
    table = Task._meta.db_table
    with CaptureQueriesContext(connection) as seen:
        assert run_task.run(str(queued.pk)) == "done"
    reads = [q["sql"] for q in seen.captured_queries
             if q["sql"].lstrip().upper().startswith("SELECT") and f'FROM "{table}"' in q["sql"]]
    assert len(reads) == 1, reads
    row = Task.objects.get(pk=queued.pk)
    assert (row.status, row.answer, row.attempts) == ("ready", CLEAN, 1)
    assert EvidenceRecord.objects.filter(task=row).count() == 1


def test_a_result_whose_evidence_cannot_be_written_is_not_stored(queued, monkeypatch):
    """The result and its evidence record are both written or neither (one statement on PostgreSQL,
    one transaction elsewhere): no ready task without its evidence. Here the database refuses the
    record (a negative policy version breaks the column's check)."""
    from governance.evidence import records

    real = records.task_generation

    def refused(task, body):
        return {**real(task, body), "policy_version": -1}

    monkeypatch.setattr(records, "task_generation", refused)
    outcome, task = queue.run_claimed(queued.pk)
    assert outcome == "retry:internal_error"
    row = Task.objects.get(pk=queued.pk)
    assert (row.status, row.answer, row.outcome) == ("running", "", "")  # rolled back: still this claim's
    assert not EvidenceRecord.objects.filter(task=row).exists()
    assert (task.status, getattr(task, "finished_by_this_run", False)) == ("running", False)


def test_a_result_and_its_record_cost_no_transaction_on_postgresql(queued):
    """On PostgreSQL the result's UPDATE and the record's INSERT are one statement (no BEGIN/COMMIT)."""
    if connection.vendor != "postgresql":
        pytest.skip("one statement on PostgreSQL only; elsewhere one transaction")
    with CaptureQueriesContext(connection) as seen:
        outcome, task = queue.run_claimed(queued.pk)
    assert outcome == "done"
    writes = [q["sql"] for q in seen.captured_queries if "governance_evidencerecord" in q["sql"]]
    assert len(writes) == 1 and writes[0].startswith("WITH done AS (UPDATE"), writes
    row = Task.objects.get(pk=queued.pk)
    record = EvidenceRecord.objects.get(task=row)
    assert (row.status, record.surface, record.outcome, record.policy_version) == (
        "ready", "task", row.outcome, row.policy_version)


def test_a_result_written_after_its_claim_was_lost_writes_no_record(queued):
    """The record follows the result's conditional UPDATE: a run that lost its claim writes neither."""
    claimed, _wait = queue.claim(queued.pk)
    assert claimed is not None
    Task.objects.filter(pk=queued.pk).update(attempts=F("attempts") + 1)  # another worker took it over
    assert queue._store_result(claimed, {"outcome": "allowed", "text": CLEAN, "id": "c1", "policy_version": 1,
                                         "checks": []}) is False
    assert not EvidenceRecord.objects.filter(task_id=queued.pk).exists()
