"""Policy drafts in the admin (SPEC §12.5): the list, and the draft's page — its changes as a diff, the test
report live vs draft, the replay over a chosen window, conflicts side by side, and the approval buttons.

Thin views over governance.policy.proposals: `draft_report` is the one report the page, the API and the
command show; this module only chooses the window, reads the changed passages for people allowed to read
texts, and turns the buttons into service calls.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import dateformat, timezone
from django.utils.translation import gettext_lazy as _

from governance.admin.draft_page import (WindowForm, blind_spots, change_rows, conflict_rows, diff_lines,
                                         draft_history, example_rows, may_read_texts, replay_rows)
from governance.errors import GavelError
from governance.models import PolicyDraft
from governance.policy import PolicyInvalid, proposals, proposals_report, report_limits
from governance.policy.importing import history_names
from governance.policy.release import ExamplesRegressed
from governance.policy.schedule_failures import failure_text
from governance.records.permissions import is_administrator

STATUS_WORDS = {"open": _("open"), "submitted": _("submitted"), "published": _("published"),
                "withdrawn": _("withdrawn")}
MSG_SUBMITTED = _("Submitted: an approver can now publish the draft or send it back.")
MSG_SENT_BACK = _("Sent back to its author with your comment.")
MSG_WITHDRAWN = _("Withdrawn: nothing of this draft will be published.")
MSG_PUBLISHED = _("Published as policy version %(version)s.")
MSG_TOOK_LIVE = _("Conflict in %(record)s resolved: the draft drops its change and keeps the live record.")
MSG_TOOK_DRAFT = _("Conflict in %(record)s resolved: the draft's record replaces the live one when it is published.")
MSG_SCHEDULED = _("The worker publishes this draft at %(at)s, through the release gate.")
MSG_UNSCHEDULED = _("The publishing time is cleared.")
MSG_COMMENT_NEEDED = _("Say why you send the draft back: the author reads it.")
MSG_NOT_YOURS = _("Only the draft's author or an approver may do this.")
MSG_ALREADY_OPEN = _("You already have an open draft: “%(title)s”. Your saves go into it.")
MSG_JUDGES_ON = _("The report runs the judges again, within its cost cap.")
MSG_JUDGES_OFF = _("The report no longer runs the judges: deterministic checks only.")


class NewDraftForm(forms.ModelForm):
    class Meta:
        model = PolicyDraft
        fields = ("title",)


class ScheduleForm(forms.Form):
    # Read (and shown) in the active time zone, which the page names beside the field.
    publish_at = forms.DateTimeField(label=_("Publish at"), required=False,
                                     widget=forms.DateTimeInput(attrs={"type": "datetime-local"},
                                                                format="%Y-%m-%dT%H:%M"),
                                     input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"])


def with_zone(moment) -> str:
    """A time as the draft page writes it: in the active time zone, named (2026-03-02 14:00 UTC)."""
    return dateformat.format(timezone.localtime(moment), "Y-m-d H:i T")


@admin.register(PolicyDraft)
class PolicyDraftAdmin(admin.ModelAdmin):
    form = NewDraftForm
    list_display = ("title_or_number", "status_word", "author_label", "base_version", "change_count", "updated_at",
                    "published_version")
    list_filter = ("status",)
    search_fields = ("title", "author_label")
    ordering = ("-updated_at",)

    @admin.display(description=_("draft"), ordering="title")
    def title_or_number(self, obj):
        return str(obj)

    @admin.display(description=_("status"), ordering="status")
    def status_word(self, obj):
        return STATUS_WORDS.get(obj.status, obj.status)

    @admin.display(description=_("changes"))
    def change_count(self, obj):
        return len(obj.changes or ())

    def has_delete_permission(self, request, obj=None):
        return False  # a draft is withdrawn, never deleted: its events name it

    def add_view(self, request, form_url="", extra_context=None):
        own = PolicyDraft.objects.filter(author=request.user, status=PolicyDraft.Status.OPEN).first()
        if own is not None:
            messages.info(request, MSG_ALREADY_OPEN % {"title": str(own)})
            return HttpResponseRedirect(reverse("admin:governance_policydraft_change", args=[own.pk]))
        return super().add_view(request, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        # A new draft is made by the service (its author, base version and `draft.created` event).
        made = proposals.open_draft_for(request.user, title=form.cleaned_data["title"])
        obj.pk = made.pk
        obj.refresh_from_db()

    # --- the draft's page -------------------------------------------------------------------------
    def change_view(self, request, object_id, form_url="", extra_context=None):
        draft = self.get_object(request, unquote(object_id))
        if draft is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_or_change_permission(request, draft):
            raise PermissionDenied
        if request.method == "POST":
            return self.act(request, draft)
        return self.draft_page(request, draft)

    def may_edit(self, user, draft) -> bool:
        return proposals.is_author(user, draft) or proposals.may_approve(user)

    def act(self, request, draft):
        """One button, one service call; the page again (with a refusal named) afterwards."""
        post, user = request.POST, request.user
        here = reverse("admin:governance_policydraft_change", args=[draft.pk])
        accepting = False
        try:
            if "submit" in post and self.may_edit(user, draft):
                proposals.submit(draft, user)
                messages.success(request, MSG_SUBMITTED)
            elif "withdraw" in post and self.may_edit(user, draft):
                proposals.withdraw(draft, user)
                messages.success(request, MSG_WITHDRAWN)
            elif "send_back" in post:
                comment = post.get("comment", "").strip()
                if not comment:
                    messages.error(request, MSG_COMMENT_NEEDED)
                else:
                    proposals.send_back(draft, user, comment)
                    messages.success(request, MSG_SENT_BACK)
            elif "publish" in post:
                accepting = bool(post.get("allow_regressions"))
                with history_names(user):
                    version = proposals.publish(draft, user, allow_regressions=accepting,
                                                revision=post.get("revision") or "")
                messages.success(request, MSG_PUBLISHED % {"version": version})
            elif "take" in post and self.may_edit(user, draft):
                section, _sep, name = post.get("record", "").partition(":")
                take = post["take"] if post["take"] in ("live", "draft") else "draft"
                proposals.resolve_conflict(draft, section, name, take, actor=user)
                taken = MSG_TOOK_LIVE if take == "live" else MSG_TOOK_DRAFT
                messages.success(request, taken % {"record": f"{section}:{name}"})
            elif "replay_judges" in post and self.may_edit(user, draft):
                on = post["replay_judges"] == "1"
                report_limits.set_replay_judges(draft, on)
                self.log_change(request, draft, [{"changed": {"fields": [str(PolicyDraft._meta.get_field(
                    "replay_judges").verbose_name)]}}])
                messages.success(request, MSG_JUDGES_ON if on else MSG_JUDGES_OFF)
            elif "schedule" in post and proposals.may_approve(user):
                form = ScheduleForm(post)
                if form.is_valid():
                    at = form.cleaned_data["publish_at"]
                    proposals.schedule_publish(draft, user, at, revision=(post.get("revision") or "") if at else None)
                    messages.success(request, MSG_SCHEDULED % {"at": with_zone(at)} if at else MSG_UNSCHEDULED)
                else:
                    messages.error(request, " ".join(str(e) for e in form.errors.get("publish_at", [])))
            else:
                raise PermissionDenied(MSG_NOT_YOURS)
        except ExamplesRegressed as exc:
            # The refusal is the page itself: the regressions named, and for an approver the box to accept them.
            messages.error(request, str(exc))
            return self.draft_page(request, draft, refused=exc.plan.regressions)
        except PolicyInvalid as exc:
            messages.error(request, str(proposals.invalid_draft(draft, exc)))  # each path, records by name
        except (GavelError, ValueError) as exc:
            messages.error(request, str(exc))
        return HttpResponseRedirect(here)

    def draft_page(self, request, draft, *, refused=None):
        window = WindowForm(request.GET or None)
        options = window.report_options()
        user = request.user
        live_statuses = (PolicyDraft.Status.OPEN, PolicyDraft.Status.SUBMITTED)
        # Task ids for those the review UI lets open every task; counts only for anyone else (as over the API).
        options["task_ids"] = may_read_texts(user)
        # A published or withdrawn draft is history: compared with today's policy it would only mislead.
        report = proposals_report.draft_report(draft, **options) if draft.status in live_statuses else {}
        if refused is None and request.GET.get("refused") and report.get("test"):
            refused = report["test"]["regressions"] or None  # after Save and publish was refused
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts, "original": draft, "draft": draft, "title": str(draft),
            "subtitle": None, "report": report, "window": window,
            "status_word": STATUS_WORDS.get(draft.status, draft.status),
            "diff_lines": diff_lines(report.get("diff") or ""),
            "changes": change_rows(report.get("changes") or draft.changes or []),
            "removals": [c for c in draft.changes or () if c.get("action") == "remove"],
            "conflicts": conflict_rows(report.get("conflicts") or []),
            "examples": example_rows(report.get("test") or {}),
            "rules": (report.get("test") or {}).get("rules") or [],
            "replay": replay_rows(report.get("replay") or {}, user, draft.changes or []),
            "judges": report.get("judges") or {},
            "blind_spots": blind_spots(report),
            "errors": sorted((report.get("errors") or {}).items()),
            "comments": list(draft.comments.all()),
            "is_live": draft.status in live_statuses,
            "schedule_failure": failure_text(draft.schedule_failure),
            "may_edit": self.may_edit(user, draft),
            "is_author": proposals.is_author(user, draft),
            "may_approve": proposals.may_approve(user),
            "can_publish": draft.status in live_statuses and proposals.can_publish(user, draft),
            "four_eyes_blocks": proposals.may_approve(user) and not proposals.can_publish(user, draft),
            "refused": refused,
            "schedule": ScheduleForm(initial={"publish_at": draft.publish_at}),
            "schedule_zone": timezone.get_current_timezone_name(),
            "history": draft_history(draft),
            # The publish and schedule buttons name the draft as this page shows it (SPEC §12.5).
            "revision": proposals.revision_of(draft),
            "is_administrator": is_administrator(user),
        }
        return TemplateResponse(request, "admin/gavel/policy_draft.html", context)
