"""One `tools/call` through the gateway (SPEC §14): pinned tool, screened arguments, a person's approval
where the configuration asks for one, the upstream call, the result masked and screened, and for every
call a governance event, an evidence record and its metrics.

A call Gavel refuses never reaches the upstream; the client gets a tool result with `isError: true` and
Gavel's message (a JSON-RPC error is kept for what is not a tool call at all).
"""
from __future__ import annotations

import json
import time
import uuid

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance.evidence import metrics
from governance.evidence.records import record_tool_call
from governance.models import GovernanceEvent
from governance.protocols.mcp import checks, tools, upstream
from governance.work import tool_calls

MSG_TOO_MANY_WAITING = gettext_lazy(
    "Too many of this consumer's tool calls are waiting for an editor's approval; try again once one is decided.")
MSG_REJECTED = gettext_lazy("An editor rejected the call of %(tool)s.")
MSG_REJECTED_REASON = gettext_lazy("An editor rejected the call of %(tool)s: %(reason)s")
MSG_TIMED_OUT = gettext_lazy("No editor decided on the call of %(tool)s within %(seconds)s seconds; it was not made.")
MSG_RESULT_BLOCKED = gettext_lazy("The result of %(tool)s was stopped by the policy: %(message)s")


def error_result(message: str, *, correlation_id: str) -> dict:
    return {"content": [{"type": "text", "text": message}], "isError": True,
            "_meta": {"gavel": {"id": correlation_id, "outcome": "blocked"}}}


def _text_of(result: dict) -> str:
    parts = [block.get("text", "") for block in result.get("content") or [] if block.get("type") == "text"]
    if result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"], ensure_ascii=False, sort_keys=True))
    return "\n".join(p for p in parts if p)


class _Call:
    def __init__(self, configuration, consumer, name: str, arguments: dict):
        self.configuration, self.consumer, self.name, self.arguments = configuration, consumer, name, arguments
        self.correlation_id = uuid.uuid4().hex
        self.actor = f"consumer:{consumer.name}" if consumer is not None else ""
        self.server = None
        self.started = time.perf_counter()
        self.excluded = 0.0  # upstream time and time waiting for an editor
        self.checks: list[dict] = []
        self.detail: dict = {"tool": name}

    def finish(self, result: str, *, delivered: dict | None = None, message: str = "", reason: str = "") -> dict:
        """Write the event, the evidence record and the metrics of this call; return what the client gets."""
        outcome = {"forwarded": "allowed", "reported": "allowed_with_hints"}.get(result, "blocked")
        server = getattr(self.server, "name", "")
        detail = {**self.detail, "server": server, "result": result}
        if reason:
            detail["reason"] = reason
        GovernanceEvent.objects.create(
            correlation_id=self.correlation_id, decision={"forwarded": "forwarded", "reported": "reported",
                                                          "rejected": "rejected"}.get(result, "blocked"),
            check_name="tool_call", configuration=self.configuration.identifier, provider=server, model="",
            actor=self.actor[:150], mode=self.configuration.mcp_results, detail=detail)
        hashed = json.dumps(delivered if delivered is not None else {"tool": self.name, "arguments": self.arguments},
                            ensure_ascii=False, sort_keys=True)
        record_tool_call({"id": self.correlation_id, "outcome": outcome, "checks": self.checks,
                          "policy_version": getattr(self.configuration, "policy_version", None),
                          "task": detail.get("task")},
                         configuration=self.configuration.identifier, actor=self.actor, text=hashed)
        metrics.tool_call_finished(self.configuration.identifier, server, result,
                                   time.perf_counter() - self.started - self.excluded)
        if delivered is not None:
            return delivered
        return error_result(message, correlation_id=self.correlation_id)


def call(configuration, *, consumer, name: str, arguments: dict) -> dict:
    """Make one tool call for `consumer` under `configuration`; return the MCP CallToolResult as JSON."""
    run = _Call(configuration, consumer, name, arguments)
    try:
        found = tools.find(configuration, name)
    except upstream.UpstreamError as exc:  # the upstream's list could not be read: nothing is called
        return run.finish("failed", message=str(exc), reason="upstream")
    if isinstance(found, tools.Refusal):
        return run.finish("refused", message=found.message, reason=found.code)
    run.server, _pin = found

    screening = checks.screen_arguments(configuration, tool=name, arguments=arguments, actor=run.actor,
                                        correlation_id=run.correlation_id)
    run.checks.extend(screening.checks)
    if screening.block is not None:
        return run.finish("blocked", message=screening.block.message, reason=screening.block.check)
    arguments = run.arguments = screening.output.tool_calls[0].arguments  # secrets masked
    hints = [h.get("message", "") for h in screening.hints]  # report-mode findings in the arguments

    if name in (configuration.approve_tools or []):
        refused = _approval(run, screening.hints)
        if refused is not None:
            return refused

    before = time.perf_counter()
    try:
        result = upstream.call_tool(run.server, name, arguments)
    except upstream.UpstreamError as exc:
        run.excluded += time.perf_counter() - before
        return run.finish("failed", message=str(exc), reason="upstream")
    run.excluded += time.perf_counter() - before

    delivered, kinds = checks.masked_result(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    if kinds:
        run.detail["secrets_masked"] = len(kinds)
        run.checks.append({"check": "secret_redaction", "result": "redacted"})
    if configuration.mcp_results != "off":
        text = _text_of(delivered)
        if text:
            result_screening = checks.screen_result(configuration, text, server=run.server, actor=run.actor,
                                                    correlation_id=run.correlation_id,
                                                    log_events=configuration.mcp_results == "block")
            run.checks.extend(c for c in result_screening.checks if c.get("check") != "secret_redaction")
            if result_screening.block is not None and configuration.mcp_results == "block":
                message = MSG_RESULT_BLOCKED % {"tool": name, "message": result_screening.block.message}
                return run.finish("blocked", message=str(message), reason="result")
            hints += [h.get("message", "") for h in result_screening.hints]
            if result_screening.block is not None:
                hints.append(result_screening.block.message)  # report: delivered, the finding said
            if configuration.mcp_results == "report" and (found := checks.findings_of(result_screening)):
                run.detail["result_findings"] = found
    gavel = {"id": run.correlation_id, "outcome": "allowed_with_hints" if hints else "allowed"}
    if hints:
        gavel["hints"] = hints
    delivered["_meta"] = {**(delivered.get("_meta") or {}), "gavel": gavel}
    return run.finish("reported" if hints else "forwarded", delivered=delivered)


def _approval(run: _Call, hints: list) -> dict | None:
    """Open the editor's task and wait for the decision; None when accepted, else the refusal to return."""
    task = tool_calls.open_approval(configuration=run.configuration.identifier, consumer=run.consumer,
                                    server=run.server.name, tool=run.name, arguments=run.arguments, hints=hints,
                                    correlation_id=run.correlation_id)
    if task is None:
        return run.finish("refused", message=str(MSG_TOO_MANY_WAITING), reason="too_many_waiting")
    run.detail["task"] = str(task.pk)
    before = time.perf_counter()
    decision = tool_calls.await_decision(task)
    run.excluded += time.perf_counter() - before
    if decision.outcome == "accepted":
        run.checks.append({"check": "review", "result": "accepted"})
        return None
    if decision.outcome == "rejected":
        run.checks.append({"check": "review", "result": "rejected"})
        message = (MSG_REJECTED_REASON % {"tool": run.name, "reason": decision.reason} if decision.reason
                   else MSG_REJECTED % {"tool": run.name})
        return run.finish("rejected", message=str(message), reason="rejected")
    seconds = int(tool_calls.approval_seconds())
    return run.finish("timed_out", message=str(MSG_TIMED_OUT % {"tool": run.name, "seconds": seconds}),
                      reason="timed_out")
