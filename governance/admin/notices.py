"""What happened to a person's policy drafts, told in the admin (SPEC §12.5): the admin home's panel *Drafts
waiting*, and one-time messages on the next admin page (decision 0053).

The messages are read from the drafts' governance events since the person last saw them: a draft submitted
(to those who may publish it), sent back or published (to its author), a scheduled publish refused (to who
scheduled it), an approval withdrawn because someone changed the draft (to its author and to who had scheduled
it). Who saw what is a marker per user in the cache; a missing marker (a new cache, an eviction)
means "the last day", so a lost cache repeats at most a day's notices and never floods anyone.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

from django.contrib import messages
from django.core.cache import cache
from django.db.models import CharField, F, OuterRef, Subquery, Value
from django.db.models.functions import Cast, Concat
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince
from django.utils.translation import gettext_lazy as _

from governance.middleware import is_json_path
from governance.models import GovernanceEvent, PolicyDraft, PolicyDraftComment
from governance.policy import proposals
from governance.policy.schedule_failures import failure_text

logger = logging.getLogger("gavel.admin")

MARKER_KEY = "gavel:draft-notices:{pk}"
MARKER_SECONDS = 90 * 24 * 3600
FIRST_LOOK = timedelta(days=1)  # a missing marker: only the last day's notices
RECENT = timedelta(days=7)  # "recently published" on the admin home
MAX_NOTICES = 20
MAX_ROWS = 10
MAX_EVENTS = 200  # the newest events read per page load
MAX_OWN_OPEN = 50  # the person's newest open drafts looked at for "sent back"
NOTICE_DECISIONS = ("draft_submitted", "draft_sent_back", "draft_published", "draft_refused")
# Admin paths that answer no page a person reads (JavaScript, JSON for select boxes).
NOT_PAGES = ("jsi18n/", "autocomplete/")

MSG_NOTICE_SUBMITTED = _("Draft “%(title)s” was submitted by %(who)s and waits for an approver.")
MSG_NOTICE_SENT_BACK = _("Your draft “%(title)s” was sent back by %(who)s; the comment is on its page.")
MSG_NOTICE_PUBLISHED = _("Your draft “%(title)s” was published as policy version %(version)s by %(who)s.")
MSG_NOTICE_SCHEDULE_FAILED = _("The draft “%(title)s” you scheduled was not published at its time: %(reason)s")
MSG_NOTICE_APPROVAL_WITHDRAWN = _("Your draft “%(title)s” was changed by %(who)s after it was approved, so its "
                                  "submission was withdrawn; read the change, then submit it again.")
MSG_NOTICE_SCHEDULE_WITHDRAWN = _("The draft “%(title)s” you scheduled was changed by %(who)s after you approved "
                                  "it, so its schedule was withdrawn and nothing will be published at that time.")


def draft_url(pk) -> str:
    return reverse("admin:governance_policydraft_change", args=[pk])


def _marker(user, now):
    seen = cache.get(MARKER_KEY.format(pk=user.pk))
    earliest = now - FIRST_LOOK
    if seen is None:
        return earliest
    # Never further back than the marker is kept: an older marker could only be a clock's mistake.
    return max(datetime.fromtimestamp(float(seen), tz=dt_timezone.utc), now - timedelta(seconds=MARKER_SECONDS))


def _notice(user, label: str, event: GovernanceEvent, draft: PolicyDraft) -> tuple[int, str] | None:
    kind, own = event.detail.get("event"), event.actor == label
    facts = {"title": str(draft), "who": event.actor or "—"}
    if kind == "draft.publish_refused" and event.detail.get("scheduled") and own:
        reason = failure_text(draft.schedule_failure) or event.detail.get("reason", "")
        return messages.ERROR, MSG_NOTICE_SCHEDULE_FAILED % {**facts, "reason": reason}
    if own:
        return None  # one's own act is no news
    if kind == "draft.approval_withdrawn":
        if event.detail.get("approver") and event.detail.get("approver") == label:
            return messages.WARNING, MSG_NOTICE_SCHEDULE_WITHDRAWN % facts
        if proposals.is_author(user, draft):
            return messages.WARNING, MSG_NOTICE_APPROVAL_WITHDRAWN % facts
        return None
    if kind == "draft.submitted" and draft.status == PolicyDraft.Status.SUBMITTED and proposals.can_publish(
            user, draft):
        return messages.INFO, MSG_NOTICE_SUBMITTED % facts
    if kind == "draft.sent_back" and proposals.is_author(user, draft):
        return messages.WARNING, MSG_NOTICE_SENT_BACK % facts
    if kind == "draft.published" and proposals.is_author(user, draft):
        return messages.SUCCESS, MSG_NOTICE_PUBLISHED % {**facts, "version": event.detail.get("version")}
    return None


def notices_for(user, since, until) -> list[tuple[int, str, int]]:
    """(level, text, draft id) for every draft event between the two times that is news to `user`, oldest
    first: of many, the newest (the marker moves past the rest)."""
    events = list(GovernanceEvent.objects.filter(
        check_name="policy", decision__in=NOTICE_DECISIONS, at__gt=since, at__lte=until).order_by("-at", "-id")
        [:MAX_EVENTS])[::-1]
    if not events:
        return []
    drafts = PolicyDraft.objects.in_bulk([e.detail.get("draft") for e in events if e.detail.get("draft")])
    label, found = proposals.actor_label(user), []
    for event in events:
        draft = drafts.get(event.detail.get("draft"))
        notice = _notice(user, label, event, draft) if draft is not None else None
        if notice is not None:
            found.append((*notice, draft.pk))
    return found[-MAX_NOTICES:]


def is_admin_page(request) -> bool:
    """A page of the admin a person reads: GET, under the admin, no JSON path, no script or XHR."""
    path = request.path
    return (request.method == "GET" and path.startswith(reverse("admin:index")) and not is_json_path(path)
            and not path.endswith(NOT_PAGES) and request.headers.get("x-requested-with") != "XMLHttpRequest")


class DraftNoticesMiddleware:
    """Adds each draft notice once, as a Django message, on the next admin page a person loads."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_staff and is_admin_page(request):
            try:
                self.tell(request, user)
            except Exception:  # noqa: BLE001 -- a notice is a courtesy: a cache or query failure never costs the page
                logger.warning("draft notices skipped for user %s", user.pk, exc_info=True)
        return self.get_response(request)

    def tell(self, request, user) -> None:
        now = timezone.now()
        for level, text, pk in notices_for(user, _marker(user, now), now):
            messages.add_message(request, level, format_html('{} <a href="{}">{}</a>', text, draft_url(pk),
                                                             _("Open the draft")))
        cache.set(MARKER_KEY.format(pk=user.pk), now.timestamp(), MARKER_SECONDS)


# --- the admin home's panel -------------------------------------------------------------------


def _age(moment, now) -> str:
    return timesince(moment, now, depth=1)


def _last_event(decision: str):
    """The time of the draft's (OuterRef) last governance event of `decision`, as a subquery."""
    key = Concat(Value("draft-"), Cast(OuterRef("pk"), CharField()), output_field=CharField())
    return (GovernanceEvent.objects.filter(correlation_id=key, check_name="policy", decision=decision)
            .order_by("-at", "-id").values("at")[:1])


def waiting(user, now=None) -> dict:
    """The admin home's *Drafts waiting*: submitted drafts for those who may publish (author, age), the
    person's own drafts sent back to them, and drafts published in the last week (theirs; every one for
    an approver)."""
    now = now or timezone.now()
    approver = proposals.may_approve(user)
    submitted = []
    if approver:
        # Waiting since it was submitted: `updated_at` moves with any edit (the report's judges, a comment).
        rows = (PolicyDraft.objects.filter(status=PolicyDraft.Status.SUBMITTED)
                .annotate(submitted_at=Subquery(_last_event("draft_submitted")))
                .order_by(F("submitted_at").asc(nulls_last=True), "updated_at", "id")[:MAX_ROWS])
        for draft in rows:
            since = draft.submitted_at or draft.updated_at
            submitted.append({"draft": draft, "url": draft_url(draft.pk), "author": draft.author_label,
                              "age": _age(since, now), "own": not proposals.can_publish(user, draft)})
    # The person's newest open drafts, each with its last comment, in one query.
    own_open = {f"draft-{d.pk}": d for d in PolicyDraft.objects.filter(author=user, status=PolicyDraft.Status.OPEN)
                .annotate(last_comment=Subquery(PolicyDraftComment.objects.filter(draft=OuterRef("pk"))
                                                .order_by("-created_at", "-id").values("text")[:1]))
                .order_by("-updated_at", "-id")[:MAX_OWN_OPEN]}
    sent_back = []
    if own_open:
        last = {}
        for event in GovernanceEvent.objects.filter(correlation_id__in=list(own_open), check_name="policy",
                                                    decision__in=("draft_submitted", "draft_sent_back")
                                                    ).order_by("at", "id"):
            last[event.correlation_id] = event
        for key, event in last.items():
            if event.detail.get("event") == "draft.sent_back":
                draft = own_open[key]
                sent_back.append({"draft": draft, "url": draft_url(draft.pk), "by": event.actor,
                                  "age": _age(event.at, now), "comment": draft.last_comment or ""})
    published = PolicyDraft.objects.filter(status=PolicyDraft.Status.PUBLISHED, updated_at__gte=now - RECENT)
    if not approver:
        published = published.filter(author=user)
    recent = [{"draft": d, "url": draft_url(d.pk), "author": d.author_label, "approver": d.approver_label,
               "version": d.published_version, "age": _age(d.updated_at, now)}
              for d in published.order_by("-updated_at")[:MAX_ROWS]]
    return {"approver": approver, "submitted": submitted, "sent_back": sent_back, "published": recent,
            "shown": approver or bool(sent_back or recent or own_open)}
