"""Examples kept from review (SPEC §10.2): a reviewed task's text saved as a policy example whose
expectation follows the review, naming who kept it, when, from which task.

Keeping is an explicit choice to keep the text: the example is a policy record, so the task purge,
which empties the task's contents, leaves it alone.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import Conflict
from governance.models import PolicyExample, Task
from governance.review.keeping import plan


def keep_as_example(task: Task, *, user) -> PolicyExample:
    """Save the reviewed task's text as a policy example whose expectation follows the review
    (`governance.review.keeping.plan`: the original answer for a missed finding or a reject, else the
    accepted text)."""
    if not task.review_decision:
        raise Conflict(_("Only a reviewed task can be kept as an example."), code="not_reviewed")
    expect = plan(task)
    text = expect["text"]
    if not text:
        raise Conflict(_("This task's text is no longer kept, so it cannot become an example."), code="purged")
    held = PolicyExample.objects.filter(from_task=task.pk).first()
    if held is not None:
        raise Conflict(_("This task is already kept as the example “%(name)s”.") % {"name": held.name},
                       code="already_kept")
    values = {
        "configuration": task.configuration, "also": [c for c in (task.also or []) if isinstance(c, str)],
        "kind": task.kind, "site": task.site, "language": task.language,
        "format": PolicyExample.Format.TEXT, "text": text, "tool_calls": [],
        "expect_outcome": expect["outcome"], "expect_findings": expect["findings"],
        "expect_absent": expect["absent"], "kept_by": user.get_username()[:150], "kept_at": timezone.now(),
        "from_task": task.pk,
    }
    base = f"review-{str(task.pk)[:8]}"
    for attempt in range(1, 20):
        name = base if attempt == 1 else f"{base}-{attempt}"
        try:
            with transaction.atomic():
                return PolicyExample.objects.create(name=name, **values)
        except IntegrityError:
            continue
    raise Conflict(_("No free name for this example; rename older examples kept from this task."),
                   code="name_taken")
