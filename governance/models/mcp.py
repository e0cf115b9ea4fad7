"""The MCP gateway's records (SPEC §14): upstream MCP servers and the tools an administrator pinned.

A pin keeps the description and input schema an administrator approved; the tool is offered while the
upstream still describes it exactly so, and withheld (its calls refused, naming the change) once not.
"""
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from governance.models.policy import TRUST_ZONE_CHOICES
from governance.models.provider_keys import key_env_problem

HEADER_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def headers_env_problems(value) -> list[str]:
    """Why a `headers_env` mapping (header → environment variable name) may not be stored: the §9
    allow-list of provider keys applies to every variable, so no header can carry Gavel's own secrets."""
    if not isinstance(value, dict):
        return [str(_("Enter a mapping of header name to environment variable name."))]
    problems = []
    for header, env in value.items():
        if not isinstance(header, str) or not header or not set(header) <= HEADER_NAME_CHARS:
            problems.append(str(_("%(header)s is not an HTTP header name.") % {"header": header}))
        elif not isinstance(env, str) or not env:
            problems.append(str(_("%(header)s: give the name of an environment variable.") % {"header": header}))
        elif (problem := key_env_problem(env)) is not None:
            problems.append(f"{header}: {problem}")
    return problems


def validate_headers_env(value):
    problems = headers_env_problems(value)
    if problems:
        raise ValidationError(problems)


class McpServer(models.Model):
    """An upstream MCP server reached over Streamable HTTP; its credentials stay in the environment."""

    name = models.SlugField(_("name"), max_length=100, unique=True,
                            help_text=_("How configurations and the policy file name this server."))
    url = models.URLField(_("URL"), max_length=500,
                          help_text=_("The server's Streamable HTTP endpoint, e.g. https://tools.example.com/mcp."))
    headers_env = models.JSONField(
        _("header variables"), default=dict, blank=True, validators=[validate_headers_env],
        help_text=_("Headers sent upstream, each read from an environment variable of the Gavel server, e.g. "
                    "{\"Authorization\": \"CMS_MCP_TOKEN\"}. Only names the provider-key allow-list admits; the "
                    "values never reach a client, an event or a log."))
    trust_zone = models.CharField(
        _("trust zone"), max_length=20, choices=TRUST_ZONE_CHOICES, default="external_global",
        help_text=_("Where the server runs, as for a provider: its results count as written there, so a judge less trusted than the server never reads them."))
    timeout = models.PositiveIntegerField(_("timeout"), default=30, help_text=_("seconds for one upstream request"))

    class Meta:
        ordering = ["name"]
        verbose_name = _("MCP server")
        verbose_name_plural = _("MCP servers")

    def __str__(self):
        return self.name


class McpTool(models.Model):
    """One upstream tool as last seen, and the description and schema an administrator approved."""

    server = models.ForeignKey(McpServer, on_delete=models.CASCADE, related_name="tools", verbose_name=_("server"),
                               help_text=_("The MCP server that lists this tool."))
    name = models.CharField(_("name"), max_length=200, help_text=_("The tool's upstream name, offered as is."))
    description = models.TextField(_("description"), blank=True, default="",
                                   help_text=_("The description as the upstream last listed it."))
    input_schema = models.JSONField(_("input schema"), default=dict, blank=True,
                                    help_text=_("The input schema as the upstream last listed it."))
    seen_at = models.DateTimeField(_("seen at"), null=True, blank=True,
                                   help_text=_("When Gavel last read the tool from its server."))
    approved_description = models.TextField(
        _("approved description"), blank=True, default="",
        help_text=_("The description an administrator approved; a tool whose description differs is withheld."))
    approved_schema = models.JSONField(
        _("approved input schema"), null=True, blank=True,
        help_text=_("The input schema an administrator approved; a tool whose schema differs is withheld."))
    approved_by = models.CharField(_("approved by"), max_length=150, blank=True, default="",
                                   help_text=_("Who approved the tool as it is pinned now."))
    approved_at = models.DateTimeField(_("approved at"), null=True, blank=True,
                                       help_text=_("Blank: never approved, so never offered."))

    class Meta:
        ordering = ["server__name", "name"]
        unique_together = [("server", "name")]
        verbose_name = _("MCP tool")
        verbose_name_plural = _("MCP tools")

    def __str__(self):
        return f"{self.server.name}/{self.name}"

    @property
    def approved(self) -> bool:
        return self.approved_at is not None

    def changes(self) -> list[str]:
        """What differs between the approved pin and the tool as last seen: "description", "input_schema"."""
        if not self.approved:
            return []
        changed = []
        if self.description != self.approved_description:
            changed.append("description")
        if self.input_schema != self.approved_schema:
            changed.append("input_schema")
        return changed
