"""Rules and rule sets as plain data (SPEC §6.1): numbered lines, and the numbering itself.

No Django: the chain, the judges and the verdict cache read these; `judging.rulesets` reads the
snippet records and numbers them here, so every reader numbers rules the same way.
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
