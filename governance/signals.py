"""Bump the policy version on every policy edit, so cached verdicts and matchers expire (SPEC §5.5)."""
from django.apps import apps
from django.db.models.signals import m2m_changed, post_delete, post_save

POLICY_MODELS = (
    "governance.Provider",
    "governance.Configuration",
    "snippets.Snippet",
    "termlists.TermList",
)


def _bump(sender, **kwargs):
    from governance.models import PolicyVersion

    if kwargs.get("raw"):
        return
    PolicyVersion.bump()


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
