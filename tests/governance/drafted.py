"""Admin saves land in a draft (SPEC §12.5): what the admin tests post to publish at once, and read back."""
from governance.models import PolicyDraft

# An approver's *Save and publish*: the change is recorded in their draft and published through the gate.
PUBLISH = {"_gavel_publish": "Save and publish"}


def draft_record(user, section: str, name: str) -> dict | None:
    """The record as `user`'s open draft has it (None: the draft removes it)."""
    draft = PolicyDraft.objects.get(author=user, status=PolicyDraft.Status.OPEN)
    return next(c["record"] for c in draft.changes if (c["section"], c["name"]) == (section, name))
