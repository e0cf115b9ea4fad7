"""Check a decision judge's answers before anyone believes a number (SPEC §6.4).

Pure: the answers as plain JSON, the question keys and the threshold in; a
`DecisionVerdict` out. No Django, no litellm. Any breach of the answer's shape
makes the whole answer unusable: a failed check, never a partial verdict.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ALLOW, DENY, PASS = "allow", "deny", "pass"
OPTIONS = (ALLOW, DENY, PASS)
UNUSABLE = "unusable"
# SPEC §6.4: the probabilities sum to 1 within this much.
SUM_TOLERANCE = 0.01

# Why an answer is unusable: one code per validation sentence of §6.4.
MISSING_ANSWER = "missing_answer"  # a question without an answer
EXTRA_ANSWER = "extra_answer"  # an answer to a question that was not asked
NOT_CHOICE = "not_choice"  # an answer that is not of type choice
UNKNOWN_OPTION = "unknown_option"  # the choice is not one of allow, deny, pass
PROBABILITY_KEYS = "probability_keys"  # probabilities do not have exactly the three options as keys
PROBABILITY_RANGE = "probability_range"  # a probability that is not a finite number in [0, 1]
PROBABILITY_SUM = "probability_sum"  # the probabilities do not sum to 1 within 0.01
CONFIDENCE_RANGE = "confidence_range"  # confidence missing, not a finite number, or outside [0, 1]
NOT_MOST_PROBABLE = "not_most_probable"  # the chosen option is not the most probable one


@dataclass(frozen=True)
class RuleAnswer:
    """One question's answer after validation; `counts_as` is what the chain reads."""

    key: str
    choice: str  # what the judge chose
    confidence: float
    counts_as: str  # allow | deny | pass — pass when the confidence is below the threshold

    @property
    def uncertain(self) -> bool:
        return self.counts_as == PASS and self.choice != PASS


@dataclass(frozen=True)
class DecisionVerdict:
    status: str  # allow | deny | pass | unusable
    answers: tuple[RuleAnswer, ...] = ()
    problem: str | None = None  # for unusable: one of the codes above
    problem_key: str | None = None  # the question whose answer broke the rule

    @property
    def usable(self) -> bool:
        return self.status != UNUSABLE

    @property
    def denied(self) -> tuple[str, ...]:
        return tuple(answer.key for answer in self.answers if answer.counts_as == DENY)

    @property
    def reason(self) -> str | None:
        """Why the verdict passes: `uncertain` (below the threshold) before `undecided` (the judge chose pass)."""
        if self.status != PASS:
            return None
        return "uncertain" if any(answer.uncertain for answer in self.answers) else "undecided"


def _finite_unit(value: object) -> bool:
    """A JSON number (not a boolean), finite, in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and 0.0 <= value <= 1.0


def _problem(answer: object) -> str | None:
    """The first §6.4 sentence one answer breaks, or None."""
    if not isinstance(answer, Mapping) or answer.get("type") != "choice":
        return NOT_CHOICE
    choice = answer.get("choice")
    if choice not in OPTIONS:
        return UNKNOWN_OPTION
    probabilities = answer.get("probabilities")
    if not isinstance(probabilities, Mapping) or set(probabilities) != set(OPTIONS):
        return PROBABILITY_KEYS
    if not all(_finite_unit(probabilities[option]) for option in OPTIONS):
        return PROBABILITY_RANGE
    if abs(sum(float(probabilities[option]) for option in OPTIONS) - 1.0) > SUM_TOLERANCE:
        return PROBABILITY_SUM
    if not _finite_unit(answer.get("confidence")):
        return CONFIDENCE_RANGE
    # Ties count as most probable: the judge chose among the options it rated highest.
    if probabilities[choice] < max(probabilities[option] for option in OPTIONS):
        return NOT_MOST_PROBABLE
    return None


def check_decision(answers: Mapping[str, object], keys: Sequence[str], min_confidence: float) -> DecisionVerdict:
    """Validate every answer, then combine them: any deny → deny; else any pass → pass; else allow.

    `keys` are the questions asked, one per rule. An answer below `min_confidence` counts as pass
    for its rule. The confidence is compared with the threshold and nothing else: it is never read
    as the probability of allow, and the probabilities are only validated, never acted on.
    """
    if not isinstance(answers, Mapping):
        return DecisionVerdict(UNUSABLE, problem=MISSING_ANSWER)
    for key in keys:
        if key not in answers:
            return DecisionVerdict(UNUSABLE, problem=MISSING_ANSWER, problem_key=key)
    for key in answers:
        if key not in keys:
            return DecisionVerdict(UNUSABLE, problem=EXTRA_ANSWER, problem_key=str(key))
    counted: list[RuleAnswer] = []
    for key in keys:
        answer = answers[key]
        problem = _problem(answer)
        if problem is not None:
            return DecisionVerdict(UNUSABLE, problem=problem, problem_key=key)
        confidence = float(answer["confidence"])
        counts_as = answer["choice"] if confidence >= min_confidence else PASS
        counted.append(RuleAnswer(key, answer["choice"], confidence, counts_as))
    outcomes = {answer.counts_as for answer in counted}
    status = DENY if DENY in outcomes else PASS if PASS in outcomes else ALLOW
    return DecisionVerdict(status, tuple(counted))
