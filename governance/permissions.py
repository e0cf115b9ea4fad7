"""Who may write what. ADMIN_ONLY_FIELDS is the one list every write path reads (SPEC §2.3)."""
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

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
    ),
    "governance.provider": ("route", "api_base", "api_key_env", "trust_zone"),
    "governance.consumer": ("kinds",),
}


def admin_only_fields(model) -> tuple[str, ...]:
    return ADMIN_ONLY_FIELDS.get(model._meta.label_lower, ())


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


def require_admin_for(actor, model, changed_fields) -> None:
    """Refuse a write of an admin-only field by anyone but an administrator, naming the fields by label."""
    forbidden = [name for name in admin_only_fields(model) if name in set(changed_fields)]
    if forbidden and not is_administrator(actor):
        raise PermissionDenied(
            _(str(MSG_ADMIN_ONLY)) % {"fields": ", ".join(field_label(model, name) for name in forbidden)}
        )
