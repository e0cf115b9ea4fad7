"""The evidence records in the admin: read-only, linked to their task and to the governance log."""
from urllib.parse import urlencode

from django.contrib import admin
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from governance.evidence import trace, words
from governance.models import EvidenceRecord
from governance.records.permissions import is_administrator


def task_link(task_id) -> str:
    if not task_id:
        return "—"
    url = reverse("admin:governance_task_change", args=[task_id])
    return format_html('<a href="{}" title="{}">{}</a>', url, task_id, str(task_id)[:8])


def trace_links(task) -> str:
    """A task's links to its events and evidence (the task's admin page)."""
    found = trace.admin_links(task)
    return format_html('<a href="{}">{}</a> · <a href="{}">{}</a>',
                       found["events_url"], ngettext("%(n)d governance event", "%(n)d governance events",
                                                     found["events"]) % {"n": found["events"]},
                       found["evidence_url"], ngettext("%(n)d evidence record", "%(n)d evidence records",
                                                       found["evidence"]) % {"n": found["evidence"]})


def event_task_link(event) -> str:
    """An event's link to the task it belongs to (the event's admin page)."""
    task = trace.task_of_event(event)
    return task_link(task.pk) if task else "—"


class OutcomeFilter(admin.SimpleListFilter):
    """The outcome in words, not its code."""

    title = _("outcome")
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return [(code, words.outcome_words(code)) for code in ("allowed", "allowed_with_hints")]

    def queryset(self, request, queryset):
        return queryset.filter(outcome=self.value()) if self.value() else queryset


@admin.register(EvidenceRecord)
class EvidenceRecordAdmin(admin.ModelAdmin):
    """Append-only, like the log: readable by staff, never added, changed or deleted here."""

    list_display = ("when", "surface", "configuration", "outcome_said", "policy_version", "review_said",
                    "task_short", "hash_short")
    list_display_links = ("when",)
    list_filter = ("surface", OutcomeFilter, "review_decision", "configuration")
    search_fields = ("=text_hash", "^correlation_id", "configuration", "reviewed_by", "actor")
    search_help_text = _("Searches the text hash (whole), the correlation id (its first characters are enough), "
                         "configuration, editor and actor.")
    date_hierarchy = "at"
    ordering = ("-at",)
    show_full_result_count = False
    fields = ("id", "at", "surface", "configuration", "also", "policy_version", "outcome_said", "checks_list",
              "verification_said", "review_said", "correlation_link", "actor", "task_short", "text_hash", "key_id")
    readonly_fields = fields

    @admin.display(description=_("time"), ordering="at")
    def when(self, obj):
        return date_format(localtime(obj.at), "SHORT_DATETIME_FORMAT")

    @admin.display(description=_("task"))
    def task_short(self, obj):
        return task_link(obj.task_id)

    @admin.display(description=_("text hash"))
    def hash_short(self, obj):
        return format_html('<code title="{}">{}</code>', obj.text_hash, obj.text_hash[:12])

    @admin.display(description=_("checks"))
    def checks_list(self, obj):
        return format_html_join(mark_safe("<br>"), "{}", ((words.check_line(c),) for c in obj.checks or []))

    @admin.display(description=_("outcome"), ordering="outcome")
    def outcome_said(self, obj):
        return words.outcome_words(obj.outcome)

    @admin.display(description=_("citations"))
    def verification_said(self, obj):
        return words.verification_words(obj.verification)

    @admin.display(description=_("review by a person"), ordering="reviewed_at")
    def review_said(self, obj):
        return words.review_words(obj.review_decision, obj.reviewed_by, obj.reviewed_at, obj.edited)

    def changelist_view(self, request, extra_context=None):
        extra = {"gavel_evidence_tools": is_administrator(request.user), **(extra_context or {})}
        return super().changelist_view(request, extra)

    @admin.display(description=_("correlation id"))
    def correlation_link(self, obj):
        if not obj.correlation_id:
            return "—"
        url = reverse("admin:governance_governanceevent_changelist") + "?" + urlencode({"q": obj.correlation_id})
        return format_html('<a href="{}">{}</a>', url, obj.correlation_id)

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # evidence outlives every purge (SPEC §13.1)
