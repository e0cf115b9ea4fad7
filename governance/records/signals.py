"""Bump the policy version on every policy edit, so cached verdicts and matchers expire (SPEC §5.5), and keep
each version as a revision (SPEC §12.4): `governance.policy.versions` connects its own receiver to the bump.
Connected when the app is ready (governance.apps)."""
from django.apps import apps
from django.db.models.signals import m2m_changed, post_delete, post_save

from governance.models.policy import count_edit

POLICY_MODELS = (
    "governance.Provider",
    "governance.Configuration",
    # Judge chains and fallbacks: set_links writes them in bulk and counts that as one edit
    # (policy_edited); a link saved or deleted one by one (the shell, a fixture) bumps too.
    "governance.JudgeLink",
    "governance.FallbackLink",
    "snippets.Snippet",
    "snippets.PatternRule",
    "termlists.TermList",
    "governance.McpServer",  # where tool calls go (SPEC §14)
)


for label in POLICY_MODELS:
    model = apps.get_model(label)
    post_save.connect(count_edit, sender=model, dispatch_uid=f"policy-version-save-{label}")
    post_delete.connect(count_edit, sender=model, dispatch_uid=f"policy-version-delete-{label}")

m2m_changed.connect(
    lambda sender, action, **kw: count_edit(sender) if action.startswith("post_") else None,
    sender=apps.get_model("termlists.TermList").configurations.through,
    dispatch_uid="policy-version-termlist-scope",
    weak=False,
)


# --- Lock-outs (django-axes, issue 11): every one is logged, with who and from where. ---
import logging  # noqa: E402

from axes.signals import user_locked_out  # noqa: E402

security_log = logging.getLogger("gavel.security")


def _log_lock_out(sender, request=None, username=None, ip_address=None, **kwargs):
    security_log.warning("login locked out: user name %r from address %s after too many failed attempts",
                         username or "", ip_address or "-")


user_locked_out.connect(_log_lock_out, dispatch_uid="gavel-log-lock-out", weak=False)
