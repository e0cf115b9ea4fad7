"""Bump the policy version on every policy edit, so cached verdicts and matchers expire (SPEC §5.5)."""
from contextlib import contextmanager
from contextvars import ContextVar

from django.apps import apps
from django.db.models.signals import m2m_changed, post_delete, post_save

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
)


# Inside one_bump(): the edits seen so far, bumped once at its end instead of once each.
_pending: ContextVar[list | None] = ContextVar("policy_edits_pending", default=None)


@contextmanager
def one_bump():
    """Many saves that are one policy edit (an import): one version bump at the end, none if nothing
    was saved or the block raised (its transaction is rolled back anyway). Nested blocks are one edit."""
    from governance.models import PolicyVersion

    if _pending.get() is not None:  # inside another one: its end counts these edits too
        yield
        return
    pending: list = []
    token = _pending.set(pending)
    try:
        yield
    finally:
        _pending.reset(token)
    if pending:
        PolicyVersion.bump()


def _bump(sender, **kwargs):
    from governance.models import PolicyVersion

    if kwargs.get("raw"):
        return
    pending = _pending.get()
    if pending is not None:
        pending.append(sender)
        return
    PolicyVersion.bump()


def policy_edited(sender) -> None:
    """Count an edit that sends no model signal (a bulk write of judge or fallback links)."""
    _bump(sender)


for label in POLICY_MODELS:
    model = apps.get_model(label)
    post_save.connect(_bump, sender=model, dispatch_uid=f"policy-version-save-{label}")
    post_delete.connect(_bump, sender=model, dispatch_uid=f"policy-version-delete-{label}")

m2m_changed.connect(
    lambda sender, action, **kw: _bump(sender) if action.startswith("post_") else None,
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
