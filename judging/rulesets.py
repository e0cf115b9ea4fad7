"""Rule sets (SPEC §6.1): a configuration's snippets, line by line, as numbered rules.

Reads snippet records and returns plain data; the judges, the guardrail and the
snippet admin all number rules through `rule_sets_for`, so they cannot disagree.
`Rule` and `RuleSet` are plain data: importing them needs no Django (the chain is pure).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One non-empty line of a snippet, with where it comes from."""

    number: int  # 1..N across the set
    line: str  # the line, trimmed
    snippet: str  # snippet identifier
    snippet_name: str
    line_no: int  # line number within the snippet (empty lines count)

    def as_fact(self) -> dict:
        """The rule as a governance fact and hint field: no generated text."""
        return {"number": self.number, "line": self.line, "snippet": self.snippet, "line_no": self.line_no}


@dataclass(frozen=True)
class RuleSet:
    configuration: str  # identifier of the configuration whose set this is
    rules: tuple[Rule, ...]
    data_classes: tuple[tuple[str, str], ...]  # (snippet identifier, declared class) of every snippet in the set

    def __bool__(self) -> bool:
        return bool(self.rules)

    @property
    def numbers(self) -> frozenset[int]:
        return frozenset(rule.number for rule in self.rules)

    def rule(self, number: int) -> Rule:
        return self.rules[number - 1]

    def numbered(self) -> list[tuple[int, str]]:
        """(number, line) pairs, as a judge is shown them."""
        return [(rule.number, rule.line) for rule in self.rules]

    @property
    def key(self) -> tuple:
        """Equal for two sets a judge would be shown identically (one call serves both)."""
        return tuple((rule.number, rule.line) for rule in self.rules), self.data_classes


def _tagged(snippets, tags) -> list:
    """The snippets carrying one of `tags`, in the library's order."""
    from governance.models import normalise_tags

    wanted = set(normalise_tags(tags))
    return [snippet for snippet in snippets if wanted & set(snippet.tags or ())] if wanted else []


def build_rule_set(configuration_identifier: str, snippets) -> RuleSet:
    """Number the non-empty lines of `snippets`, already in order, 1..N across them."""
    rules: list[Rule] = []
    classes: list[tuple[str, str]] = []
    for snippet in snippets:
        lines = snippet.numbered_lines()
        if not lines:
            continue
        classes.append((snippet.identifier, snippet.data_class or ""))
        for line_no, line in lines:
            rules.append(Rule(len(rules) + 1, line, snippet.identifier, snippet.name, line_no))
    return RuleSet(configuration_identifier, tuple(rules), tuple(classes))


def rule_sets_for(configurations) -> list[RuleSet]:
    """The rule set of each configuration: active, not hidden snippets carrying one of its rule
    tags. The snippet library is read once for all of them, and not at all when none has tags."""
    from governance.models import normalise_tags
    from snippets.models import Snippet

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
    from governance.models import Configuration, normalise_tags

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
