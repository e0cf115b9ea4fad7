"""Who may write what. ADMIN_ONLY_FIELDS is the one list every write path reads (SPEC §2.3)."""
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext as _

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
    ),
    "governance.provider": ("route", "api_base", "api_key_env", "trust_zone"),
}


def admin_only_fields(model) -> tuple[str, ...]:
    return ADMIN_ONLY_FIELDS.get(model._meta.label_lower, ())


def is_administrator(actor) -> bool:
    """An administrator is a superuser (SPEC §1); a consumer never is one for writes of these fields."""
    return bool(getattr(actor, "is_superuser", False) and getattr(actor, "is_active", False))


def require_admin_for(actor, model, changed_fields) -> None:
    """Refuse a write of an admin-only field by anyone but an administrator."""
    forbidden = sorted(set(changed_fields) & set(admin_only_fields(model)))
    if forbidden and not is_administrator(actor):
        raise PermissionDenied(
            _("Only an administrator may change: %(fields)s") % {"fields": ", ".join(forbidden)}
        )
