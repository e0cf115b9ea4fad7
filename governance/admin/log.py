"""Admin for the governance log and the queued tasks, read-only (SPEC §2.8, §10)."""
import json
from urllib.parse import urlencode

from django.contrib import admin
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _

from governance.evidence import admin as evidence_admin, trace
from governance.models import GovernanceEvent, Task
from governance.screening import event_text


def json_block(value):
    """A JSON value as an indented, escaped <pre> block (the log's facts, a task's messages and hints)."""
    return format_html('<pre class="gavel-json">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False, default=str))


# --- Governance log -------------------------------------------------------------


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(admin.ModelAdmin):
    """Append-only: readable with the view permission, never added, changed or deleted here."""

    # Fits 1280 px: provider, model and actor are on the detail page (issue 11).
    list_display = ("when", "decision", "check_name", "configuration", "subject", "mode", "correlation_link")
    list_display_links = ("when",)

    class Media:
        css = {"all": ["governance/event_log.css"]}
    # No filter on an unindexed column: listing its distinct values would scan the whole log.
    list_filter = ("decision", "check_name", "mode", "configuration")
    # What the list shows can be searched: the 8-character id it prints (its beginning), list names and
    # terms in the facts, and the check names in the reader's words (get_search_results).
    search_fields = ("^correlation_id", "configuration", "provider", "actor", "model", "detail__list",
                     "detail__terms")
    search_help_text = _("Searches the correlation id (its first characters are enough), configuration, provider, "
                         "actor, model, term list names and terms, and check names.")
    date_hierarchy = "at"
    ordering = ("-at", "-id")
    # The log grows fast; do not count the whole table on every filtered page.
    show_full_result_count = False
    fields = ("at", "correlation_id", "decision", "check_name", "configuration", "provider", "model", "actor",
              "mode", "summary", "detail_pretty", "task_link")
    readonly_fields = fields

    @admin.display(description=_("task"))
    def task_link(self, obj):
        return evidence_admin.event_task_link(obj)

    def get_search_results(self, request, queryset, search_term):
        results, duplicates = super().get_search_results(request, queryset, search_term)
        of_task = trace.event_search(search_term)  # a task's id, short or full: its events
        if of_task is not None:
            results = results | queryset.filter(of_task)
        words = search_term.strip().lower()
        if words:
            checks = [value for value, label in GovernanceEvent.Check.choices
                      if words in value.replace("_", " ") or words in value or words in str(label).lower()]
            if checks:
                results = results | queryset.filter(check_name__in=checks)
        return results, duplicates

    @admin.display(description=_("time"), ordering="at")
    def when(self, obj):
        # The short form ("01.12.2026 20:30"), so the list fits 1280 px (docs/decisions.md).
        return date_format(localtime(obj.at), "SHORT_DATETIME_FORMAT")

    @admin.display(description=_("correlation id"))
    def correlation_link(self, obj):
        # Every event of one screening shares the id: link to all of them (the whole id in the title).
        return format_html('<a href="?{}" title="{}">{}</a>', urlencode({"q": obj.correlation_id}),
                           obj.correlation_id, obj.correlation_id[:8])

    # Append-only: no History button (the change form's object tools are left out).
    change_form_template = "admin/governance/governanceevent/change_form.html"

    @admin.display(description=_("about"))
    def subject(self, obj):
        return event_text.subject(obj.detail) or "—"

    @admin.display(description=_("in words"))
    def summary(self, obj):
        return event_text.sentence(obj)

    @admin.display(description=_("facts (JSON)"))
    def detail_pretty(self, obj):
        return json_block(obj.detail)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Only `manage.py purge_governance --days N` removes events.
        return False


# --- Tasks ------------------------------------------------------------------------


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    """Queued tasks and field fills, read-only for staff like the governance log (SPEC §2.8, §10).

    Editors review them at /review/; here they can be looked up by id, consumer or configuration.
    """

    list_display = ("created", "short_id", "kind", "status", "configuration", "consumer", "attempts", "outcome",
                    "review_decision")
    list_filter = ("status", "kind", "configuration", "review_decision")
    search_fields = ("=id", "configuration", "consumer__name")
    date_hierarchy = "created"
    ordering = ("-created",)
    show_full_result_count = False
    list_select_related = ("consumer",)
    fields = ("id", "kind", "status", "consumer", "configuration", "also", "field", "site", "language",
              "messages_pretty", "attempts", "outcome", "answer", "hints_pretty", "refusal", "verification",
              "completion", "failure", "review_decision", "reviewed_by", "reviewed_at", "edited", "edited_text",
              "callback_url", "callback_status", "callback_attempts", "callback_error", "created", "updated",
              "finished_at", "purged_at", "trace")
    readonly_fields = fields

    @admin.display(description=_("governance log and evidence"))
    def trace(self, obj):
        return evidence_admin.trace_links(obj)

    @admin.display(description=_("task"))
    def short_id(self, obj):
        return str(obj.pk)[:8]

    @admin.display(description=_("input messages"))
    def messages_pretty(self, obj):
        return json_block(obj.messages)

    @admin.display(description=_("hints"))
    def hints_pretty(self, obj):
        return json_block(obj.hints)

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Task contents are emptied by purge_governance; the rows stay.
        return False
