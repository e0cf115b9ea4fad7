"""A task traced through the log (SPEC §13.1): its events and evidence found from the task, the task from them.

A task's events carry the correlation id of its screening, not the task's id; the review's events name the
task in their facts. Searching the log by a task's id (its first 8 characters are enough, dashes optional)
finds both.
"""
import re

from django.db.models import Q
from django.urls import reverse
from django.utils.http import urlencode

from governance.models import EvidenceRecord, GovernanceEvent, Task

# How many tasks one search may name: a short prefix matching many tasks still makes one bounded query.
MAX_TASKS = 50


def task_id_prefix(term: str) -> str | None:
    """The hex digits of a task id or its beginning (8 to 32 of them, dashes allowed), else None."""
    digits = term.strip().lower().replace("-", "")
    return digits if re.fullmatch(r"[0-9a-f]{8,32}", digits) else None


def dashed(digits: str) -> str:
    """A prefix of hex digits in a UUID's text form (8-4-4-4-12): PostgreSQL compares the dashed text of its
    native uuid; Django strips the dashes again on a database that stores the 32 digits (SQLite)."""
    cuts, parts, at = (8, 4, 4, 4, 12), [], 0
    for size in cuts:
        if at >= len(digits):
            break
        parts.append(digits[at:at + size])
        at += size
    return "-".join(parts)


def events_of(tasks) -> Q:
    """The events of these tasks: their screenings' events (the generation's, and an accepted edit's, which
    the review event names), and every event that names one of them in its facts."""
    tasks = list(tasks)
    ids = [str(t.pk) for t in tasks]
    correlation_ids = [t.correlation_id for t in tasks if t.correlation_id]
    correlation_ids += [c for c in GovernanceEvent.objects.filter(check_name="review", detail__task__in=ids)
                        .values_list("detail__screening", flat=True) if isinstance(c, str) and c]
    return Q(correlation_id__in=correlation_ids) | Q(detail__task__in=ids)


def event_search(term: str) -> Q | None:
    """What the log's search adds for a task id (short or full), or None when the term is none."""
    digits = task_id_prefix(term)
    if digits is None:
        return None
    tasks = Task.objects.filter(id__startswith=dashed(digits)).only("id", "correlation_id")[:MAX_TASKS]
    return events_of(tasks) if tasks else None


def task_of_event(event: GovernanceEvent) -> Task | None:
    """The task an event belongs to: named in its facts, or the task whose screening it is."""
    named = (event.detail or {}).get("task") if isinstance(event.detail, dict) else None
    if named:
        return Task.objects.filter(pk=named).only("id").first() if task_id_prefix(str(named)) else None
    if not event.correlation_id:
        return None
    return Task.objects.filter(correlation_id=event.correlation_id).only("id").first()


def admin_links(task: Task) -> dict:
    """Links from a task to its governance events and evidence records in the admin, with counts."""
    return {
        "events_url": reverse("admin:governance_governanceevent_changelist") + "?" + urlencode({"q": str(task.pk)}),
        "events": GovernanceEvent.objects.filter(events_of([task])).count(),
        "evidence_url": reverse("admin:governance_evidencerecord_changelist") + "?" + urlencode(
            {"task__id__exact": str(task.pk)}),
        "evidence": EvidenceRecord.objects.filter(task=task).count(),
    }


def evidence_of(task: Task) -> list[EvidenceRecord]:
    return list(EvidenceRecord.objects.filter(task=task).order_by("at"))
