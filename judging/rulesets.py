"""Rule sets (SPEC §6.1): a configuration's snippets, line by line, as numbered rules.

Reads snippet records and returns plain data; the judges, the guardrail and the
snippet admin all number rules through `rule_sets_for`, so they cannot disagree.
`Rule`, `RuleSet` and the numbering are plain data in `judging.rulesets_pure` (the chain is pure).
"""
from __future__ import annotations

from governance.models import Configuration, normalise_tags
from judging.rulesets_pure import Rule, RuleSet, build_rule_set  # noqa: F401  (Rule: re-exported)
from snippets.models import Snippet


def _tagged(snippets, tags) -> list:
    """The snippets carrying one of `tags`, in the library's order."""
    wanted = set(normalise_tags(tags))
    return [snippet for snippet in snippets if wanted & set(snippet.tags or ())] if wanted else []


def rule_sets_for(configurations) -> list[RuleSet]:
    """The rule set of each configuration: active, not hidden snippets carrying one of its rule
    tags. The snippet library is read once for all of them, and not at all when none has tags."""
    configurations = list(configurations)
    library: list = []
    if any(normalise_tags(c.rule_tags) for c in configurations):
        # Whole-tag match in Python: JSON containment is not portable (SQLite lacks it), and the
        # library is small. The order is the contract: sort, then identifier.
        library = list(Snippet.objects.filter(is_active=True, hidden=False).order_by("sort", "identifier"))
    return [build_rule_set(c.identifier, _tagged(library, c.rule_tags)) for c in configurations]


def rule_set_for(configuration) -> RuleSet:
    return rule_sets_for([configuration])[0]


def rule_numbering_for_snippet(snippet) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """How each configuration with rules on numbers this snippet's lines, for the snippet admin.

    Returns [(configuration identifier, [(rule number, line number in the snippet, line)])]
    for every configuration whose `rule_mode` is not `off` and whose rule set holds the
    snippet, by identifier. An inactive or hidden snippet is in no rule set: [].
    """
    if snippet is None or snippet.pk is None or not snippet.is_active or snippet.hidden:
        return []
    tags = set(snippet.tags or ())
    configurations = [c for c in Configuration.objects.exclude(rule_mode="off").order_by("identifier")
                      if tags & set(normalise_tags(c.rule_tags))]
    result = []
    for configuration, rule_set in zip(configurations, rule_sets_for(configurations)):
        mine = [(rule.number, rule.line_no, rule.line) for rule in rule_set.rules if rule.snippet == snippet.identifier]
        if mine:
            result.append((configuration.identifier, mine))
    return result
