"""Write evidence records where a text leaves Gavel (SPEC §13.1): one call at each place a delivery finishes.

A record is written for a delivered text only: a blocked text, an empty answer (tool calls alone) and a
policy test's screening deliver nothing. It keeps facts and the keyed hash, never the text. The same calls
count every finished run for /metrics (governance/evidence/metrics.py), blocked ones too.
"""
from django.conf import settings
from django.utils import timezone

from governance.evidence import hashing, metrics
from governance.models import EvidenceRecord, Task

# Only these keys of a check are facts worth keeping; everything else of a body is left out.
CHECK_KEYS = ("check", "result", "reason", "field")  # field: a request member not sent on (check `request`)
_key: dict = {}


def evidence_key() -> tuple[bytes, str]:
    """(key, key id) derived from GAVEL_EVIDENCE_SECRET (SECRET_KEY unless set), derived once per secret."""
    secret = settings.GAVEL_EVIDENCE_SECRET or settings.SECRET_KEY
    if _key.get("secret") != secret:
        key = hashing.derive_key(secret)
        _key.update(secret=secret, key=key, id=hashing.key_id(key))
    return _key["key"], _key["id"]


def hash_of(text: str) -> str:
    return hashing.text_hash(text, evidence_key()[0])


def _checks(checks) -> list[dict]:
    return [{k: c[k] for k in CHECK_KEYS if c.get(k) is not None} for c in checks or []]


def record(body: dict, *, surface: str, configuration: str, also=(), actor: str = "", text: str | None = None,
           task: Task | None = None, review: dict | None = None) -> bool:
    """Write the evidence of one delivered text (body: the §11.1 response or a task's stored facts).
    Returns whether a record was written."""
    values = _values(body, surface=surface, configuration=configuration, also=also, actor=actor, text=text,
                     task=task, review=review)
    if values is None:
        return False
    _insert(values)
    metrics.evidence_written(surface)
    return True


def _values(body: dict, *, surface: str, configuration: str, also=(), actor: str = "", text: str | None = None,
            task: Task | None = None, review: dict | None = None) -> dict | None:
    """The record's values, or None when nothing was delivered (blocked, or no text)."""
    text = body.get("text") if text is None else text
    if body.get("outcome") == "blocked" or not text:
        return None
    key, key_id = evidence_key()
    return {
        "surface": surface, "configuration": configuration or "", "also": list(also),
        "policy_version": body.get("policy_version"), "outcome": body.get("outcome") or "",
        "checks": _checks(body.get("checks")), "verification": (body.get("verification") or {}).get("status", ""),
        "correlation_id": body.get("id") or "", "actor": (actor or "")[:150], "task_id": task.pk if task else None,
        "text_hash": hashing.text_hash(text, key), "key_id": key_id, **(review or {}),
    }


_FIELDS = [field for field in EvidenceRecord._meta.concrete_fields]
_statements: dict = {}


def _insert(values: dict) -> None:
    """One INSERT, written out: every delivered text writes one record, and the ORM's create (building
    the instance, compiling the statement) cost a screening 0.2 ms of CPU more than the statement
    itself. Each value is prepared by its own model field, unnamed fields get the field's default
    (the id, the time), and nothing listens for this model's save signals."""
    from django.db import connection

    sql = _statements.get(connection.vendor)
    if sql is None:
        quote = connection.ops.quote_name
        sql = _statements[connection.vendor] = (
            f"INSERT INTO {quote(EvidenceRecord._meta.db_table)} ({', '.join(quote(f.column) for f in _FIELDS)}) "
            f"VALUES ({', '.join(['%s'] * len(_FIELDS))})")
    with connection.cursor() as cursor:
        cursor.execute(sql, _params(values, connection))


def _params(values: dict, connection) -> list:
    return [field.get_db_prep_save(values[field.attname] if field.attname in values else field.get_default(),
                                   connection) for field in _FIELDS]


def insert_after(statement: str, params: list, values: dict) -> int:
    """PostgreSQL: `statement` (one that changes rows and returns them, e.g. an UPDATE … RETURNING 1)
    and the record of `values`, written once for each row it returned, as one statement: both or
    neither. Returns how many records were written (0 when the statement changed nothing)."""
    from django.db import connection

    quote = connection.ops.quote_name
    key = ("after", connection.vendor)
    if key not in _statements:
        # Each value cast to its column's type (an untyped literal in a SELECT would be read as text);
        # text to the base type, so a value too long for its column is an error, not cut short.
        casts = ["text" if f.get_internal_type() in ("CharField", "SlugField", "TextField") else f.db_type(connection)
                 for f in _FIELDS]
        _statements[key] = (
            f"INSERT INTO {quote(EvidenceRecord._meta.db_table)} ({', '.join(quote(f.column) for f in _FIELDS)}) "
            f"SELECT {', '.join(f'%s::{cast}' for cast in casts)} FROM done")
    with connection.cursor() as cursor:
        cursor.execute(f"WITH done AS ({statement}) {_statements[key]}", [*params, *_params(values, connection)])
        return cursor.rowcount


def record_screening(screening, version: int, *, surface: str = "screening") -> None:
    """A screening's verdict on a caller's text (governance/screening/service.py)."""
    facts = screening.facts
    if not facts.log_events:
        return
    body = {"id": facts.correlation_id, "policy_version": version, "outcome": screening.outcome,
            "checks": screening.checks, "verification": screening.verification}
    metrics.run_finished(surface, getattr(facts.configuration, "identifier", ""), body["outcome"], body["checks"])
    record(body, surface=surface, configuration=getattr(facts.configuration, "identifier", ""),
           also=[c.identifier for c in facts.also], actor=facts.actor, text=screening.output.text)


def record_completion(call, body: dict) -> None:
    """A completion delivered on a protocol (governance/runs/completions.py). A task's generation is
    recorded when the task stores it (record_task_generation), after its field check."""
    surface = getattr(call, "surface", EvidenceRecord.Surface.API)
    if surface == EvidenceRecord.Surface.TASK:
        return
    metrics.run_finished(surface, call.configuration.identifier, body.get("outcome"), body.get("checks"))
    record(body, surface=surface, configuration=call.configuration.identifier,
           also=[c.identifier for c in call.also], actor=call.actor)


def record_tool_call(body: dict, *, configuration: str, actor: str, text: str) -> None:
    """An MCP tool call (SPEC §14): every call, a refused one too, so its record is written whatever the
    outcome. `text` is the result delivered, or, when none was, the call's (masked) arguments as JSON:
    only its keyed hash is kept."""
    metrics.run_finished(EvidenceRecord.Surface.MCP, configuration, body.get("outcome"), body.get("checks"))
    key, key_id = evidence_key()
    _insert({"surface": EvidenceRecord.Surface.MCP, "configuration": configuration or "", "also": [],
             "policy_version": body.get("policy_version"), "outcome": body.get("outcome") or "",
             "checks": _checks(body.get("checks")), "verification": "", "correlation_id": body.get("id") or "",
             "actor": (actor or "")[:150], "task_id": body.get("task"), "text_hash": hashing.text_hash(text, key),
             "key_id": key_id})
    metrics.evidence_written(EvidenceRecord.Surface.MCP)


def _task_actor(task: Task) -> str:
    return f"consumer:{task.consumer.name}" if task.consumer_id else "task"


def record_task_generation(task: Task, body: dict) -> None:
    """A task that became ready (its answer is delivered to the consumer: GET tasks/{id}, callbacks) or blocked."""
    values = task_generation(task, body)
    if values is not None:
        _insert(values)
    counted_task_generation(task, body, written=values is not None)


def task_generation(task: Task, body: dict) -> dict | None:
    """The values of a task's record (None for a blocked task or one without text): the queue writes
    them in the statement that stores the result where it can (insert_after)."""
    return _values(body, surface=EvidenceRecord.Surface.TASK, configuration=task.configuration, also=task.also,
                   actor=_task_actor(task), task=task)


def counted_task_generation(task: Task, body: dict, *, written: bool = True) -> None:
    """Count a task's finished run for /metrics, and its record when one was written (here, or by
    insert_after in the statement that stored the result)."""
    metrics.run_finished(EvidenceRecord.Surface.TASK, task.configuration, body.get("outcome"), body.get("checks"))
    if written:
        metrics.evidence_written(EvidenceRecord.Surface.TASK)


def record_review(task: Task) -> None:
    """A task an editor accepted, with or without an edit: the final text, the checks it passed, the review."""
    metrics.reviewed("accepted")
    body = {"id": task.correlation_id, "policy_version": task.policy_version, "outcome": task.outcome,
            "checks": task.checks, "verification": task.verification}
    review = {"review_decision": EvidenceRecord.Review.ACCEPTED,
              "reviewed_by": task.reviewed_by.get_username() if task.reviewed_by_id else "",
              "reviewed_at": task.reviewed_at or timezone.now(), "edited": bool(task.edited)}
    record(body, surface=EvidenceRecord.Surface.TASK, configuration=task.configuration, also=task.also,
           actor=_task_actor(task), text=task.edited_text if task.edited else task.answer, task=task, review=review)


def withdraw_review(task: Task) -> int:
    """An editor undid an accept within the undo window: the review it recorded did not stand, so its
    evidence record goes (the record of the delivered answer stays). Returns how many were removed."""
    removed, _ = EvidenceRecord.objects.filter(task=task, review_decision=EvidenceRecord.Review.ACCEPTED).delete()
    return removed


def record_rejection(task: Task) -> None:
    """A task an editor rejected: nothing is delivered, so no evidence; counted for /metrics."""
    metrics.reviewed("rejected")
