"""Which environment variables a provider may name as its key (SPEC §2.1): the one rule.

Every write path (the admin through Provider.clean, the policy import, PUT /api/v1/policy)
and the model call itself ask `key_env_problem`, so a name refused at the door is also never
read at call time, whatever way it reached the database.
"""
from fnmatch import fnmatchcase

from django.conf import settings
from django.utils.translation import gettext_lazy as _

# Gavel's own settings: a provider naming one of them would send the server's secret to its api_base.
DENIED_KEY_ENVS = frozenset({"SECRET_KEY", "DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL"})
DENIED_KEY_ENV_PREFIX = "GAVEL_"

MSG_NOT_A_NAME = _("Give the name of an environment variable, not a key.")
MSG_GAVEL_SETTING = _("%(name)s is one of Gavel's own settings; a provider may never read it.")
MSG_NOT_ALLOWED = _("%(name)s does not match the allowed key variables (%(patterns)s, set by "
                    "GAVEL_PROVIDER_KEY_ENVS).")


def allowed_patterns() -> list[str]:
    return list(getattr(settings, "GAVEL_PROVIDER_KEY_ENVS", None) or ["*_API_KEY", "*_TOKEN"])


def key_env_problem(name: str | None) -> str | None:
    """Why `name` may not be a provider's key variable, or None when it may (blank: no key)."""
    if not name:
        return None
    if not (name[0].isalpha() or name[0] == "_") or not name.replace("_", "").isalnum() or not name.isascii():
        return str(MSG_NOT_A_NAME)
    if name.upper() in DENIED_KEY_ENVS or name.upper().startswith(DENIED_KEY_ENV_PREFIX):
        return str(MSG_GAVEL_SETTING % {"name": name})
    patterns = allowed_patterns()
    if not any(fnmatchcase(name, pattern) for pattern in patterns):
        return str(MSG_NOT_ALLOWED % {"name": name, "patterns": ", ".join(patterns)})
    return None
