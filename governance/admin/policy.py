"""Admin for providers and configurations (SPEC §2.1, §2.2), with their history."""
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from governance.admin.admin_only import ADMIN_ONLY_NOTE, AdminOnlyFieldsMixin
from governance.admin.drafting import DraftedAdminMixin
from governance.admin.forms import ConfigurationAdminForm, ProviderAdminForm, titled_choices_filter
from governance.models import Configuration, Provider
from governance.records import links
from governance.records import writes
from governance.records.permissions import is_administrator


# --- Providers ----------------------------------------------------------------


@admin.register(Provider)
class ProviderAdmin(DraftedAdminMixin, AdminOnlyFieldsMixin, SimpleHistoryAdmin):
    policy_section = "providers"
    form = ProviderAdminForm
    list_display = ("name", "kind", "route", "trust_zone", "api_base", "timeout", "price_per_mtok_in",
                    "price_per_mtok_out", "configuration_count")
    list_filter = ("kind", "trust_zone", "route")
    search_fields = ("name", "route", "api_base", "api_key_env")
    ordering = ("name",)
    fieldsets = (
        (None, {"fields": ("name", "kind", "timeout")}),
        (_("Limits"), {
            "fields": ("max_concurrency", "requests_per_minute", "tokens_per_minute"),
            "description": _("Held across every web process and worker; a call over a limit waits. 0 means no "
                             "limit."),
        }),
        (_("Price per million tokens"), {
            "fields": ("price_per_mtok_in", "price_per_mtok_out"),
            "description": _("Used for cost; litellm's price map is only a fallback."),
        }),
        (_("Connection and trust zone"), {
            "fields": ("route", "api_base", "api_key_env", "trust_zone"),
            "description": ADMIN_ONLY_NOTE,
        }),
    )

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_configuration_count=Count("configurations"))

    @admin.display(description=_("configurations"), ordering="_configuration_count")
    def configuration_count(self, obj):
        return obj._configuration_count

    def has_add_permission(self, request):
        # A provider without a route reaches nothing, and the route is
        # admin-only: only an administrator can add a usable provider.
        return super().has_add_permission(request) and is_administrator(request.user)


# --- Configurations -------------------------------------------------------------


@admin.register(Configuration)
class ConfigurationAdmin(DraftedAdminMixin, AdminOnlyFieldsMixin, SimpleHistoryAdmin):
    policy_section = "configurations"
    form = ConfigurationAdminForm
    list_display = ("identifier", "provider", "model", "rule_mode", "rule_tag_list", "judge_list",
                    "fallback_list", "budget_daily_requests")
    list_filter = ("rule_mode", "rule_default", "provider",
                   ("provider__kind", titled_choices_filter(_("provider kind"))),
                   ("provider__trust_zone", titled_choices_filter(_("provider trust zone"))))
    search_fields = ("identifier", "model", "provider__name", "system_prompt")
    list_select_related = ("provider",)
    ordering = ("identifier",)
    fieldsets = (
        (None, {"fields": ("identifier", "provider", "model", "system_prompt", "temperature", "max_tokens",
                           "timeout", "fallbacks")}),
        (_("Budget caps per day (0 = no cap)"), {
            "fields": ("budget_daily_requests", "budget_daily_tokens", "budget_daily_cost"),
        }),
        (_("Context and rules"), {
            "fields": ("context_tags", "rule_mode", "rule_tags", "rule_judges", "rule_default",
                       "min_confidence", "escalation", "judge_cache_seconds", "read_tools"),
            "description": ADMIN_ONLY_NOTE,
        }),
        (_("MCP gateway: tools of MCP servers"), {
            "fields": ("mcp_servers", "approve_tools", "deny_tools", "mcp_results"),
            "description": ADMIN_ONLY_NOTE,
        }),
    )

    readonly_displays = {"context_tags": "context_tag_list", "rule_tags": "rule_tag_list", "read_tools": "read_tool_list",
                         "rule_judges": "judge_list"}

    @admin.display(description=_("context tags"))
    def context_tag_list(self, obj):
        return ", ".join(obj.context_tags) or "—"

    @admin.display(description=_("read tools"))
    def read_tool_list(self, obj):
        return ", ".join(obj.read_tools) or "—"

    @admin.display(description=_("rule tags"))
    def rule_tag_list(self, obj):
        return ", ".join(obj.rule_tags) or "—"

    @admin.display(description=_("rule judges"))
    def judge_list(self, obj):
        return ", ".join(obj.judge_identifiers()) or "—"

    @admin.display(description=_("fallbacks"))
    def fallback_list(self, obj):
        return ", ".join(obj.fallback_identifiers()) or "—"

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("judge_links__judge", "fallback_links__fallback")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Warn, on every visit, about judges that could never run (SPEC §7), and say at the place of the
        # edit which other configurations depend on this one (their judges, fallbacks, escalation).
        if request.method == "GET" and (obj := self.get_object(request, object_id)) is not None:
            from judging.admin_warnings import configuration_warnings

            for warning in configuration_warnings(obj):
                messages.warning(request, warning)
            used_by = links.referrers(obj)
            if used_by:
                names = ", ".join(f"{other} ({links.ROLES[role]})" for other, role in used_by)
                messages.info(request, _(
                    "Other configurations depend on this one: %(names)s. Renaming it or changing its provider "
                    "(or, for a judge, its fallbacks) changes them, so only an administrator can.")
                    % {"names": names})
        return super().change_view(request, object_id, form_url, extra_context)

    # Deleting a configuration that others name would change admin-only state (SPEC §2.3) unseen.
    def get_deleted_objects(self, objs, request):
        """List what refers to the configurations as "protected": Django's confirmation page shows it and
        refuses the deletion, for the delete view and the bulk action alike."""
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        # The blockers include escalation (PROTECT), so they replace Django's own list rather than repeat it.
        # An escalation between two selected configurations is no blocker, but PROTECT still refuses it:
        # Django's own list then says so.
        blockers = writes.configuration_delete_blockers(objs)
        return deleted, model_count, perms_needed, blockers or protected

    def delete_model(self, request, obj):
        self.refuse_blocked_delete([obj])
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        self.refuse_blocked_delete(queryset)
        super().delete_queryset(request, queryset)

    @staticmethod
    def refuse_blocked_delete(configurations):
        """Last line: a delete that reaches here past the confirmation page is refused all the same."""
        blockers = writes.configuration_delete_blockers(configurations)
        if blockers:
            raise PermissionDenied(" ".join(blockers))
