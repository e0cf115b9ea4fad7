"""The judge chain (SPEC §6.2): the first allow or deny decides; a pass moves on.

No Django here: judges come in as objects with `decide`. What a chain that only passed
means (`rule_default`, the mode) is decided by the guardrail, the one place that decides.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judging.judgement import ALLOW, DENY, PASS, Judge, JudgeContext, JudgeDecision
from judging.rulesets_pure import RuleSet


@dataclass(frozen=True)
class ChainResult:
    choice: str  # allow | deny | pass (every judge passed, or there was none)
    decisions: tuple[JudgeDecision, ...]  # every judge asked (or not asked), in order

    @property
    def deciding(self) -> JudgeDecision | None:
        """The decision that settled the chain; None when every judge passed."""
        return self.decisions[-1] if self.choice in (ALLOW, DENY) else None

    @property
    def violations(self):
        return self.deciding.violations if self.choice == DENY else ()

    @property
    def reason(self) -> str | None:
        """Why the chain did not decide: the first judge's reason (the chain's own judge), or no_judge."""
        reasons = self.reasons
        return reasons[0] if reasons else None

    @property
    def reasons(self) -> list[str]:
        """Each distinct reason, in the order the judges gave them."""
        if self.choice != PASS:
            return []
        if not self.decisions:
            return ["no_judge"]
        found: list[str] = []
        for decision in self.decisions:
            reason = decision.reason or "error"
            if reason not in found:
                found.append(reason)
        return found


def run_chain(judges: Sequence[Judge], rule_set: RuleSet, text: str, context: JudgeContext) -> ChainResult:
    """Ask the judges in order until one allows or denies; every judge is asked at most once."""
    decisions: list[JudgeDecision] = []
    for judge in judges:
        decision = judge.decide(rule_set, text, context)
        # A judge that answers outside the contract has not decided: a choice that is not one of
        # the three, or a deny naming no rule, counts as an unusable answer.
        if decision.choice not in (ALLOW, DENY, PASS) or (decision.choice == DENY and not decision.violations):
            decision = JudgeDecision(PASS, decision.judge, reason="unusable", latency_ms=decision.latency_ms)
        decisions.append(decision)
        if decision.choice in (ALLOW, DENY):
            return ChainResult(decision.choice, tuple(decisions))
    return ChainResult(PASS, tuple(decisions))
