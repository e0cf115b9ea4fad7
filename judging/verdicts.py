"""Check a chat judge's answer before anyone sees it (SPEC §6.3).

Pure: a string, the rule numbers and the judged text in; a `Verdict` out. No
Django, no litellm. The judge's words are a claim; only what survives here counts.
"""
from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

ALLOW = "allow"
DENY = "deny"
UNUSABLE = "unusable"

# The exact shape asked for: an object with one key, a list of objects with two keys.
# Unknown keys are a breach, not ignored: the request says `strict` and
# `additionalProperties: false`, so an extra key means the schema was not honoured,
# and an answer that ignored the schema is not trusted to have honoured the rules.
TOP_KEYS = frozenset({"violations"})
VIOLATION_KEYS = frozenset({"rule", "passage"})

_WORD = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class CountedViolation:
    """A violation that survived: its rule exists and its passage is in the judged text."""

    rule: int
    passage: str  # the slice of the judged text that matched, as it stands there
    start: int  # code-point offsets into the judged text
    end: int


@dataclass(frozen=True)
class DroppedViolation:
    """A violation the judge named that did not survive; why, never the passage (it may quote text)."""

    rule: int  # the number the judge sent; not always one the set has
    why: str  # unknown_rule | passage_not_found | passage_empty | duplicate


@dataclass(frozen=True)
class Verdict:
    status: str  # allow | deny | unusable
    violations: tuple[CountedViolation, ...] = ()
    dropped: tuple[DroppedViolation, ...] = ()
    problem: str | None = None  # for unusable: not_json | schema | none_found

    @property
    def usable(self) -> bool:
        return self.status != UNUSABLE


def passage_pattern(passage: str) -> re.Pattern | None:
    """A pattern finding `passage` in a text, white space and case aside.

    Each run of white space in the passage matches any run of white space (newlines
    included); case is ignored as Python's `re.IGNORECASE` ignores it (simple case
    folding, so `ß` and `ss` stay different, as in term lists). Leading and trailing
    white space of the passage does not count. The pattern is literals joined by
    `\\s+`, so it cannot backtrack badly whatever the judge sends.
    A passage without a letter or digit points at nothing and gives None.
    """
    pieces = passage.split()
    if not pieces or not _WORD.search(passage):
        return None
    return re.compile(r"\s+".join(re.escape(piece) for piece in pieces), re.IGNORECASE)


def find_passage(passage: str, text: str) -> tuple[int, int] | None:
    """(start, end) of the first place `passage` occurs in `text` (white space and case aside), or None."""
    pattern = passage_pattern(passage)
    if pattern is None:
        return None
    match = pattern.search(text)
    return (match.start(), match.end()) if match else None


def _shape(answer: object) -> list[tuple[int, str]] | None:
    """The (rule, passage) pairs when `answer` parses and matches the schema exactly, else None."""
    if not isinstance(answer, str):
        return None
    try:
        document = json.loads(answer, object_pairs_hook=_unique_members)
    except _DuplicateKey:
        return None  # {"violations": [...], "violations": []} says two things: unusable, never the last one
    except ValueError:
        raise _NotJSON from None
    if not isinstance(document, dict) or set(document) != TOP_KEYS:
        return None
    violations = document["violations"]
    if not isinstance(violations, list):
        return None
    items = []
    for item in violations:
        if not isinstance(item, dict) or set(item) != VIOLATION_KEYS:
            return None
        rule, passage = item["rule"], item["passage"]
        # bool is an int in Python, not in JSON Schema; 3.0 is a number, not an integer.
        if type(rule) is not int or not isinstance(passage, str):
            return None
        items.append((rule, passage))
    return items


class _NotJSON(Exception):
    pass


class _DuplicateKey(Exception):
    pass


def _unique_members(pairs: list[tuple[str, object]]) -> dict:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise _DuplicateKey
    return document


def check_verdict(answer: object, rule_numbers: Collection[int], judged_text: str) -> Verdict:
    """Parse and check a judge's answer against the rule set's numbers and the judged text.

    No repair: an answer that does not parse or breaks the schema is unusable. A violation
    counts only when its rule exists and its passage occurs in the judged text; when the
    judge names violations and none counts, the answer is unusable (it saw something it
    cannot point at). An empty list allows.
    """
    try:
        items = _shape(answer)
    except _NotJSON:
        return Verdict(UNUSABLE, problem="not_json")
    if items is None:
        return Verdict(UNUSABLE, problem="schema")
    if not items:
        return Verdict(ALLOW)
    known = set(rule_numbers)
    counted: list[CountedViolation] = []
    dropped: list[DroppedViolation] = []
    seen: set[tuple[int, int, int]] = set()
    for rule, passage in items:
        if rule not in known:
            dropped.append(DroppedViolation(rule, "unknown_rule"))
            continue
        pattern = passage_pattern(passage)
        if pattern is None:
            dropped.append(DroppedViolation(rule, "passage_empty"))
            continue
        match = pattern.search(judged_text)
        if match is None:
            dropped.append(DroppedViolation(rule, "passage_not_found"))
            continue
        key = (rule, match.start(), match.end())
        if key in seen:
            dropped.append(DroppedViolation(rule, "duplicate"))
            continue
        seen.add(key)
        counted.append(CountedViolation(rule, match.group(0), match.start(), match.end()))
    if not counted:
        return Verdict(UNUSABLE, dropped=tuple(dropped), problem="none_found")
    return Verdict(DENY, violations=tuple(counted), dropped=tuple(dropped))
