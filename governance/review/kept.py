"""Examples kept from review (SPEC §10.2): a reviewed task's text saved as a policy example whose
expectation follows the review, naming who kept it, when, from which task.

Keeping is an explicit choice to keep the text: the example is a policy record, so the task purge,
which empties the task's contents, leaves it alone. An example feeds the release gate, so with
GAVEL_POLICY_FOUR_EYES=1 keeping it is a release like any other (SPEC §12.5, issue 41): the example goes
into the editor's open draft, and another approver publishes it.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import Conflict
from governance.models import PolicyDraft, PolicyExample, Task
from governance.policy import proposals
from governance.policy.examples import as_document
from governance.review.keeping import plan


@dataclass
class Kept:
    """The example, and the draft it went into (four eyes; the example is then not live yet)."""

    example: PolicyExample
    draft: PolicyDraft | None = None


def _drafted(user, task: Task, values: dict) -> Kept:
    """Four eyes: the example into the editor's open draft, under a name neither live nor in that draft."""
    draft = proposals.open_draft_for(user)
    in_draft = {c["name"] for c in draft.changes or () if c["section"] == "examples"}
    base = f"review-{str(task.pk)[:8]}"
    for attempt in range(1, 20):
        name = base if attempt == 1 else f"{base}-{attempt}"
        if name not in in_draft and not PolicyExample.objects.filter(name=name).exists():
            example = PolicyExample(name=name, **values)
            example.mask_secrets()  # as a saved example is: the draft keeps no secret either
            proposals.record_change(draft, "examples", name, as_document(example), actor=user)
            draft.refresh_from_db()
            return Kept(example, draft)
    raise Conflict(_("No free name for this example; rename older examples kept from this task."),
                   code="name_taken")


def _in_a_draft(task: Task) -> str | None:
    for (section, name), drafts in proposals.touched_records("examples").items():
        for draft in drafts:
            change = next((c for c in draft.changes if (c["section"], c["name"]) == (section, name)), None)
            if change and (change.get("record") or {}).get("from_task") == str(task.pk):
                return name
    return None


def keep_as_example(task: Task, *, user) -> Kept:
    """Save the reviewed task's text as a policy example whose expectation follows the review
    (`governance.review.keeping.plan`: the original answer for a missed finding or a reject, else the
    accepted text) — or, with four eyes, put it into the editor's draft."""
    if not task.review_decision:
        raise Conflict(_("Only a reviewed task can be kept as an example."), code="not_reviewed")
    expect = plan(task)
    text = expect["text"]
    if not text:
        raise Conflict(_("This task's text is no longer kept, so it cannot become an example."), code="purged")
    held = PolicyExample.objects.filter(from_task=task.pk).first()
    held_name = held.name if held is not None else _in_a_draft(task)
    if held_name is not None:
        raise Conflict(_("This task is already kept as the example “%(name)s”.") % {"name": held_name},
                       code="already_kept")
    values = {
        "configuration": task.configuration, "also": [c for c in (task.also or []) if isinstance(c, str)],
        "kind": task.kind, "site": task.site, "language": task.language,
        "format": PolicyExample.Format.TEXT, "text": text, "tool_calls": [],
        "expect_outcome": expect["outcome"], "expect_findings": expect["findings"],
        "expect_absent": expect["absent"], "kept_by": user.get_username()[:150], "kept_at": timezone.now(),
        "from_task": task.pk,
        # What the expectation leaves out is said in the example too, for whoever reads the policy file.
        "note": " ".join(item["text"] for item in expect["left_out"]),
    }
    if settings.GAVEL_POLICY_FOUR_EYES:
        return _drafted(user, task, values)
    base = f"review-{str(task.pk)[:8]}"
    for attempt in range(1, 20):
        name = base if attempt == 1 else f"{base}-{attempt}"
        try:
            with transaction.atomic():
                return Kept(PolicyExample.objects.create(name=name, **values))
        except IntegrityError:
            continue
    raise Conflict(_("No free name for this example; rename older examples kept from this task."),
                   code="name_taken")
