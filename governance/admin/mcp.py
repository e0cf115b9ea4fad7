"""Admin for the MCP gateway (SPEC §14): upstream servers (a policy record, drafted like every other) and
their tools, where an administrator reads each description in full, screened, and approves (pins) it;
a tool changed upstream since approval shows the diff."""
from django.contrib import admin, messages
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from governance.admin.admin_only import ADMIN_ONLY_NOTE, AdminOnlyFieldsMixin
from governance.admin.drafting import DraftedAdminMixin
from governance.models import Configuration, McpServer, McpTool
from governance.protocols.mcp import tools
from governance.protocols.mcp.upstream import UpstreamError
from governance.records.permissions import is_administrator


@admin.register(McpServer)
class McpServerAdmin(DraftedAdminMixin, AdminOnlyFieldsMixin, admin.ModelAdmin):
    policy_section = "mcp_servers"
    list_display = ("name", "url", "trust_zone", "timeout")
    search_fields = ("name", "url")
    ordering = ("name",)
    actions = ["read_tools"]
    fieldsets = (
        (None, {"fields": ("name", "timeout")}),
        (_("Connection, credentials and trust zone"), {"fields": ("url", "headers_env", "trust_zone"),
                                                       "description": ADMIN_ONLY_NOTE}),
    )

    def has_add_permission(self, request):
        # Where tool calls go and with which credentials is admin-only: only an administrator adds a server.
        return super().has_add_permission(request) and is_administrator(request.user)

    @admin.action(description=_("Read the tools of the selected servers now"))
    def read_tools(self, request, queryset):
        for server in queryset:
            try:
                found = tools.refresh(server)
            except UpstreamError as exc:
                messages.error(request, str(exc))
                continue
            messages.info(request, _("%(server)s lists %(count)d tools.") % {"server": server.name,
                                                                          "count": len(found)})


@admin.register(McpTool)
class McpToolAdmin(admin.ModelAdmin):
    list_display = ("name", "server", "state", "approved_by", "approved_at", "seen_at")
    list_filter = ("server",)
    search_fields = ("name", "description")
    actions = ["approve"]
    readonly_fields = ("server", "name", "state", "description", "schema", "screening", "change", "approved_by",
                       "approved_at", "seen_at")
    fields = readonly_fields

    def has_add_permission(self, request):
        return False  # tools are read from their servers

    def has_change_permission(self, request, obj=None):
        return request.method == "GET" and super().has_change_permission(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # A tool is read from its server, never edited here: the page reads, the list's action approves.
        extra_context = {**(extra_context or {}), "show_save": False, "show_save_and_continue": False,
                         "show_save_and_add_another": False}
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description=_("state"))
    def state(self, obj):
        if not obj.approved:
            return _("not approved: not offered")
        changes = obj.changes()
        return _("changed since approval (%s): withheld") % ", ".join(changes) if changes else _("approved")

    @admin.display(description=_("input schema"))
    def schema(self, obj):
        import json

        return format_html('<pre class="gavel-json">{}</pre>', json.dumps(obj.input_schema, indent=2, sort_keys=True))

    @admin.display(description=_("screening"))
    def screening(self, obj):
        """The description and schema under each configuration that uses the server: what would stop or hint."""
        lines = []
        for configuration in Configuration.objects.order_by("identifier"):
            if obj.server.name not in (configuration.mcp_servers or []):
                continue
            result = tools.screen_tool(configuration, obj)
            verdict = result.block.message if result.block else (
                "; ".join(h.get("message", "") for h in result.hints) or _("nothing found"))
            lines.append(f"{configuration.identifier}: {verdict}")
        return format_html('<pre id="tool-screening">{}</pre>', "\n".join(lines) or _("no configuration uses it"))

    @admin.display(description=_("change since approval"))
    def change(self, obj):
        text = tools.diff(obj) if obj.approved else ""
        return format_html('<pre id="tool-diff" class="gavel-json">{}</pre>', text) if text else "—"

    @admin.action(description=_("Approve the selected tools as they are listed now"))
    def approve(self, request, queryset):
        if not is_administrator(request.user):
            messages.error(request, _("Only an administrator may approve a tool."))
            return
        for tool in queryset.select_related("server"):
            try:
                tools.approve(tool, actor=f"user:{request.user.get_username()}")
            except tools.ApprovalRefused as exc:
                messages.error(request, str(exc))
                continue
            messages.success(request, _("Approved %(tool)s.") % {"tool": tool.name})
