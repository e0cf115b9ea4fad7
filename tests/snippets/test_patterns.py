"""snippets/patterns.py, the pure engine: verdicts, passages, time bound, sample validation, cross-hits."""
import time

import pytest

from snippets import patterns
from snippets.patterns import RuleSpec

GUARANTEE = RuleSpec(
    identifier="legal.no-guarantee", statement="Never call an outcome guaranteed.",
    violation_pattern=r"(?i)\bguarantee(d|s)?\b", satisfied_pattern=r"(?i)\bno guarantee\b",
    wrong_samples=("Success is guaranteed.",), correct_samples=("We give no guarantee of success.", "Results vary."),
)


def evaluate(spec, text, timeout=patterns.DEFAULT_TIMEOUT):
    return patterns.evaluate(patterns.compile_rule(spec), text, timeout)


def test_violation_is_the_first_match_with_code_point_offsets():
    text = "Ünïcödé 😀 first. Success is Guaranteed, guaranteed twice."
    verdict = evaluate(GUARANTEE, text)
    assert verdict.result == "violated"
    assert verdict.passage == "Guaranteed"
    assert text[verdict.start:verdict.end] == "Guaranteed"


def test_satisfied_pattern_anywhere_clears_the_violation():
    verdict = evaluate(GUARANTEE, "Success is guaranteed? No: there is no guarantee.")
    assert (verdict.result, verdict.passage) == ("passed", None)


def test_no_match_passes():
    assert evaluate(GUARANTEE, "Results vary.").result == "passed"


def test_rule_without_pattern_gives_no_verdict_with_its_reason():
    spec = RuleSpec(identifier="tone.formal", no_verdict_reason="Context a pattern cannot see.")
    verdict = evaluate(spec, "Hey buddy")
    assert (verdict.result, verdict.reason) == ("no_verdict", "Context a pattern cannot see.")


def test_catastrophic_pattern_is_a_failed_check_within_the_bound():
    spec = RuleSpec(identifier="bad", violation_pattern=r"(a+)+$")
    started = time.monotonic()
    verdict = evaluate(spec, "a" * 5000 + "!", timeout=0.05)
    elapsed = time.monotonic() - started
    assert (verdict.result, verdict.reason) == ("failed", "timeout")
    assert elapsed < 2  # bounded, never a hang (the bound itself is 50 ms)


def test_a_stored_pattern_that_does_not_compile_fails_its_check():
    verdict = evaluate(RuleSpec(identifier="broken", violation_pattern="(unclosed"), "text")
    assert (verdict.result, verdict.reason) == ("failed", "error")


def test_validate_names_each_fault_kind_and_sample():
    spec = RuleSpec(
        identifier="x", violation_pattern=r"(?i)\bguaranteed\b", satisfied_pattern=r"(?i)\bno\b",
        wrong_samples=("It is guaranteed.", "Nothing here.", "No, it is guaranteed."),
        correct_samples=("Guaranteed!", "Fine."),
    )
    assert [f.message for f in patterns.validate_rule(spec)] == [
        "wrong sample 2 is not matched",
        "the satisfied pattern clears wrong sample 3",
        "correct sample 1 is flagged",
    ]
    assert patterns.validate_rule(GUARANTEE) == []


def test_validate_refuses_a_pattern_that_does_not_compile():
    with pytest.raises(patterns.PatternInvalid) as caught:
        patterns.validate_rule(RuleSpec(identifier="x", violation_pattern="a", satisfied_pattern="[z"))
    assert caught.value.field == "satisfied_pattern"


def test_a_sample_that_times_out_is_a_fault():
    spec = RuleSpec(identifier="x", violation_pattern=r"(a+)+$", wrong_samples=("a" * 5000 + "!",))
    assert [f.message for f in patterns.validate_rule(spec, timeout=0.02)] == [
        "wrong sample 1 takes longer than the time bound"]


def test_cross_hits_count_verdicts_on_other_rules_correct_samples():
    click = RuleSpec(identifier="click", violation_pattern=r"(?i)click here",
                     wrong_samples=("click here",), correct_samples=("Read the report.", "Success is guaranteed."))
    rules = [patterns.compile_rule(GUARANTEE), patterns.compile_rule(click)]
    hits = patterns.cross_hits(rules)
    assert hits == [patterns.CrossHit("legal.no-guarantee", "click", 2)]


def test_citations_each_once_in_order():
    text = "As [rule:b.two] and [rule:a-one] say, and [rule:b.two] again; [rule: spaced] is none."
    assert [(c.identifier, text[c.start:c.end]) for c in patterns.citations(text)] == [
        ("b.two", "[rule:b.two]"), ("a-one", "[rule:a-one]")]


def test_library_tagged_is_whole_tag_and_ordered():
    library = patterns.Library.build([
        RuleSpec(identifier="b", tags=("style",)), RuleSpec(identifier="a", tags=("lifestyle", "legal")),
        RuleSpec(identifier="c", tags=("legal",))])
    assert [r.identifier for r in library.tagged(["style"])] == ["b"]
    assert [r.identifier for r in library.tagged(["legal", "style"])] == ["a", "b", "c"]
