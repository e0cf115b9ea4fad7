"""`manage.py check --deploy`: evidence records hashed under another key than this process's.

A worker that started with another SECRET_KEY (a shell that generated a new one) writes evidence no
other process can verify, and verify answers `count: 0` with no error. The check says so, with the key
ids (docs/evidence.md: key_id), so the operator sees it before a publisher asks.
"""
from django.core.checks import Tags, Warning, register
from django.db import DatabaseError
from django.db.models import Count, Max

from governance import messages
from governance.evidence.records import evidence_key
from governance.models import EvidenceRecord

CHECK_ID = "gavel.W001"


@register(Tags.security, deploy=True)
def evidence_under_another_key(app_configs=None, **kwargs) -> list[Warning]:
    current = evidence_key()[1]
    try:
        others = list(EvidenceRecord.objects.exclude(key_id=current).values("key_id")
                      .annotate(count=Count("pk"), newest=Max("at")).order_by("-count"))
    except DatabaseError:  # no database yet (before migrate): nothing to compare
        return []
    if not others:
        return []
    count = sum(row["count"] for row in others)
    newest = max(row["newest"] for row in others)
    message = messages.render(messages.EVIDENCE_OTHER_KEY, count=count, newest=newest.isoformat(timespec="seconds"),
                              key_ids=", ".join(row["key_id"] for row in others), current=current)
    return [Warning(message, hint=str(messages.EVIDENCE_OTHER_KEY_HINT), id=CHECK_ID)]
