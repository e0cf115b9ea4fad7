"""Pattern rules as the pipeline and the prompt builder read them: every active rule compiled once
per policy version and kept in this process (like the term matchers, SPEC §5.5), and the context a
configuration's `context_tags` add to its system prompt (SPEC §6.6).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from django.db import connection

from governance.models import PolicyVersion, normalise_tags
from snippets.models import PatternRule, Snippet
from snippets.patterns import CrossHit, Library, RuleSpec, cross_hits
from snippets.validation import pattern_timeout, problems_of

# (policy version, Library). Every pattern-rule save or delete bumps the policy version
# (governance/records/signals.py), so a rule is never evaluated in a former version in any process.
_library: tuple[int, Library] | None = None
_lock = threading.Lock()


def _specs() -> list[RuleSpec]:
    return [rule.as_spec() for rule in PatternRule.objects.filter(is_active=True).order_by("identifier")]


def _current_version() -> int:
    """PolicyVersion.current() in one plain SELECT: it runs on every screening with rules, and building
    the ORM query cost more than the 30 searches of a 2 KB text (benchmarks/patterns.py)."""
    table = connection.ops.quote_name(PolicyVersion._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT value FROM {table} WHERE id = 1")  # noqa: S608 (a model's own table name)
        row = cursor.fetchone()
    return (row[0] if row else None) or 1


def library(policy_version: int | None = None) -> Library:
    """Every active pattern rule, compiled, for the current policy version."""
    global _library
    if policy_version is None:
        policy_version = _current_version()
    held = _library
    if held is not None and held[0] == policy_version:
        return held[1]
    with _lock:  # one thread compiles; the others then find its result
        held = _library
        if held is not None and held[0] == policy_version:
            return held[1]
        built = Library.build(_specs())
        _library = (policy_version, built)
        return built


def forget_compiled() -> None:
    """Drop the compiled rules of this process (tests, benchmarks)."""
    global _library
    _library = None


# --- context: what `context_tags` add to a system prompt (SPEC §6.6) ---
def context_block(configuration) -> str:
    """The snippets and pattern rules carrying one of the configuration's `context_tags`, as text.

    Snippets (active, not hidden, in the rule set's order) come as labelled blocks; pattern rules
    (active) as `[rule:<identifier>] <statement>` lines. The rules come from the same compiled
    library the citation check reads, so the prompt cannot offer a rule the checker does not know.
    """
    tags = set(normalise_tags(configuration.context_tags))
    if not tags:
        return ""
    parts: list[str] = []
    snippets = [s for s in Snippet.objects.filter(is_active=True, hidden=False).order_by("sort", "identifier")
                if tags & set(s.tags or ())]
    for snippet in snippets:
        body = snippet.body.strip()
        if body:
            parts.append(f"## {snippet.name} [snippet:{snippet.identifier}]\n{body}")
    rules = library().tagged(tags)
    if rules:
        lines = "\n".join(f"[rule:{rule.identifier}] {rule.spec.statement}" for rule in rules)
        parts.append("## Rules (cite one as [rule:<identifier>])\n" + lines)
    return "\n\n".join(parts)


def system_prompt_for(configuration) -> str:
    """The configuration's system prompt with its context appended (empty when it has neither)."""
    parts = [configuration.system_prompt] if configuration.system_prompt.strip() else []
    context = context_block(configuration) if configuration.context_tags else ""
    if context:
        parts.append(context)
    return "\n\n".join(parts)


# --- validate_rules (SPEC §11.3) ---
@dataclass
class ValidationReport:
    """What `validate_rules` found among the active rules."""

    rules_checked: int = 0
    faults: list[tuple[str, str, str]] = field(default_factory=list)  # (identifier, field path, message)
    cross_hits: list[CrossHit] = field(default_factory=list)
    without_verdict: list[str] = field(default_factory=list)  # identifiers of rules without a pattern


def validate_library() -> ValidationReport:
    """Validate every active rule against its own samples, then every pattern against every other rule's
    correct samples (the false-positive measure)."""
    timeout = pattern_timeout()
    report = ValidationReport()
    specs = _specs()
    report.rules_checked = len(specs)
    for spec in specs:
        for problem in problems_of(spec, timeout):
            where = problem.field if problem.index is None else f"{problem.field}[{problem.index}]"
            report.faults.append((spec.identifier, where, problem.message))
        if not spec.violation_pattern:
            report.without_verdict.append(spec.identifier)
    compiled = [rule for rule in Library.build(specs).rules.values() if not rule.error]
    report.cross_hits = cross_hits(compiled, timeout)
    return report
