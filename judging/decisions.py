"""Decision judges (SPEC §6.4): a native decision model asked one choice question per rule.

One System One request per text (through `litellm.systemone`, for hosted decision
providers and for an independent DecisionsApi service reached by its base URL): each
rule line is a question's instruction, the text sits in the state as data. The answer
is validated by `judging.decision_verdicts` before any number counts.
"""
from __future__ import annotations

import logging
import time

from governance.errors import BudgetExceeded, ProviderFailed, ProviderTimedOut
from judging import decision_verdicts, model_calls
from judging.judgement import ALLOW, DENY, JUDGE_TIMEOUT_CAP, PASS, Finding, JudgeContext, JudgeDecision
from judging.rulesets_pure import RuleSet

logger = logging.getLogger("gavel.judging")

# The options of every question and what each means; the rule line is the question.
CRITERIA = {
    "allow": "The text does not break this rule.",
    "deny": "The text breaks this rule.",
    "pass": "The text alone does not tell whether it breaks this rule.",
}


def question_key(number: int) -> str:
    return f"rule_{number}"


def questions_for(rule_set: RuleSet) -> dict[str, dict]:
    """One choice question per rule, keyed `rule_<number>`, the rule line as its instruction."""
    return {
        question_key(rule.number): {"type": "choice", "instructions": rule.line, "criteria": dict(CRITERIA)}
        for rule in rule_set.rules
    }


def state_for(text: str) -> dict:
    """The judged text as data: the state a decision model reads, never an instruction to it."""
    return {"text_under_review": text}


class DecisionJudge:
    """A decision model asked once (SPEC §6.2, §6.4): no retry of an unusable answer."""

    def __init__(self, configuration):
        self.configuration = configuration
        self.identifier = configuration.identifier

    def decide(self, rule_set: RuleSet, text: str, context: JudgeContext) -> JudgeDecision:
        questions = questions_for(rule_set)
        started = time.monotonic()
        try:
            # Through the completion service: the judging configuration's budget, fallbacks, usage
            # and cost apply (SPEC §6.2); the cap bounds the whole call, fallbacks included.
            reply, _served = model_calls.installed().call_decision(
                self.configuration, questions, state_for(text), correlation_id=context.correlation_id,
                actor=context.actor, timeout_cap=JUDGE_TIMEOUT_CAP,
            )
        except ProviderTimedOut:
            return self._pass("timeout", started)
        except BudgetExceeded:
            return self._pass("budget", started)
        except ProviderFailed as exc:
            # An answer litellm itself could not parse (a missing confidence, say) is an answer
            # that breaks §6.4, not a provider that failed.
            unusable = getattr(exc.__cause__, "kind", "") == "unusable_response"
            if unusable:
                logger.warning("judge %s: unparseable answer (correlation %s)", self.identifier,
                               context.correlation_id)
            return self._pass("unusable" if unusable else "error", started, problem="unparseable" if unusable else None)
        except Exception:
            logger.exception("judge %s failed (correlation %s)", self.identifier, context.correlation_id)
            return self._pass("error", started)

        verdict = decision_verdicts.check_decision(reply.answers, list(questions), context.min_confidence)
        latency = (time.monotonic() - started) * 1000
        if not verdict.usable:
            logger.warning("judge %s: unusable answer (%s at %s) (correlation %s)", self.identifier,
                           verdict.problem, verdict.problem_key, context.correlation_id)
            return JudgeDecision(PASS, self.identifier, reason="unusable", latency_ms=latency,
                                 problem=verdict.problem, cost=reply.cost)
        by_key = {question_key(rule.number): rule for rule in rule_set.rules}
        answers = tuple((by_key[a.key].number, a.choice, a.confidence) for a in verdict.answers)
        if verdict.status == DENY:
            # A decision model names no passage: the finding is the rule alone.
            findings = tuple(Finding(by_key[key], None) for key in verdict.denied)
            return JudgeDecision(DENY, self.identifier, violations=findings, latency_ms=latency, answers=answers,
                                 cost=reply.cost)
        if verdict.status == PASS:
            return JudgeDecision(PASS, self.identifier, reason=verdict.reason, latency_ms=latency, answers=answers,
                                 cost=reply.cost)
        return JudgeDecision(ALLOW, self.identifier, latency_ms=latency, answers=answers, cost=reply.cost)

    def _pass(self, reason: str, started: float, problem: str | None = None) -> JudgeDecision:
        return JudgeDecision(PASS, self.identifier, reason=reason, problem=problem,
                             latency_ms=(time.monotonic() - started) * 1000)
