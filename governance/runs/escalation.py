"""Escalation (SPEC §6.6): a text Gavel generated whose verification failed is asked once more.

The configuration's `escalation` configuration gets the same messages; its answer is screened
again under the same call facts and from then on is the answer. Never more than one escalation
per request, none on a live stream. Each escalation, and an answer still unverified after it,
is a governance event.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
import logging

from governance.errors import BudgetExceeded, ProviderFailed, ProviderTimedOut
from governance.runs.calls import call_model
from governance.screening.pipeline import CallFacts, Output, Screening, ToolCall, run_pipeline, write_events

logger = logging.getLogger("gavel.completions")

# A verification entry that failed: a violated rule (or unknown citation), or a check that could not run.
FAILED_REASONS = ("timeout", "error")


@dataclass
class Generated:
    """A screened answer and who wrote it: what a completion, a held stream or a task returns."""

    screening: Screening
    reply: object  # judging.llm.ModelReply
    served: object  # the Configuration that answered
    escalated_from: str | None = None  # the configuration whose answer failed verification


def tool_calls_of(reply) -> list[ToolCall]:
    """The tool calls of a model's reply, as the screening reads them."""
    return [ToolCall(name=c["name"], arguments=c["arguments"], id=c.get("id")) for c in reply.tool_calls]


def failed_checks(screening: Screening) -> list[dict]:
    """The verification entries that made the text unverified: facts only (check, rule, result, reason)."""
    return [entry for entry in screening.verification.get("checks", [])
            if entry.get("result") == "violated"
            or (entry.get("result") == "no_verdict" and entry.get("reason") in FAILED_REASONS)]


def screen_generated(call, output: Output, reply, served, facts: CallFacts | None = None, *,
                     live: bool = False) -> Generated:
    """Screen a generated answer; when its verification fails and the configuration escalates, escalate once.

    `call` is a `governance.runs.completions.PreparedCall`; `facts` the call facts already read for this
    answer (the stream's hold decision), else made here. `live`: the text already went out, so no
    escalation (SPEC §8.1).
    """
    facts = facts or call.facts(served.provider)
    escalation = call.configuration.escalation if call.configuration.escalation_id else None
    if escalation is None or live:
        return Generated(run_pipeline(output, facts), reply, served)

    # The answer may be replaced: its judges are not asked and its events are not written while its
    # verification fails (run_pipeline, judging.guardrail); the escalation event carries its facts.
    first = run_pipeline(output, replace(facts, escalates=True))
    if not first.verification_failed:
        return Generated(first, reply, served)
    failed = failed_checks(first)
    answer = _ask(call, escalation)
    result = answer if isinstance(answer, str) else "answered"
    _event(call, facts, "escalated", failed, served, mode=facts.strictest_mode,
           detail={"escalation": escalation.identifier, "result": result})
    if isinstance(answer, str):
        # The escalation could not answer: the first answer stands, screened in full (judges included).
        logger.warning("escalation %s of %s failed: %s (correlation %s)", escalation.identifier,
                       call.configuration.identifier, answer, call.correlation_id)
        generated = Generated(run_pipeline(output, facts), reply, served)
    else:
        second_reply, second_served = answer
        second_output = Output(text=second_reply.text or "", format=output.format,
                               tool_calls=tool_calls_of(second_reply))
        second_facts = replace(facts, served_by=second_served.provider, escalates=False)
        generated = Generated(run_pipeline(second_output, second_facts), second_reply, second_served,
                              escalated_from=served.identifier)
    if generated.screening.verification_failed:
        # A second failure is `unverified`: delivered with hints in report mode, blocked in block mode
        # (the screening has done that); the log says the escalation did not help.
        _event(call, facts, "unverified", failed_checks(generated.screening), generated.served,
               mode=facts.strictest_mode, detail={"escalation": escalation.identifier, "result": result})
    return generated


def _ask(call, escalation):
    """(reply, served) from the escalation configuration, or why it could not answer."""
    try:
        return call_model(escalation, call.messages, correlation_id=call.correlation_id, actor=call.actor,
                          **call.options)
    except BudgetExceeded:
        return "budget_exceeded"
    except ProviderTimedOut:
        return "provider_timeout"
    except ProviderFailed:
        return "provider_error"


def _event(call, facts: CallFacts, decision: str, failed: list[dict], served, *, mode: str, detail: dict) -> None:
    """One governance event: the configuration, who answered, the failed checks — never text (SPEC §2.7)."""
    check = failed[0]["check"] if failed else "pattern_rules"
    write_events([{
        "correlation_id": call.correlation_id, "decision": decision, "check_name": check,
        "configuration": call.configuration.identifier, "provider": served.provider.name, "model": served.model,
        "actor": call.actor[:150], "mode": mode,
        "detail": {**detail, "failed": [{k: v for k, v in entry.items() if k in ("check", "rule", "result", "reason")}
                                        for entry in failed]},
    }])
