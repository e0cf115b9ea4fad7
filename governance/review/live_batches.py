"""The dashboard's batches in progress, live (issue 29): the page polls a signature of their progress, as
the queue does, and swaps the region when it changed (`governance/static/review/review.js`)."""
import hashlib

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from governance.models import Batch
from governance.review.access import editor_required
from governance.review.views import batch_progress


def in_progress() -> list[dict]:
    return [batch_progress(batch.pk) for batch in
            Batch.objects.filter(finished_at__isnull=True).order_by("-created")[:10]]


def signature(progress: list[dict]) -> str:
    parts = "|".join(f"{p['batch'].pk}:{p['finished']}:{p['total']}" for p in progress if p)
    return hashlib.blake2b(parts.encode(), digest_size=8).hexdigest()


@require_GET
@editor_required
def state(request):
    """What the dashboard polls: a signature of the batches' progress (no text, no names)."""
    progress = in_progress()
    return JsonResponse({"signature": signature(progress),
                         "batches": [{"id": str(p["batch"].pk), "finished": p["finished"], "total": p["total"]}
                                     for p in progress if p]})
