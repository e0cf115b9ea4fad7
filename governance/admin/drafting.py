"""Admin saves of policy records go into the person's open draft (SPEC §12.5), never straight to the live policy.

The ordinary add, change, delete, revert and bulk-action views run as they always did — the same forms,
checks, admin-only refusals and history — but inside a transaction that is always rolled back, with the
person's open draft applied first and the policy version set to a draft number (so nothing cached under
it is ever taken for a real version). The policy is exported before and after the view; every record
that differs is recorded in the draft in policy-file terms. The live policy and its version do not change.

Approvers may instead *save and publish*: the change is recorded, then the draft is published through
the release gate (a refusal sends them to the draft's page, which names the regressions).
"""
from __future__ import annotations

import secrets
from contextlib import contextmanager

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from governance.models import PolicyDraft, PolicyVersion
from governance.policy import errors_of_document, export_policy
from governance.policy import proposals
from governance.policy.drafts import DRAFT_VERSIONS, draft_policy, forget_process_caches
from governance.policy.format import NAME_KEYS
from governance.policy.importing import history_names
from governance.policy.release import ExamplesRegressed

PUBLISH_FIELD = "_gavel_publish"


@contextmanager
def rehearsed(document: dict | None):
    """Run the block on the live policy (or on `document`, a whole policy), then roll everything back."""
    if document is not None:
        with draft_policy(document):
            yield
        return
    try:
        with transaction.atomic():
            if not PolicyVersion.objects.filter(pk=1).update(value=DRAFT_VERSIONS + secrets.randbelow(2 ** 40)):
                PolicyVersion.objects.create(pk=1, value=DRAFT_VERSIONS + secrets.randbelow(2 ** 40))
            forget_process_caches()
            try:
                yield
            finally:
                transaction.set_rollback(True)
    finally:
        forget_process_caches()


def record_key(section: str, record: dict) -> str:
    return str(record.get(NAME_KEYS[section]))


def differences(before: dict, after: dict) -> list[tuple[str, str, dict | None]]:
    """(section, name, record or None for removed) for every record that differs between two documents."""
    changed = []
    for section in NAME_KEYS:
        old = {record_key(section, r): r for r in before.get(section) or ()}
        new = {record_key(section, r): r for r in after.get(section) or ()}
        for name, record in new.items():
            if old.get(name) != record:
                changed.append((section, name, record))
        changed.extend((section, name, None) for name in old if name not in new)
    return changed


def users_open_draft(user) -> PolicyDraft | None:
    """The person's newest open draft, without making one."""
    return PolicyDraft.objects.filter(author=user, status=PolicyDraft.Status.OPEN).order_by("-updated_at").first()


def draft_url(draft: PolicyDraft) -> str:
    return reverse("admin:governance_policydraft_change", args=[draft.pk])


MSG_SAVED_TO_DRAFT = _("Saved into your draft “%(title)s” (%(count)d change(s)); the live policy is unchanged "
                       "(version %(version)s). Open the draft to test it and submit it.")
MSG_NOTHING_CHANGED = _("Nothing changed; your draft stays as it was.")
MSG_PUBLISHED = _("Saved and published: policy version %(version)s.")
MSG_PUBLISH_REFUSED = _("Saved into your draft, not published: %(reason)s")
MSG_IN_DRAFTS = _("An open draft changes this record: {drafts}. What you see here is the live record.")
MSG_DRAFT_INVALID = _("Your open draft does not make a valid policy ({errors}), so this page shows the live policy. "
                      "Fix the draft: <a href=\"{link}\">open it</a>.")
MSG_IN_OWN_DRAFT = _("Your open draft changes this record: the form shows the record as your draft has it.")


def applicable_document(request, own: PolicyDraft | None) -> dict | None:
    """The whole policy as the person's open draft has it, to run their view on; None when the draft changes
    nothing, or makes no valid policy (then the view runs on the live policy and the page says why)."""
    if own is None or not own.changes:
        return None
    document, _conflicts = proposals.draft_document(own)
    errors = errors_of_document(document, prune=True)
    if errors:
        messages.warning(request, format_html(str(MSG_DRAFT_INVALID), link=draft_url(own), errors="; ".join(
            f"{path}: {' '.join(str(m) for m in texts)}" for path, texts in list(errors.items())[:5])))
        return None
    return document


def may_save_and_publish(user) -> bool:
    """Approvers publish their own change at once, unless four eyes forbid an author to publish."""
    return proposals.may_approve(user) and not settings.GAVEL_POLICY_FOUR_EYES


class DraftedAdminMixin:
    """For the admins of policy records: saves land in a draft; lists and forms show drafts that change a record."""

    policy_section: str = ""

    # --- the indicator -------------------------------------------------------------------------
    def record_name(self, obj) -> str:
        return str(getattr(obj, NAME_KEYS[self.policy_section]))

    def get_list_display(self, request):
        drafts = proposals.touched_records(self.policy_section)  # one query per list, for this request only

        def in_draft(obj):
            touching = drafts.get((self.policy_section, self.record_name(obj)), [])
            return self.draft_links(touching) if touching else ""

        in_draft.short_description = _("in a draft")
        shown = list(super().get_list_display(request))
        return (*shown[:1], in_draft, *shown[1:])  # beside the name, where the eye is

    @staticmethod
    def draft_links(drafts) -> str:
        return format_html_join(", ", '<a href="{}">{}</a>', ((draft_url(d), str(d)) for d in drafts))

    def changelist_view(self, request, extra_context=None):
        # Bulk actions (activate, report mode, delete once confirmed) change records too: drafted as well.
        if request.method == "POST" and "action" in request.POST and (
                request.POST.get("action") != "delete_selected" or request.POST.get("post") == "yes"):
            return self.drafted(request, lambda: super(DraftedAdminMixin, self).changelist_view(request, extra_context),
                                quiet=request.POST.get("action") == "delete_selected")
        return super().changelist_view(request, extra_context)

    # --- the views, drafted ----------------------------------------------------------------------
    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        extra_context = {**(extra_context or {}), "gavel_drafting": True, "gavel_publish_field": PUBLISH_FIELD,
                         "gavel_may_publish": may_save_and_publish(request.user)}
        view = super().changeform_view
        if request.method == "POST":
            return self.drafted(request, lambda: view(request, object_id, form_url, extra_context))
        if object_id:
            return self.shown_with_drafts(request, object_id, lambda: view(request, object_id, form_url, extra_context))
        return view(request, object_id, form_url, extra_context)

    def delete_view(self, request, object_id, extra_context=None):
        extra_context = {**(extra_context or {}), "gavel_drafting": True, "gavel_publish_field": PUBLISH_FIELD,
                         "gavel_may_publish": may_save_and_publish(request.user)}
        view = super().delete_view
        if request.method == "POST":
            return self.drafted(request, lambda: view(request, object_id, extra_context))
        return view(request, object_id, extra_context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        view = super().history_form_view
        if request.method == "POST":
            return self.drafted(request, lambda: view(request, object_id, version_id, extra_context))
        return view(request, object_id, version_id, extra_context)

    def message_user(self, request, message, level=messages.INFO, *args, **kwargs):
        # Inside a drafted view Django's "… was changed successfully" would be untrue: the draft's own
        # message replaces it. Other notes (terms folded into one, kept admin-only fields) still show.
        if getattr(request, "_gavel_quiet", False) and level == messages.SUCCESS:
            return
        return super().message_user(request, message, level, *args, **kwargs)

    def shown_with_drafts(self, request, object_id, view):
        """A change form: say which drafts change the record; the author's own open draft is applied."""
        obj = self.get_object(request, object_id)
        if obj is None:
            return view()
        name = self.record_name(obj)
        touching = proposals.changes_touching(self.policy_section, name)
        own = users_open_draft(request.user)
        mine = own is not None and any(d.pk == own.pk for d in touching)
        others = [d for d in touching if not (mine and d.pk == own.pk)]
        if others:
            messages.info(request, format_html(str(MSG_IN_DRAFTS), drafts=self.draft_links(others)))
        removed = mine and any(c.get("section") == self.policy_section and str(c.get("name")) == name
                               and c.get("action") == "remove" for c in own.changes or ())
        if not mine or removed:
            return view()
        document = applicable_document(request, own)
        if document is None:
            return view()
        messages.info(request, MSG_IN_OWN_DRAFT)
        with rehearsed(document):
            response = view()
            if hasattr(response, "render"):
                response.render()
        return response

    def drafted(self, request, view, *, quiet: bool = True):
        """Run a writing view rolled back; record what it changed in the person's open draft.

        `quiet` silences Django's own "… was changed successfully" (a bulk action's count still shows)."""
        own = users_open_draft(request.user)
        document = applicable_document(request, own)
        request._gavel_quiet = quiet
        try:
            with rehearsed(document):
                before = export_policy()
                response = view()
                succeeded = isinstance(response, HttpResponseRedirect)
                after = export_policy() if succeeded else None
                if hasattr(response, "render") and not succeeded:
                    response.render()
        finally:
            request._gavel_quiet = False
        if after is None:
            return response
        changes = differences(before, after)
        if not changes:
            messages.info(request, MSG_NOTHING_CHANGED)
            return response
        draft = own or proposals.open_draft_for(request.user)
        scheduled = draft.publish_at is not None
        for section, name, record in changes:
            proposals.record_change(draft, section, name, record, actor=request.user)
        draft.refresh_from_db()
        if scheduled and draft.publish_at is None and draft.approval_withdrawn:
            # The save withdrew an approver's schedule (SPEC §12.5): the author reads it here, the approver on
            # the draft's page and in the governance log.
            messages.warning(request, draft.approval_withdrawn)
        if PUBLISH_FIELD in request.POST and may_save_and_publish(request.user):
            return self.publish_now(request, draft)
        messages.success(request, format_html(
            '{} <a href="{}">{}</a>', str(MSG_SAVED_TO_DRAFT) % {
                "title": str(draft), "count": len(draft.changes or ()), "version": PolicyVersion.current()},
            draft_url(draft), gettext("Open the draft")))
        return self.after_draft_redirect(request, response)

    def publish_now(self, request, draft):
        try:
            with history_names(request.user):
                proposals.publish(draft, request.user)
        except ExamplesRegressed as exc:
            messages.error(request, MSG_PUBLISH_REFUSED % {"reason": str(exc)})
            # The draft's page then offers the approver to accept the regressions it names.
            return HttpResponseRedirect(draft_url(draft) + "?refused=1")
        except (proposals.DraftConflicts, proposals.NotPublishable, proposals.NotGranted) as exc:
            messages.error(request, MSG_PUBLISH_REFUSED % {"reason": str(exc)})
            return HttpResponseRedirect(draft_url(draft))
        messages.success(request, MSG_PUBLISHED % {"version": PolicyVersion.current()})
        return HttpResponseRedirect(reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist"))

    def after_draft_redirect(self, request, response):
        """Where Django would go, unless that is the page of a record that exists only in the draft."""
        changelist = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_changelist")
        if "_addanother" in request.POST:
            return response
        if "_continue" in request.POST and request.resolver_match and request.resolver_match.kwargs.get("object_id"):
            object_id = request.resolver_match.kwargs["object_id"]
            if self.model._default_manager.filter(pk=object_id).exists():
                return response
        return HttpResponseRedirect(changelist)
