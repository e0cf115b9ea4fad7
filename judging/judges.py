"""Judges (SPEC §6.2–6.4): one interface, one implementation per provider kind.

A judge reads a rule set and a text and answers allow, deny or pass. Chat judges
(§6.3) live here; decision judges (§6.4) in `judging.decisions`. `_FACTORIES` picks
one by the judging configuration's provider kind. What every judge answers in is
`judging.judgement`; the model call itself is the one governance installs (`judging.model_calls`).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable

from governance.errors import BudgetExceeded, ProviderFailed, ProviderTimedOut
from judging import model_calls, prompts, verdicts
from judging.decisions import DecisionJudge
from judging.judgement import (  # noqa: F401  (re-exported: judges are asked for these here)
    ALLOW, DENY, JUDGE_TIMEOUT_CAP, PASS, Finding, Judge, JudgeContext, JudgeDecision, NotAsked,
)
from judging.rulesets_pure import RuleSet

logger = logging.getLogger("gavel.judging")


class ChatJudge:
    """A chat model asked once (SPEC §6.3): temperature 0, a JSON-schema answer, no repair, no retry."""

    def __init__(self, configuration):
        self.configuration = configuration
        self.identifier = configuration.identifier

    def decide(self, rule_set: RuleSet, text: str, context: JudgeContext) -> JudgeDecision:
        prompt = prompts.judge_prompt(rule_set.numbered(), text)
        started = time.monotonic()
        try:
            # Through the completion service, so the judging configuration's budget, fallbacks,
            # usage and cost apply (SPEC §6.2). One call; nothing here asks again. The cap bounds
            # the whole call, fallbacks included. The request is Gavel's messages only: a
            # configuration's system_prompt is not admin-only and must not instruct a judge.
            reply, _served = model_calls.installed().call_model(
                self.configuration, prompt.messages, correlation_id=context.correlation_id, actor=context.actor,
                timeout_cap=JUDGE_TIMEOUT_CAP, own_system_prompt=False, temperature=0,
                response_format=prompts.RESPONSE_FORMAT,
            )
        except ProviderTimedOut:
            return self._pass("timeout", started)
        except BudgetExceeded:
            return self._pass("budget", started)
        except ProviderFailed:
            return self._pass("error", started)
        except Exception:
            # A judge that breaks in an unforeseen way has not decided: pass, and the mode
            # decides what that means (a block in block mode). Logged with the trace.
            logger.exception("judge %s failed (correlation %s)", self.identifier, context.correlation_id)
            return self._pass("error", started)

        verdict = verdicts.check_verdict(reply.text, rule_set.numbers, text)
        dropped = tuple(d.rule for d in verdict.dropped)
        if verdict.dropped:
            # Rule numbers and why, never the passage: it may quote the text (SPEC §9).
            logger.warning(
                "judge %s: dropped %d violation(s) (correlation %s): %s", self.identifier, len(verdict.dropped),
                context.correlation_id, ", ".join(f"rule {d.rule!r}: {d.why}" for d in verdict.dropped),
            )
        latency = (time.monotonic() - started) * 1000
        if not verdict.usable:
            logger.warning("judge %s: unusable answer (%s) (correlation %s)", self.identifier, verdict.problem,
                           context.correlation_id)
            return JudgeDecision(PASS, self.identifier, reason="unusable", dropped=dropped, latency_ms=latency,
                                 cost=reply.cost)
        if verdict.status == verdicts.ALLOW:
            return JudgeDecision(ALLOW, self.identifier, latency_ms=latency, cost=reply.cost)
        findings = tuple(Finding(rule_set.rule(v.rule), v.passage, v.start, v.end) for v in verdict.violations)
        return JudgeDecision(DENY, self.identifier, violations=findings, dropped=dropped, latency_ms=latency,
                             cost=reply.cost)

    def _pass(self, reason: str, started: float) -> JudgeDecision:
        return JudgeDecision(PASS, self.identifier, reason=reason, latency_ms=(time.monotonic() - started) * 1000)


# --- the registry: one factory per provider kind ---
JudgeFactory = Callable[[object], Judge]
_FACTORIES: dict[str, JudgeFactory] = {
    "chat": ChatJudge,
    "decision": DecisionJudge,
}


def judge_for(configuration) -> Judge:
    """The judge a judging configuration stands for; a kind without a judge passes with `no_judge`."""
    factory = _FACTORIES.get(configuration.provider.kind)
    if factory is None:
        return NotAsked(configuration.identifier, "no_judge")
    return factory(configuration)
