"""The MCP room's one door into the shared screening (SPEC §14): a tool call's arguments as §8.2 screens
a proposed tool call, a tool's result after its secrets are masked, and a tool's description before an
administrator pins it. Nothing here screens by itself; it hands plain facts to the pipeline every
protocol uses and reads its verdict.
"""
from __future__ import annotations

from dataclasses import dataclass

from governance.screening.masking import mask_node
from governance.screening.pipeline import CallFacts, Output, Screening, ToolCall, run_pipeline
from governance.screening.service import resolve_configurations


@dataclass
class UpstreamOrigin:
    """Where a tool's result was written, for the judges' zone test (SPEC §7): the server's trust zone,
    treated as a provider's."""

    name: str
    trust_zone: str


def granted_configuration(identifier: str, consumer):
    """The configuration the endpoint names, as every protocol resolves it: UnknownRecord (404) or
    NotGranted (403) when the consumer may not use it."""
    configuration, _also = resolve_configurations(identifier, [], consumer)
    return configuration


def _facts(configuration, *, actor: str, correlation_id: str, served_by=None, log_events: bool = True) -> CallFacts:
    # A run that offers tools (§8.2): only the configuration's admin-only read_tools are exempt; what is
    # screened is never finished text, so no required term is demanded of an argument or a result.
    facts = CallFacts(configuration=configuration, kind="completion", offers_tools=True, actor=actor,
                      served_by=served_by, log_events=log_events)
    facts.correlation_id = correlation_id
    facts.policy_version = getattr(configuration, "policy_version", None)
    return facts


def screen_arguments(configuration, *, tool: str, arguments: dict, actor: str, correlation_id: str) -> Screening:
    """The call's string arguments, screened unless `tool` is one of the configuration's read tools; its
    secrets masked in any case (Screening.output.tool_calls[0].arguments is what may be forwarded)."""
    output = Output(text="", tool_calls=[ToolCall(name=tool, arguments=arguments)])
    return run_pipeline(output, _facts(configuration, actor=actor, correlation_id=correlation_id))


def masked_result(result: dict) -> tuple[dict, list[str]]:
    """The tool result with every secret masked in every string (content and structured content alike),
    and the kinds of secret masked (facts, never the values)."""
    kinds: list[str] = []
    return mask_node(result, kinds), kinds


def screen_result(configuration, text: str, *, server, actor: str, correlation_id: str,
                  log_events: bool = True) -> Screening:
    """A (masked) result's text under the configuration's term lists and pattern rules. In report mode
    the caller keeps the findings on the call's own event (`log_events` off): nothing was stopped."""
    origin = UpstreamOrigin(server.name, server.trust_zone)
    return run_pipeline(Output(text=text), _facts(configuration, actor=actor, correlation_id=correlation_id,
                                                  served_by=origin, log_events=log_events))


FINDING_KEYS = ("list", "terms", "missing", "rules")


def findings_of(screening: Screening) -> list[dict]:
    """The policy facts the screening's events hold (check, what it would have decided, lists, terms,
    rules) — the governance log's own facts, never a passage."""
    found = []
    for event in screening.events:
        if event["check_name"] == "secret_redaction":
            continue
        detail = event.get("detail") or {}
        found.append({"check": event["check_name"], "decision": event["decision"],
                      **{k: detail[k] for k in FINDING_KEYS if k in detail}})
    return found


def screen_description(configuration, text: str) -> Screening:
    """A tool's description and schema strings, as an administrator is shown them before pinning.
    Nobody receives this text: no governance event is written."""
    return run_pipeline(Output(text=text), _facts(configuration, actor="mcp_tools", correlation_id="description",
                                                  log_events=False))
