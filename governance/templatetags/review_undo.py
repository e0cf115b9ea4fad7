"""The offer after a review (issue 29): undo it, or keep the task as an example; shown while it stands."""
import time
from urllib.parse import urlencode

from django import template
from django.urls import reverse

from governance.review.forms import WAITING_CHOICE
from governance.review.undo_offer import current_offer

register = template.Library()


@register.inclusion_tag("review/_undo_offer.html", takes_context=True)
def undo_offer(context):
    offer = current_offer(context.get("request"))
    if offer is None:
        return {"offer": None}
    scope = offer.get("scope") or {}
    query = urlencode({k: v for k, v in scope.items() if not (k == "status" and v == WAITING_CHOICE)})
    return {"offer": offer, "short": offer["task"][:8], "seconds": max(0, int(offer["until"] - time.time())),
            "scope": scope, "undo_url": reverse("review:undo", args=[offer["task"]]),
            "task_url": reverse("review:task", args=[offer["task"]]) + (f"?{query}" if query else ""),
            "csrf_token": context.get("csrf_token"), "bulk": len(offer.get("tasks") or ()),
            "bulk_undo_url": reverse("review:bulk_undo"),
            "can_undo": offer.get("decision") == "rejected" or not offer.get("edited")}
