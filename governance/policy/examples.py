"""The `examples:` section (SPEC §12.1): texts with the outcome the team expects, what a policy test screens.

An expected finding names what fired, in policy-file terms: `{check: term_list, list, term}`,
`{check: rules_judge, snippet, rule}` (rule: the line number within the snippet, as hints show it),
`{check: pattern_rules, rule: <identifier>}`, `{check: citations, rule}` and `{check: field}`.
References are checked against the document and the stored policy (`check_references`).
"""
from __future__ import annotations

import datetime
import uuid

from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from governance.models import PolicyExample
from governance.policy.format import EXAMPLE_KEYS, EXPECT_KEYS, FINDING_KEYS, LANGUAGE_RE
from governance.policy.messages import (
    MSG_CHOICE, MSG_LANGUAGE, MSG_NOT_LIST, MSG_NOT_MAPPING, MSG_REQUIRED, MSG_TEXT_OR_TOOL_CALLS, MSG_UNKNOWN_KEY,
    MSG_NOT_STRING, MSG_NOT_INTEGER, MSG_NOT_DATETIME, MSG_NOT_UUID, MSG_UNKNOWN_CONFIGURATION, MSG_UNKNOWN_LIST,
    MSG_UNKNOWN_PATTERN_RULE, MSG_UNKNOWN_SNIPPET, MSG_UNKNOWN_SNIPPET_LINE, MSG_UNKNOWN_TERM, MSG_JSON_TOO_DEEP,
)
from governance.policy.reading import MISSING, Errors, Reader, Record, identifiers, or_none
from governance.screening.masking import masked
from governance.screening.pipeline import KINDS
from governance.screening.text import MAX_JSON_DEPTH, nested_deeper_than, nesting_beyond

OUTCOMES = ("allowed", "allowed_with_hints", "blocked")
CHECKS = ("term_list", "rules_judge", "pattern_rules", "citations", "field")
# The keys each finding's check takes, in the order the file writes them.
CHECK_KEYS = {
    "term_list": ("list", "term"),
    "rules_judge": ("snippet", "rule"),
    "pattern_rules": ("rule",),
    "citations": ("rule",),
    "field": (),
}
REQUIRED_KEYS = {"term_list": ("list",), "rules_judge": ("snippet",), "pattern_rules": ("rule",)}


def export() -> list[dict]:
    """Every example, by name, every key present."""
    return [as_document(e) for e in PolicyExample.objects.order_by("name")]


def as_document(example: PolicyExample) -> dict:
    return {
        "name": example.name,
        "configuration": example.configuration,
        "also": list(example.also),
        "kind": example.kind,
        "site": or_none(example.site),
        "language": or_none(example.language),
        "format": example.format,
        "text": example.text,
        "tool_calls": list(example.tool_calls),
        "expect": {
            "outcome": example.expect_outcome,
            "findings": [_in_order(f) for f in example.expect_findings],
            "absent": [_in_order(f) for f in example.expect_absent],
        },
        "note": example.note,
        "kept_by": or_none(example.kept_by),
        "kept_at": example.kept_at.isoformat() if example.kept_at else None,
        "from_task": str(example.from_task) if example.from_task else None,
    }


def _in_order(finding: dict) -> dict:
    """A finding's keys in the file's order (PostgreSQL's jsonb keeps no order of its own)."""
    keys = ("check", *CHECK_KEYS.get(finding.get("check"), ()))
    ordered = {key: finding[key] for key in keys if key in finding}
    ordered.update({key: value for key, value in finding.items() if key not in ordered})
    return ordered


def _findings(reader: Reader, key: str, errors: Errors) -> list[dict]:
    """A list of findings, each normalised to the keys of its check, in the file's order."""
    items = reader.raw(key)
    if items is MISSING or items is None:
        return []
    if not isinstance(items, list):
        reader.fail(key, MSG_NOT_LIST)
        return []
    found = []
    for index, item in enumerate(items):
        path = f"{reader.at(key)}[{index}]"
        if not isinstance(item, dict):
            errors.add(path, MSG_NOT_MAPPING)
            continue
        check = item.get("check", MISSING)
        if check is MISSING:
            errors.add(f"{path}.check", MSG_REQUIRED)
            continue
        if check not in CHECKS:
            errors.add(f"{path}.check", _(str(MSG_CHOICE)) % {"choices": ", ".join(CHECKS)})
            continue
        allowed = ("check", *CHECK_KEYS[check])
        finding = {"check": check}
        good = True
        for name in item:
            if name not in allowed or name not in FINDING_KEYS:
                errors.add(f"{path}.{name}", MSG_UNKNOWN_KEY)
                good = False
        for name in CHECK_KEYS[check]:
            value = item.get(name, MISSING)
            if value is MISSING or value is None:
                if name in REQUIRED_KEYS.get(check, ()):
                    errors.add(f"{path}.{name}", MSG_REQUIRED)
                    good = False
                continue
            if check == "rules_judge" and name == "rule":
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    errors.add(f"{path}.{name}", MSG_NOT_INTEGER)
                    good = False
                    continue
            elif not isinstance(value, str) or not value.strip():
                errors.add(f"{path}.{name}", MSG_NOT_STRING)
                good = False
                continue
            finding[name] = value
        if good:
            found.append(finding)
    return found


def _datetime(reader: Reader, key: str):
    value = reader.raw(key)
    if value is MISSING or value is None:
        return None
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        reader.fail(key, MSG_NOT_DATETIME)
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def _uuid(reader: Reader, key: str):
    value = reader.raw(key)
    if value is MISSING or value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        reader.fail(key, MSG_NOT_UUID)
        return None


def read(errors: Errors, path: str, data: dict) -> Record:
    r = Reader(errors, path, data, EXAMPLE_KEYS)
    name = r.string("name", required=True, non_empty=True)
    language = r.string("language", nullable=True)
    if language and not LANGUAGE_RE.match(language):
        r.fail("language", MSG_LANGUAGE)
    expect = r.mapping("expect", EXPECT_KEYS)
    if r.raw("expect") is MISSING:
        r.fail("expect", MSG_REQUIRED)
    tool_calls = r.raw("tool_calls")
    if tool_calls is MISSING or tool_calls is None:
        tool_calls = []
    elif not isinstance(tool_calls, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) and "arguments" in c for c in tool_calls):
        r.fail("tool_calls", MSG_NOT_LIST)
        tool_calls = []
    # Arguments nested past what the screening API takes are refused as it refuses them (issue 41): every
    # later step (masking, screening) would walk them by recursion.
    deep = [index for index, call in enumerate(tool_calls) if (
        nesting_beyond(call["arguments"], MAX_JSON_DEPTH) is not None if isinstance(call["arguments"], str)
        else nested_deeper_than(call["arguments"]))]
    for index in deep:
        r.fail(f"tool_calls[{index}].arguments", MSG_JSON_TOO_DEEP)
    text = r.string("text", nullable=True)
    if not text and not tool_calls and "text" not in r.failed:
        r.fail("text", MSG_TEXT_OR_TOOL_CALLS)
    values = {
        "name": name,
        "configuration": r.string("configuration", required=True),
        "also": [v for v in identifiers(r, "also", errors) if v],
        "kind": r.choice("kind", KINDS, "completion"),
        "site": r.string("site", nullable=True),
        "language": language,
        "format": r.choice("format", PolicyExample.Format.values, "text"),
        # Masked as the stored example will be (SPEC §9), so an import compares like with like.
        "text": masked(text),
        "tool_calls": [] if deep else masked(tool_calls),
        "expect_outcome": expect.choice("outcome", OUTCOMES, "allowed"),
        "expect_findings": _findings(expect, "findings", errors),
        "expect_absent": _findings(expect, "absent", errors),
        "note": masked(r.string("note", nullable=True)),
        "kept_by": r.string("kept_by", nullable=True),
        "kept_at": _datetime(r, "kept_at"),
        "from_task": _uuid(r, "from_task"),
    }
    if expect.raw("outcome") is MISSING and r.raw("expect") is not MISSING:
        expect.fail("outcome", MSG_REQUIRED)
    paths = {f: f for f in values}
    paths.update(expect_outcome="expect.outcome", expect_findings="expect.findings", expect_absent="expect.absent")
    return Record("examples", path, name, values, paths=paths, failed=set(r.failed))


def check_references(record: Record, errors: Errors, known: dict) -> None:
    """Every name an example uses exists, in the document or the stored policy (SPEC §12.1).

    `known` holds the names a reference may use: `configurations` (a set), `term_lists`
    ({name: set of terms}), `snippets` ({identifier: set of rule line numbers}), `pattern_rules` (a set).
    """
    values = record.values
    if values["configuration"] and values["configuration"] not in known["configurations"]:
        errors.add(f"{record.path}.configuration",
                   _(str(MSG_UNKNOWN_CONFIGURATION)) % {"name": values["configuration"]})
    for index, name in enumerate(values["also"]):
        if name not in known["configurations"]:
            errors.add(f"{record.path}.also[{index}]", _(str(MSG_UNKNOWN_CONFIGURATION)) % {"name": name})
    for key, field_name in (("findings", "expect_findings"), ("absent", "expect_absent")):
        for index, finding in enumerate(values[field_name]):
            path = f"{record.path}.expect.{key}[{index}]"
            check = finding["check"]
            if check == "term_list":
                terms = known["term_lists"].get(finding["list"])
                if terms is None:
                    errors.add(f"{path}.list", _(str(MSG_UNKNOWN_LIST)) % {"name": finding["list"]})
                elif "term" in finding and finding["term"] not in terms:
                    errors.add(f"{path}.term", _(str(MSG_UNKNOWN_TERM)) % {
                        "term": finding["term"], "list": finding["list"]})
            elif check == "rules_judge":
                lines = known["snippets"].get(finding["snippet"])
                if lines is None:
                    errors.add(f"{path}.snippet", _(str(MSG_UNKNOWN_SNIPPET)) % {"name": finding["snippet"]})
                elif "rule" in finding and finding["rule"] not in lines:
                    errors.add(f"{path}.rule", _(str(MSG_UNKNOWN_SNIPPET_LINE)) % {
                        "line": finding["rule"], "snippet": finding["snippet"]})
            elif check == "pattern_rules" and finding["rule"] not in known["pattern_rules"]:
                errors.add(f"{path}.rule", _(str(MSG_UNKNOWN_PATTERN_RULE)) % {"name": finding["rule"]})
