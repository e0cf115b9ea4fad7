"""Who may write what. ADMIN_ONLY_FIELDS is the one list every write path reads (SPEC §2.3)."""
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance.models import Configuration, JudgeLink

# These decide where text is sent and what may stop it: only an administrator writes them.
ADMIN_ONLY_FIELDS: dict[str, tuple[str, ...]] = {
    "governance.configuration": (
        "context_tags",
        "rule_mode",
        "rule_tags",
        "rule_judges",
        "rule_default",
        "min_confidence",
        "escalation",
        "judge_cache_seconds",
        "read_tools",  # a read's arguments are not screened (SPEC §8.2)
        # The MCP gateway (SPEC §14): where tool calls go, which wait for a person, how results are screened.
        "mcp_servers", "approve_tools", "deny_tools", "mcp_results",
        # Only while another configuration names this one as a judge or escalation (WHILE_JUDGING):
        # a cap would stop judging, and a `rule_default: allow` configuration would deliver unjudged text.
        "budget_daily_requests",
        "budget_daily_tokens",
        "budget_daily_cost",
    ),
    "governance.provider": ("route", "api_base", "api_key_env", "trust_zone"),
    "governance.consumer": ("kinds",),
    "governance.mcpserver": ("url", "headers_env", "trust_zone"),
}
WHILE_JUDGING = frozenset({"budget_daily_requests", "budget_daily_tokens", "budget_daily_cost"})


def judges_for_others(instance) -> bool:
    """Whether another configuration names `instance` as a judge or as its escalation."""
    if getattr(instance, "pk", None) is None or not isinstance(instance, Configuration):
        return False
    return (JudgeLink.objects.filter(judge_id=instance.pk).exclude(configuration_id=instance.pk).exists()
            or Configuration.objects.filter(escalation_id=instance.pk).exclude(pk=instance.pk).exists())


def admin_only_fields(model, instance=None) -> tuple[str, ...]:
    """The admin-only fields of `model`; those of WHILE_JUDGING only when `instance` judges for others."""
    names = ADMIN_ONLY_FIELDS.get(model._meta.label_lower, ())
    if any(name in WHILE_JUDGING for name in names) and not judges_for_others(instance):
        names = tuple(name for name in names if name not in WHILE_JUDGING)
    return names


def is_administrator(actor) -> bool:
    """An administrator is a superuser (SPEC §1); a consumer never is one for writes of these fields."""
    return bool(getattr(actor, "is_superuser", False) and getattr(actor, "is_active", False))


def field_label(model, name: str) -> str:
    """What a person calls a field: its verbose name, capitalised (a relation's as its form labels it)."""
    from django.core.exceptions import FieldDoesNotExist
    from django.utils.text import capfirst

    try:
        return str(capfirst(model._meta.get_field(name).verbose_name))
    except FieldDoesNotExist:
        return str(capfirst(RELATION_LABELS.get(name, name.replace("_", " "))))


# Relations that are not model fields (governance.models.JudgeLink, FallbackLink), as the admin labels them.
RELATION_LABELS = {"rule_judges": gettext_lazy("rule judges"), "fallbacks": gettext_lazy("fallbacks")}

MSG_ADMIN_ONLY = gettext_lazy(
    "Only an administrator may change: %(fields)s. Ask an administrator to make this change, or leave these "
    "fields as they are."
)


def require_admin_for(actor, model, changed_fields, instance=None) -> None:
    """Refuse a write of an admin-only field by anyone but an administrator, naming the fields by label."""
    forbidden = [name for name in admin_only_fields(model, instance) if name in set(changed_fields)]
    if forbidden and not is_administrator(actor):
        raise PermissionDenied(
            _(str(MSG_ADMIN_ONLY)) % {"fields": ", ".join(field_label(model, name) for name in forbidden)}
        )
