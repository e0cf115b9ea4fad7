"""The `pattern_rules:` section: deterministic rules with their samples, validated as tested artifacts."""
from __future__ import annotations

from governance.models import normalise_tags
from governance.policy.format import PATTERN_RULE_KEYS
from governance.policy.reading import Errors, Reader, Record, default_of, or_none
from snippets.models import PatternRule


def export() -> list[dict]:
    """Every pattern rule, by identifier."""
    return [
        {
            "identifier": r.identifier,
            "statement": r.statement,
            "tags": list(r.tags),
            "severity": r.severity,
            "violation_pattern": or_none(r.violation_pattern),
            "satisfied_pattern": or_none(r.satisfied_pattern),
            "no_verdict_reason": or_none(r.no_verdict_reason),
            "wrong_samples": list(r.wrong_samples),
            "correct_samples": list(r.correct_samples),
            "source": or_none(r.source),
            "is_active": r.is_active,
        }
        for r in PatternRule.objects.order_by("identifier")
    ]


def read(errors: Errors, path: str, data: dict) -> Record:
    """A pattern rule, its samples validated against its patterns (SPEC §6.5), each fault at its sample's path."""
    from snippets.validation import problems_of

    r = Reader(errors, path, data, PATTERN_RULE_KEYS)
    identifier = r.string("identifier", required=True)
    values = {
        "identifier": identifier,
        "statement": r.string("statement", required=True),
        "tags": normalise_tags(r.strings("tags")),
        "severity": r.choice("severity", PatternRule.Severity.values, default_of(PatternRule, "severity")),
        "violation_pattern": r.string("violation_pattern", nullable=True),
        "satisfied_pattern": r.string("satisfied_pattern", nullable=True),
        "no_verdict_reason": r.string("no_verdict_reason", nullable=True),
        "wrong_samples": r.strings("wrong_samples"),
        "correct_samples": r.strings("correct_samples"),
        "source": r.string("source", nullable=True),
        "is_active": r.boolean("is_active", default_of(PatternRule, "is_active")),
    }
    record = Record("pattern_rules", path, identifier, values, paths={f: f for f in values}, failed=set(r.failed))
    if not record.failed & {"violation_pattern", "satisfied_pattern", "wrong_samples", "correct_samples"}:
        for problem in problems_of(PatternRule(**values).as_spec()):
            index = "" if problem.index is None else f"[{problem.index}]"
            errors.add(f"{path}.{problem.field}{index}", problem.message)
    return record
