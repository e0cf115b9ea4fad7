"""Evidence records as plain data: the one JSON shape of the API, the verify answer and the NDJSON export."""
import json

from governance.evidence.records import hash_of
from governance.models import EvidenceRecord

COLUMNS = ("id", "at", "surface", "configuration", "also", "policy_version", "outcome", "checks", "verification",
           "correlation_id", "actor", "task_id", "review_decision", "reviewed_by", "reviewed_at", "edited",
           "text_hash", "key_id")
# Rows read per round trip while streaming: memory stays bounded by this, whatever the count.
CHUNK = 2000
# At most this many records are answered for one text (a text delivered more often is still proven by these).
VERIFY_LIMIT = 100


def as_json(row: dict) -> dict:
    """One record as its JSON object (SPEC §13.1): a `review` object when a person reviewed the text."""
    review = None
    if row["review_decision"]:
        review = {"decision": row["review_decision"], "by": row["reviewed_by"],
                  "at": row["reviewed_at"].isoformat() if row["reviewed_at"] else None, "edited": bool(row["edited"])}
    return {
        "id": str(row["id"]), "at": row["at"].isoformat(), "surface": row["surface"],
        "configuration": row["configuration"], "also": row["also"] or [], "policy_version": row["policy_version"],
        "outcome": row["outcome"], "checks": row["checks"] or [], "verification": row["verification"],
        "correlation_id": row["correlation_id"], "actor": row["actor"],
        "task": str(row["task_id"]) if row["task_id"] else None, "review": review,
        "text_hash": row["text_hash"], "key_id": row["key_id"],
    }


def selected(*, since=None, until=None, surface=None, configuration=None, outcome=None, task=None, text_hash=None):
    """The records matching the filters as rows of plain values, oldest first (a stable order for paging
    and for archives that append)."""
    rows = EvidenceRecord.objects.all()
    if since is not None:
        rows = rows.filter(at__gte=since)
    if until is not None:
        rows = rows.filter(at__lt=until)
    for name, value in (("surface", surface), ("configuration", configuration), ("outcome", outcome),
                        ("task_id", task), ("text_hash", text_hash)):
        if value is not None:
            rows = rows.filter(**{name: value})
    return rows.order_by("at", "id").values(*COLUMNS)


def ndjson_lines(rows):
    """One JSON line per record, read from the database in chunks (`.iterator()`): constant memory."""
    for row in rows.iterator(chunk_size=CHUNK):
        yield json.dumps(as_json(row), ensure_ascii=False, separators=(",", ":")) + "\n"


def verify(text: str, *, within=None) -> dict:
    """The evidence of a text (SPEC §13.1): every record whose hash matches, oldest first, and its keyed hash
    when some record does (the hash of a text that matches nothing is never handed out: no oracle, §12.5).
    `within` (a Q) narrows the records to those the asker may see. The API's verify and the admin's
    *Verify a published text* page both answer from here."""
    text_hash = hash_of(text)
    rows = selected(text_hash=text_hash)
    if within is not None:
        rows = rows.filter(within)
    records = [as_json(row) for row in rows[:VERIFY_LIMIT]]
    return {"text_hash": text_hash if records else None, "count": len(records), "records": records}
