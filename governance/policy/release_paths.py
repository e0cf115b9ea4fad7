"""Every release path under four eyes (SPEC §12.5, amended by issue 41): with GAVEL_POLICY_FOUR_EYES=1 no
release is one person's — `PUT /api/v1/policy`, `import_policy` without `--draft` and the admin's import
page each make a draft that another approver publishes; with four eyes off they release through the gate as
they always did. docs/permissions.md has the whole table (each path × four eyes × role), each row a test.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from governance.models import PolicyDraft
from governance.policy import proposals, release


@dataclass
class Proposed:
    """The change became a draft (four eyes): nothing is live until another approver publishes it."""

    draft: PolicyDraft
    created: bool


def four_eyes() -> bool:
    return bool(settings.GAVEL_POLICY_FOUR_EYES)


def release_or_draft(document, *, actor, source: str, title: str, prune: bool, allow_regressions: bool = False,
                     replay: int = 0):
    """Release `document` through the gate, or, with four eyes, make (or update) `actor`'s draft of it.

    Returns Proposed, or what `release.apply_release` returns (ImportReport, ReleasePlan). Raises
    PolicyInvalid (nothing written) and, releasing, ExamplesRegressed."""
    if four_eyes():
        # The regressions, if any, are the approver's to accept when publishing: not asked for here.
        draft, created = proposals.draft_from_document(document, actor, title=title, prune=prune)
        return Proposed(draft, created)
    return release.apply_release(document, prune=prune, allow_regressions=allow_regressions,
                                 actor=proposals.actor_label(actor), source=source, replay=replay)
