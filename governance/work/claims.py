"""The claim's two statements (governance/work/queue.py `claim`), written as SQL once per process, and the
result written with its evidence record as one statement (finish_with_record).

The ORM compiled the claim's SELECT and UPDATE again for every task (py-spy on one worker draining 600
instant tasks: the claim was 18% of the worker's samples, 4% written out here). Both are built once per
database vendor from the model's metadata (PostgreSQL and SQLite alike) and do what the querysets did:
the same condition, the same one commit.
"""
from __future__ import annotations

import contextlib

from django.db import connections, transaction
from django.db.models.sql import UpdateQuery

from governance.evidence import records
from governance.models import Consumer, Task

Status = Task.Status


class Statements:
    """The claim's SELECT and UPDATE as SQL, built once per database vendor from the model's metadata.

    The SELECT reads what a run uses of its task (the rest of the row stays deferred: read if ever
    touched) and the consumer's name; the UPDATE is the conditional write the claim always was.
    """

    FIELDS = ("id", "kind", "status", "consumer", "configuration", "also", "messages", "field", "site", "language",
              "callback_url", "batch", "attempts", "lease_until", "next_attempt_at", "finished_at", "correlation_id",
              "created", "updated")
    built: dict[str, tuple[str, str]] = {}

    @classmethod
    def of(cls, connection) -> tuple[str, str]:
        statements = cls.built.get(connection.vendor)
        if statements is None:
            quote = connection.ops.quote_name
            meta = Task._meta
            table, consumers = quote(meta.db_table), quote(Consumer._meta.db_table)

            def column(name):
                return quote(meta.get_field(name).column)

            fields = ", ".join(f"{table}.{column(name)}" for name in cls.FIELDS)
            select = (f"SELECT {fields}, {consumers}.{quote(Consumer._meta.get_field('name').column)} "
                      f"AS claim_consumer_name FROM {table} LEFT OUTER JOIN {consumers} "
                      f"ON {consumers}.{quote(Consumer._meta.pk.column)} = {table}.{column('consumer')} "
                      f"WHERE {table}.{column('id')} = %s")
            update = (f"UPDATE {table} SET {column('status')} = %s, {column('lease_until')} = %s, "
                      f"{column('attempts')} = {column('attempts')} + 1, {column('next_attempt_at')} = NULL, "
                      f"{column('updated')} = %s WHERE {column('id')} = %s AND {column('attempts')} = %s "
                      f"AND ({column('status')} = %s OR ({column('status')} = %s AND {column('lease_until')} < %s))")
            statements = cls.built[connection.vendor] = (select, update)
        return statements


def _connection():
    return connections[Task.objects.db]


def read(task_id) -> Task | None:
    """The task's row as a run uses it (None if there is none), its consumer's name loaded."""
    connection = _connection()
    pk = Task._meta.pk
    select, _update = Statements.of(connection)
    task = next(iter(Task.objects.raw(select, [pk.get_db_prep_value(pk.to_python(task_id), connection)])), None)
    if task is not None and task.consumer_id is not None:
        consumer = Consumer.from_db(task._state.db, ["id", "name"], [task.consumer_id, task.claim_consumer_name])
        Task.consumer.field.set_cached_value(task, consumer)
    return task


def take(task: Task, now, lease_until) -> bool:
    """The claim's conditional UPDATE: whether this worker now holds the task."""
    connection = _connection()
    _select, update = Statements.of(connection)

    def at(value):
        return Task._meta.get_field("lease_until").get_db_prep_value(value, connection)

    with connection.cursor() as cursor:
        cursor.execute(update, [Status.RUNNING, at(lease_until), at(now),
                                Task._meta.pk.get_db_prep_value(task.pk, connection), task.attempts,
                                Status.QUEUED, Status.RUNNING, at(now)])
        return cursor.rowcount == 1


def one_statement_results() -> bool:
    """Whether a result and its evidence record are written as one statement (finish_with_record)."""
    return _connection().vendor == "postgresql"


def finish_with_record(rows, changes: dict, record: dict) -> bool:
    """PostgreSQL: `rows.update(**changes)`, the conditional write of a run's result, and when it
    changed the row the task's evidence record (`record`: governance.evidence.records.task_generation),
    as one statement — both or neither, with no BEGIN and COMMIT of their own (a transaction around
    the two cost a run three round trips more). Returns whether the result was written."""
    query = rows.query.chain(UpdateQuery)
    query.add_update_values(changes)
    query.clear_select_clause()
    sql, params = query.get_compiler(rows.db).as_sql()
    # Inside a caller's transaction, a savepoint: a refused statement leaves that transaction usable.
    with transaction.atomic() if _connection().in_atomic_block else contextlib.nullcontext():
        return records.insert_after(f"{sql} RETURNING 1", list(params), record) == 1
