"""A person's approval of an agent's tool call (SPEC §14): a task of kind `tool_call` an editor accepts or
rejects in the review UI, while the MCP call that asked waits for the decision.

The task is created `ready` (there is nothing to generate): the review UI's accept and reject act on it as
on any task. The waiting call reads the row until it is decided or GAVEL_MCP_APPROVAL_SECONDS pass; a
call that stops waiting cancels its task, so no editor approves a call nobody will make any more. How many
calls one consumer may keep waiting at once is bounded (GAVEL_MCP_WAITING_CALLS): each holds a web
worker's thread while it waits, and one agent must not take every worker (docs/mcp.md).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.models import GovernanceEvent, Task

Status = Task.Status
POLL_SECONDS = 0.25


@dataclass
class Decision:
    outcome: str  # accepted | rejected | timed_out | too_many
    reason: str = ""
    task_id: str = ""


def approval_seconds() -> float:
    return float(getattr(settings, "GAVEL_MCP_APPROVAL_SECONDS", 300))


def waiting_calls(consumer) -> int:
    """The consumer's tool calls waiting for an editor now (created within the approval window)."""
    since = timezone.now() - timedelta(seconds=approval_seconds())
    return Task.objects.filter(kind=Task.Kind.TOOL_CALL, status=Status.READY, consumer=consumer,
                               created__gte=since).count()


def open_approval(*, configuration: str, consumer, server: str, tool: str, arguments: dict, hints: list,
                  correlation_id: str) -> Task | None:
    """The `tool_call` task an editor decides, or None when the consumer already has as many calls
    waiting as GAVEL_MCP_WAITING_CALLS allows. `arguments` are the screened ones (secrets masked)."""
    limit = int(getattr(settings, "GAVEL_MCP_WAITING_CALLS", 2))
    if consumer is not None and waiting_calls(consumer) >= limit:
        return None
    return Task.objects.create(
        kind=Task.Kind.TOOL_CALL, status=Status.READY, consumer=consumer, configuration=configuration,
        messages=[{"role": "tool", "name": tool, "server": server,
                   "content": _("Call of the tool %(tool)s on the MCP server %(server)s") % {"tool": tool,
                                                                                             "server": server}}],
        answer=json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True), hints=hints,
        outcome="allowed_with_hints" if hints else "allowed", correlation_id=correlation_id,
        finished_at=timezone.now())


def rejection_reason(task: Task) -> str:
    """The editor's reason for a rejection, as the review event keeps it ("" when none was given)."""
    event = (GovernanceEvent.objects.filter(decision="rejected", check_name="review", detail__task=str(task.pk))
             .order_by("-at").only("detail").first())
    return str((event.detail or {}).get("reason", "")) if event else ""


def await_decision(task: Task, *, seconds: float | None = None, clock=time.monotonic, sleep=time.sleep) -> Decision:
    """Wait for the editor's decision on `task`, reading the row every POLL_SECONDS; after `seconds`
    (GAVEL_MCP_APPROVAL_SECONDS) the task is cancelled and the call counts as timed out."""
    deadline = clock() + (approval_seconds() if seconds is None else seconds)
    while True:
        status = Task.objects.filter(pk=task.pk).values_list("status", flat=True).first()
        if status == Status.ACCEPTED:
            return Decision("accepted", task_id=str(task.pk))
        if status == Status.REJECTED:
            return Decision("rejected", rejection_reason(task), task_id=str(task.pk))
        if status != Status.READY:
            return Decision("timed_out", task_id=str(task.pk))  # cancelled by an editor, or gone
        if clock() >= deadline:
            now = timezone.now()
            if Task.objects.filter(pk=task.pk, status=Status.READY).update(status=Status.CANCELLED, updated=now):
                return Decision("timed_out", task_id=str(task.pk))
            continue  # decided in the last moment: read it once more
        sleep(POLL_SECONDS)
