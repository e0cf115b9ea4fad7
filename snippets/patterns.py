"""Pattern rules as a machine checks them (SPEC §6.5, §6.6): compile, evaluate, validate samples.

Pure module (stdlib + `regex`, no Django, no I/O): plain data in, plain data out. The admin form, the
policy import, `validate_rules` and the pipeline step all call it, so they cannot disagree.
"""

# Decisions the contract leaves open, kept here because this module is the contract's executable form:
#
# * Syntax: Python `re` syntax, compiled by the `regex` package in its `re`-compatible VERSION0 mode,
#   which can stop a search after a time bound (`re` cannot). A pattern the `regex` package cannot
#   compile is refused, with its error.
# * Time bound: per pattern per text (the violation pattern, then the satisfied pattern, each get the
#   whole bound). A search that runs out of time is a failed check with reason `timeout`: not a
#   verdict, and never a pass. The same bound applies to samples when a rule is validated: a pattern
#   that times out on its own sample is a fault.
# * Passage: the first match of the violation pattern (leftmost, as `search` finds it); its offsets
#   are code points into the text searched.
# * Citations: `[rule:<identifier>]`, identifier as IDENTIFIER_RE allows; case matters. Patterns are
#   evaluated on the text with its citations blanked (without_citations): a citation is not prose.

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import regex

__all__ = [
    "CITATION_RE",
    "DEFAULT_TIMEOUT",
    "IDENTIFIER_RE",
    "CompiledRule",
    "CrossHit",
    "Fault",
    "PatternInvalid",
    "RuleSpec",
    "Verdict",
    "citations",
    "without_citations",
    "compile_pattern",
    "compile_rule",
    "cross_hits",
    "evaluate",
    "validate_rule",
]

DEFAULT_TIMEOUT = 0.1  # seconds per pattern per text (SPEC §6.5); settings.GAVEL_PATTERN_TIMEOUT_MS overrides

# A rule identifier: what `[rule:<identifier>]` may name (`odoo.onchange-is-not-validation`).
IDENTIFIER_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
# Any `[rule:…]` a text holds. The identifier part is read loosely (anything up to `]` without white
# space) so that a mistyped identifier is an unknown citation, not an invisible one.
CITATION_RE = re.compile(r"\[rule:([^\]\s]{1,200})\]")

# Results of one rule on one text.
PASSED = "passed"
VIOLATED = "violated"
NO_VERDICT = "no_verdict"  # the rule has no pattern: no machine check exists
FAILED = "failed"  # the check could not run (timeout, error): never a pass

# Fault codes (validate_rule). Plain English templates so the caller can translate by identity.
WRONG_NOT_MATCHED = "wrong_not_matched"
CORRECT_FLAGGED = "correct_flagged"
SATISFIED_CLEARS_WRONG = "satisfied_clears_wrong"
SAMPLE_TIMEOUT = "sample_timeout"
MSG_WRONG_NOT_MATCHED = "wrong sample %(n)d is not matched"
MSG_CORRECT_FLAGGED = "correct sample %(n)d is flagged"
MSG_SATISFIED_CLEARS_WRONG = "the satisfied pattern clears wrong sample %(n)d"
MSG_WRONG_TIMEOUT = "wrong sample %(n)d takes longer than the time bound"
MSG_CORRECT_TIMEOUT = "correct sample %(n)d takes longer than the time bound"
FAULT_MESSAGES = {
    WRONG_NOT_MATCHED: MSG_WRONG_NOT_MATCHED,
    CORRECT_FLAGGED: MSG_CORRECT_FLAGGED,
    SATISFIED_CLEARS_WRONG: MSG_SATISFIED_CLEARS_WRONG,
}


class PatternInvalid(ValueError):
    """A pattern that does not compile; `field` names which one, `detail` is the engine's reason."""

    def __init__(self, field_name: str, detail: str):
        super().__init__(f"{field_name}: {detail}")
        self.field = field_name
        self.detail = detail


@dataclass(frozen=True)
class RuleSpec:
    """A pattern rule as stored: what the engine needs of a PatternRule record."""

    identifier: str
    statement: str = ""
    violation_pattern: str = ""
    satisfied_pattern: str = ""
    wrong_samples: tuple[str, ...] = ()
    correct_samples: tuple[str, ...] = ()
    no_verdict_reason: str = ""
    tags: tuple[str, ...] = ()
    severity: str = "normal"


@dataclass(frozen=True)
class CompiledRule:
    """A rule ready to evaluate. `error` is set when a stored pattern no longer compiles (fail closed)."""

    spec: RuleSpec
    violation: regex.Pattern | None
    satisfied: regex.Pattern | None
    error: str = ""

    @property
    def identifier(self) -> str:
        return self.spec.identifier

    @property
    def has_pattern(self) -> bool:
        return bool(self.spec.violation_pattern)


@dataclass(frozen=True)
class Verdict:
    """One rule on one text."""

    rule: str  # identifier
    result: str  # passed | violated | no_verdict | failed
    reason: str = ""  # no_verdict: the rule's reason; failed: timeout | error; passed: "" or "satisfied"
    passage: str | None = None
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Fault:
    """A rule that contradicts its own samples. `sample` is 1-based; `field` names the sample list."""

    rule: str
    code: str
    field: str  # wrong_samples | correct_samples
    sample: int

    @property
    def message(self) -> str:
        """Plain English ("wrong sample 2 is not matched"); the caller translates the template."""
        return self.template % {"n": self.sample}

    @property
    def template(self) -> str:
        if self.code == SAMPLE_TIMEOUT:
            return MSG_WRONG_TIMEOUT if self.field == "wrong_samples" else MSG_CORRECT_TIMEOUT
        return FAULT_MESSAGES[self.code]


@dataclass(frozen=True)
class CrossHit:
    """Rule `rule`'s verdict fires on correct sample `sample` (1-based) of rule `other`."""

    rule: str
    other: str
    sample: int


def compile_pattern(pattern: str, field_name: str = "violation_pattern") -> regex.Pattern:
    """Compile one pattern in Python `re` syntax; PatternInvalid names the field and the reason."""
    try:
        return regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise PatternInvalid(field_name, str(exc)) from exc


def compile_rule(spec: RuleSpec) -> CompiledRule:
    """Compile a stored rule; a pattern that does not compile gives a rule that always fails its check."""
    try:
        violation = compile_pattern(spec.violation_pattern, "violation_pattern") if spec.violation_pattern else None
        satisfied = (compile_pattern(spec.satisfied_pattern, "satisfied_pattern")
                     if spec.violation_pattern and spec.satisfied_pattern else None)
    except PatternInvalid as exc:
        return CompiledRule(spec, None, None, error=str(exc))
    return CompiledRule(spec, violation, satisfied)


def evaluate(rule: CompiledRule, text: str, timeout: float = DEFAULT_TIMEOUT) -> Verdict:
    """Violation ∧ ¬satisfied is a violation, with the first match as its passage (SPEC §6.5).

    No pattern: no verdict, with the rule's reason. A search that runs out of time, or a pattern that
    does not compile, is a failed check: never a pass.
    """
    identifier = rule.identifier
    if rule.error:
        return Verdict(identifier, FAILED, "error")
    if rule.violation is None:
        return Verdict(identifier, NO_VERDICT, rule.spec.no_verdict_reason)
    try:
        match = rule.violation.search(text, timeout=timeout)
        if match is None:
            return Verdict(identifier, PASSED)
        if rule.satisfied is not None and rule.satisfied.search(text, timeout=timeout) is not None:
            return Verdict(identifier, PASSED, "satisfied")
    except TimeoutError:
        return Verdict(identifier, FAILED, "timeout")
    return Verdict(identifier, VIOLATED, "", match.group(0), match.start(), match.end())


def validate_rule(spec: RuleSpec, timeout: float = DEFAULT_TIMEOUT) -> list[Fault]:
    """Every way the rule contradicts its own samples (SPEC §6.5). Raises PatternInvalid first.

    A wrong sample must be matched by the violation pattern and not cleared by the satisfied
    pattern; a correct sample must not get a violation verdict. A rule without a violation pattern
    has nothing to contradict.
    """
    if not spec.violation_pattern:
        if spec.satisfied_pattern:
            compile_pattern(spec.satisfied_pattern, "satisfied_pattern")
        return []
    violation = compile_pattern(spec.violation_pattern, "violation_pattern")
    satisfied = compile_pattern(spec.satisfied_pattern, "satisfied_pattern") if spec.satisfied_pattern else None
    rule = CompiledRule(spec, violation, satisfied)
    faults: list[Fault] = []
    for index, sample in enumerate(spec.wrong_samples, start=1):
        try:
            if violation.search(sample, timeout=timeout) is None:
                faults.append(Fault(spec.identifier, WRONG_NOT_MATCHED, "wrong_samples", index))
            elif satisfied is not None and satisfied.search(sample, timeout=timeout) is not None:
                faults.append(Fault(spec.identifier, SATISFIED_CLEARS_WRONG, "wrong_samples", index))
        except TimeoutError:
            faults.append(Fault(spec.identifier, SAMPLE_TIMEOUT, "wrong_samples", index))
    for index, sample in enumerate(spec.correct_samples, start=1):
        verdict = evaluate(rule, sample, timeout)
        if verdict.result == VIOLATED:
            faults.append(Fault(spec.identifier, CORRECT_FLAGGED, "correct_samples", index))
        elif verdict.result == FAILED:
            faults.append(Fault(spec.identifier, SAMPLE_TIMEOUT, "correct_samples", index))
    return faults


def cross_hits(rules: Sequence[CompiledRule], timeout: float = DEFAULT_TIMEOUT) -> list[CrossHit]:
    """Each rule's verdict on every *other* rule's correct samples: the false-positive measure."""
    hits: list[CrossHit] = []
    for rule in rules:
        if rule.violation is None:
            continue
        for other in rules:
            if other.identifier == rule.identifier:
                continue
            for index, sample in enumerate(other.spec.correct_samples, start=1):
                if evaluate(rule, sample, timeout).result == VIOLATED:
                    hits.append(CrossHit(rule.identifier, other.identifier, index))
    return hits


@dataclass(frozen=True)
class Citation:
    identifier: str
    start: int
    end: int


def without_citations(text: str) -> str:
    """The text with every `[rule:…]` blanked to spaces of the same length: a citation names a rule, it
    is not prose the rule judges (`[rule:legal.no-guarantee]` must not trip `\bguarantee\b`). Offsets
    stay those of the text."""
    return CITATION_RE.sub(lambda match: " " * len(match.group(0)), text)


def citations(text: str) -> list[Citation]:
    """Each distinct `[rule:<identifier>]` the text cites, first place first."""
    seen: dict[str, Citation] = {}
    for match in CITATION_RE.finditer(text):
        identifier = match.group(1)
        if identifier not in seen:
            seen[identifier] = Citation(identifier, match.start(), match.end())
    return list(seen.values())


@dataclass
class Library:
    """Every active rule, compiled once (per policy version, by the caller), by identifier."""

    rules: dict[str, CompiledRule] = field(default_factory=dict)

    @classmethod
    def build(cls, specs: Iterable[RuleSpec]) -> Library:
        return cls({spec.identifier: compile_rule(spec) for spec in specs})

    def tagged(self, tags: Iterable[str]) -> list[CompiledRule]:
        """The rules carrying one of `tags` (whole-tag match), by identifier."""
        wanted = set(tags)
        if not wanted:
            return []
        return [rule for _, rule in sorted(self.rules.items()) if wanted & set(rule.spec.tags)]
