"""Judges (SPEC §6.2–6.4): one interface, one implementation per provider kind.

A judge reads a rule set and a text and answers allow, deny or pass. Chat judges
(§6.3) live here; decision judges (§6.4) in `judging.decisions`. `_FACTORIES` picks
one by the judging configuration's provider kind.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from judging import prompts, verdicts
from judging.rulesets import Rule, RuleSet

logger = logging.getLogger("gavel.judging")

ALLOW, DENY, PASS = "allow", "deny", "pass"
# SPEC §6.2: the judging configuration's timeout, capped; the cap bounds the call with its fallbacks.
JUDGE_TIMEOUT_CAP = 20


@dataclass(frozen=True)
class Finding:
    """A counted violation: a rule of the set and the passage of the judged text that breaks it."""

    rule: Rule
    passage: str | None  # verbatim slice of the judged text; None for a judge that names no passage (§6.4)
    start: int | None = None  # offsets into the judged text
    end: int | None = None


@dataclass(frozen=True)
class JudgeDecision:
    choice: str  # allow | deny | pass
    judge: str  # identifier of the judging configuration
    violations: tuple[Finding, ...] = ()
    reason: str | None = None  # why a judge passed: timeout | error | unusable | no_judge | zone | budget | injection
    dropped: tuple[int, ...] = ()  # rule numbers of violations that did not survive the check
    latency_ms: float = 0.0
    # Decision judges (§6.4): (rule number, chosen option, confidence) per question, for the audit.
    answers: tuple[tuple[int, str, float], ...] = ()
    problem: str | None = None  # which validation an unusable answer broke (decision judges)
    cost: float = 0.0  # what the call cost (0 for a verdict from the cache)
    cached: bool = False  # reused from the verdict cache (judging.cache), no call made

    def as_fact(self) -> dict:
        """The decision as governance facts: judge, choice, reason, rule numbers — no passage."""
        fact: dict = {"judge": self.judge, "choice": self.choice}
        if self.reason:
            fact["reason"] = self.reason
        if self.violations:
            fact["rules"] = sorted({finding.rule.number for finding in self.violations})
        if self.dropped:
            fact["dropped_rules"] = list(self.dropped)
        if self.answers:
            fact["answers"] = [{"rule": rule, "choice": choice, "confidence": confidence}
                               for rule, choice, confidence in self.answers]
        if self.problem:
            fact["problem"] = self.problem
        if self.cached:
            fact["cached"] = True
        return fact


@dataclass(frozen=True)
class JudgeContext:
    """What a judge needs to know about the call besides the rules and the text."""

    correlation_id: str
    actor: str = ""
    # The judged configuration's threshold for decision judges (SPEC §6.4, §6.7: each its own).
    min_confidence: float = 0.9


@runtime_checkable
class Judge(Protocol):
    identifier: str

    def decide(self, rule_set: RuleSet, text: str, context: JudgeContext) -> JudgeDecision:
        """Judge `text` against `rule_set`; never raise — a judge that cannot decide passes."""


@dataclass
class NotAsked:
    """A place in the chain whose judge is not asked (zone refused, no such judge, kind not available)."""

    identifier: str
    reason: str

    def decide(self, rule_set: RuleSet, text: str, context: JudgeContext) -> JudgeDecision:
        return JudgeDecision(PASS, self.identifier, reason=self.reason)


class ChatJudge:
    """A chat model asked once (SPEC §6.3): temperature 0, a JSON-schema answer, no repair, no retry."""

    def __init__(self, configuration):
        self.configuration = configuration
        self.identifier = configuration.identifier

    def decide(self, rule_set: RuleSet, text: str, context: JudgeContext) -> JudgeDecision:
        from governance.errors import BudgetExceeded, ProviderFailed, ProviderTimedOut
        from governance.runs.calls import call_model

        prompt = prompts.judge_prompt(rule_set.numbered(), text)
        started = time.monotonic()
        try:
            # Through the completion service, so the judging configuration's budget, fallbacks,
            # usage and cost apply (SPEC §6.2). One call; nothing here asks again. The cap bounds
            # the whole call, fallbacks included. The request is Gavel's messages only: a
            # configuration's system_prompt is not admin-only and must not instruct a judge.
            reply, _served = call_model(
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
def _decision_judge(configuration) -> Judge:
    from judging.decisions import DecisionJudge  # it builds on this module's types

    return DecisionJudge(configuration)


JudgeFactory = Callable[[object], Judge]
_FACTORIES: dict[str, JudgeFactory] = {
    "chat": ChatJudge,
    "decision": _decision_judge,
}


def judge_for(configuration) -> Judge:
    """The judge a judging configuration stands for; a kind without a judge passes with `no_judge`."""
    factory = _FACTORIES.get(configuration.provider.kind)
    if factory is None:
        return NotAsked(configuration.identifier, "no_judge")
    return factory(configuration)
