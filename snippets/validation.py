"""One validation of a pattern rule for every write path: the admin form, the policy import and
`validate_rules` (SPEC §6.5: a pattern is a tested artifact)."""
from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from snippets import messages, patterns


def pattern_timeout() -> float:
    """The time bound per pattern per text, in seconds (SPEC §6.5; GAVEL_PATTERN_TIMEOUT_MS)."""
    return max(int(getattr(settings, "GAVEL_PATTERN_TIMEOUT_MS", 100)), 1) / 1000


@dataclass(frozen=True)
class Problem:
    """What is wrong with one rule: the field, the sample's 0-based index when a sample is meant, the message."""

    field: str
    index: int | None
    message: str


def problems_of(spec: patterns.RuleSpec, timeout: float | None = None) -> list[Problem]:
    """Everything that keeps a rule from being saved, each named (translated in the active language)."""
    timeout = pattern_timeout() if timeout is None else timeout
    found: list[Problem] = []
    if "\n" in spec.statement or "\r" in spec.statement:
        found.append(Problem("statement", None, str(messages.STATEMENT_ONE_LINE)))
    for field_name in ("wrong_samples", "correct_samples"):
        for index, sample in enumerate(getattr(spec, field_name)):
            if not sample.strip():
                found.append(Problem(field_name, index, str(messages.SAMPLE_EMPTY) % {"n": index + 1}))
            elif "\n" in sample or "\r" in sample:
                found.append(Problem(field_name, index, str(messages.SAMPLE_LINE_BREAK) % {"n": index + 1}))
    if not spec.violation_pattern:
        if spec.satisfied_pattern:
            found.append(Problem("satisfied_pattern", None, str(messages.SATISFIED_WITHOUT_VIOLATION)))
        if not spec.no_verdict_reason.strip():
            found.append(Problem("no_verdict_reason", None, str(messages.REASON_REQUIRED)))
        return found
    for field_name in ("wrong_samples", "correct_samples"):
        if not getattr(spec, field_name):
            found.append(Problem(field_name, None, str(messages.SAMPLES_REQUIRED)))
    try:
        faults = patterns.validate_rule(spec, timeout)
    except patterns.PatternInvalid as exc:
        found.append(Problem(exc.field, None, str(messages.PATTERN_INVALID) % {"error": exc.detail}))
        return found
    found.extend(Problem(f.field, f.sample - 1, messages.fault_message(f)) for f in faults)
    return found


def rule_errors(rule) -> dict[str, list[str]]:
    """A PatternRule record's problems by field, for ValidationError."""
    errors: dict[str, list[str]] = {}
    for problem in problems_of(rule.as_spec()):
        errors.setdefault(problem.field, []).append(problem.message)
    return errors
