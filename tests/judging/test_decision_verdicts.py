"""The decision-answer check (SPEC §6.4), pure: every validation sentence has a case that breaks it."""
import math

import pytest

from judging import decision_verdicts as dv

KEYS = ["rule_1", "rule_2"]


def answer(choice="allow", confidence=0.95, probabilities=None, **extra):
    if probabilities is None:
        probabilities = {"allow": 0.05, "deny": 0.05, "pass": 0.05}
        probabilities[choice] = 0.9
    return {"type": "choice", "choice": choice, "confidence": confidence, "probabilities": probabilities, **extra}


def both(first, second=None):
    return {"rule_1": first, "rule_2": second if second is not None else answer()}


def test_confident_allows_allow():
    verdict = dv.check_decision(both(answer()), KEYS, 0.9)
    assert (verdict.status, verdict.denied) == ("allow", ())
    assert [(a.key, a.choice, a.confidence, a.counts_as) for a in verdict.answers] == [
        ("rule_1", "allow", 0.95, "allow"), ("rule_2", "allow", 0.95, "allow")]


def test_any_confident_deny_denies_and_names_its_rule():
    verdict = dv.check_decision(both(answer(), answer("deny")), KEYS, 0.9)
    assert (verdict.status, verdict.denied) == ("deny", ("rule_2",))


def test_a_deny_wins_over_a_pass():
    verdict = dv.check_decision(both(answer("pass"), answer("deny")), KEYS, 0.9)
    assert verdict.status == "deny"


def test_a_chosen_pass_passes_as_undecided():
    verdict = dv.check_decision(both(answer("pass")), KEYS, 0.9)
    assert (verdict.status, verdict.reason) == ("pass", "undecided")


def test_below_the_threshold_a_deny_counts_as_pass_for_its_rule():
    verdict = dv.check_decision(both(answer("deny", confidence=0.89)), KEYS, 0.9)
    assert (verdict.status, verdict.reason, verdict.denied) == ("pass", "uncertain", ())
    assert verdict.answers[0].choice == "deny" and verdict.answers[0].counts_as == "pass"
    # The threshold is inclusive, and it is the configuration's.
    assert dv.check_decision(both(answer("deny", confidence=0.89)), KEYS, 0.89).status == "deny"


def test_confidence_is_not_the_probability_of_allow():
    # p(allow) = 0.40 is the largest of the three; confidence 0.95 clears 0.9: an allow.
    probabilities = {"allow": 0.40, "deny": 0.35, "pass": 0.25}
    verdict = dv.check_decision(both(answer("allow", 0.95, probabilities)), KEYS, 0.9)
    assert verdict.status == "allow"
    # And a low confidence is a pass even when p(allow) is high.
    probabilities = {"allow": 0.98, "deny": 0.01, "pass": 0.01}
    assert dv.check_decision(both(answer("allow", 0.5, probabilities)), KEYS, 0.9).status == "pass"


def test_a_tie_for_most_probable_is_consistent():
    probabilities = {"allow": 0.45, "deny": 0.45, "pass": 0.10}
    assert dv.check_decision(both(answer("deny", 0.95, probabilities)), KEYS, 0.9).status == "deny"


@pytest.mark.parametrize("answers,problem", [
    # one answer per question
    ({"rule_1": answer()}, dv.MISSING_ANSWER),
    ({**both(answer()), "rule_3": answer()}, dv.EXTRA_ANSWER),
    # of type choice
    (both({"type": "noul", "noul": 0.9}), dv.NOT_CHOICE),
    (both({**answer(), "type": "score"}), dv.NOT_CHOICE),
    (both("allow"), dv.NOT_CHOICE),
    # the choice is one of the three options
    (both(answer(probabilities={"allow": 0.9, "deny": 0.05, "pass": 0.05}) | {"choice": "maybe"}), dv.UNKNOWN_OPTION),
    (both(answer(probabilities={"allow": 0.9, "deny": 0.05, "pass": 0.05}) | {"choice": "ALLOW"}), dv.UNKNOWN_OPTION),
    # probabilities have exactly those keys
    (both(answer(probabilities={"allow": 0.9, "deny": 0.1})), dv.PROBABILITY_KEYS),
    (both(answer(probabilities={"allow": 0.9, "deny": 0.05, "pass": 0.05, "maybe": 0.0})), dv.PROBABILITY_KEYS),
    (both(answer(probabilities=[0.9, 0.05, 0.05])), dv.PROBABILITY_KEYS),
    # each finite in [0, 1]
    (both(answer(probabilities={"allow": 1.1, "deny": -0.05, "pass": -0.05})), dv.PROBABILITY_RANGE),
    (both(answer(probabilities={"allow": math.nan, "deny": 0.05, "pass": 0.05})), dv.PROBABILITY_RANGE),
    (both(answer(probabilities={"allow": math.inf, "deny": 0.05, "pass": 0.05})), dv.PROBABILITY_RANGE),
    (both(answer(probabilities={"allow": "0.9", "deny": 0.05, "pass": 0.05})), dv.PROBABILITY_RANGE),
    (both(answer(probabilities={"allow": True, "deny": False, "pass": False})), dv.PROBABILITY_RANGE),
    # summing to 1 within 0.01
    (both(answer(probabilities={"allow": 0.5, "deny": 0.3, "pass": 0.1})), dv.PROBABILITY_SUM),
    (both(answer(probabilities={"allow": 0.9, "deny": 0.1, "pass": 0.0111})), dv.PROBABILITY_SUM),
    # confidence finite in [0, 1]
    (both(answer(confidence=None)), dv.CONFIDENCE_RANGE),
    (both(answer(confidence=math.nan)), dv.CONFIDENCE_RANGE),
    (both(answer(confidence=1.01)), dv.CONFIDENCE_RANGE),
    (both(answer(confidence=-0.1)), dv.CONFIDENCE_RANGE),
    (both(answer(confidence=True)), dv.CONFIDENCE_RANGE),
    # the chosen option is the most probable one
    (both(answer("deny", 0.95, {"allow": 0.6, "deny": 0.3, "pass": 0.1})), dv.NOT_MOST_PROBABLE),
])
def test_every_breach_makes_the_whole_answer_unusable(answers, problem):
    verdict = dv.check_decision(answers, KEYS, 0.9)
    assert (verdict.status, verdict.problem, verdict.usable) == ("unusable", problem, False)
    assert verdict.answers == ()  # nothing of a broken answer counts, not even its good rules


def test_a_sum_within_the_tolerance_is_accepted():
    assert dv.check_decision(both(answer(probabilities={"allow": 0.9, "deny": 0.1, "pass": 0.009})), KEYS,
                             0.9).usable
    # a missing confidence key is the same breach as a null one
    broken = answer()
    del broken["confidence"]
    assert dv.check_decision(both(broken), KEYS, 0.9).problem == dv.CONFIDENCE_RANGE
