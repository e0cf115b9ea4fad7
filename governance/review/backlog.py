"""The dashboard's row for the review's day (issue 43): the backlog (waiting count, age of the oldest, reviews
per day and per editor), the live policy version, the share of delivered texts a person reviewed, and the
texts delivered without findings. Counts of task statuses and evidence records only, never a text."""
from __future__ import annotations

from django.db.models import Count, Min
from django.utils import timezone
from django.utils.timesince import timesince

from governance.models import EvidenceRecord, PolicyVersion, Task
from governance.review.forms import WAITING

REVIEWED = (Task.Review.ACCEPTED, Task.Review.REJECTED)


def backlog(since, days: int) -> dict:
    waiting = Task.objects.filter(status__in=WAITING)
    found = waiting.aggregate(count=Count("pk"), oldest=Min("created"))
    reviews = Task.objects.filter(reviewed_at__gte=since, review_decision__in=REVIEWED)
    per_editor = [{"editor": row["reviewed_by__username"] or "—", "count": row["n"],
                   "per_day": round(row["n"] / days, 1)}
                  for row in reviews.values("reviewed_by__username").annotate(n=Count("pk")).order_by("-n")]
    total = sum(row["count"] for row in per_editor)
    # Every text delivered in the period (each delivery's record; an accept's record is not a delivery).
    delivered = EvidenceRecord.objects.filter(at__gte=since, review_decision="")
    delivered_count = delivered.count()
    reviewed = delivered.filter(task__review_decision__in=REVIEWED).count()
    clean = delivered.filter(outcome="allowed")
    return {
        "waiting": found["count"], "oldest": found["oldest"],
        "oldest_age": timesince(found["oldest"], timezone.now()) if found["oldest"] else "",
        "reviews": total, "reviews_per_day": round(total / days, 1), "per_editor": per_editor,
        "live_version": PolicyVersion.current(),
        "delivered": delivered_count, "reviewed": reviewed,
        "reviewed_share": round(100 * reviewed / delivered_count) if delivered_count else None,
        "without_findings": clean.count(),
        "without_findings_unreviewed": clean.exclude(task__review_decision__in=REVIEWED).count(),
    }
