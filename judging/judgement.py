"""What every judge speaks (SPEC §6.2): the three choices, a finding, a judge's decision, the context
of the call and the `Judge` protocol. Plain data, no Django: the chain and the cache build on it,
and chat judges (`judging.judges`) and decision judges (`judging.decisions`) both answer in it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from judging.rulesets_pure import Rule, RuleSet

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
