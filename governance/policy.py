"""Policy as code (SPEC §11.2): the whole policy as one document, exported and imported.

The format is `policy-example.yaml` (normative): its sections, its keys, in its order.
Import is an upsert by identifier/name that is atomic, idempotent and reports every error
with its path in the document (`term_lists[2].forbidden[5]`); decisions are in docs/policy.md.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

import yaml
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance import links
from governance.models import (LINK_FIELDS, Configuration, FallbackLink, JudgeLink, Provider, normalise_tags,
                               set_links)
from governance.signals import one_bump
from snippets.models import PatternRule, Snippet
from termlists.matcher import parse_terms, validate_term
from termlists.models import TermList

# --- The format (policy-example.yaml): sections and keys, in the example's order. ---

SECTIONS = ("providers", "configurations", "snippets", "term_lists", "pattern_rules")
# The key that names a record of each section; import upserts by it.
NAME_KEYS = {
    "providers": "name",
    "configurations": "identifier",
    "snippets": "identifier",
    "term_lists": "name",
    "pattern_rules": "identifier",
}
PROVIDER_KEYS = (
    "name", "kind", "route", "api_base", "api_key_env", "trust_zone", "timeout",
    "max_concurrency", "requests_per_minute", "tokens_per_minute",
    "price_per_mtok_in", "price_per_mtok_out",
)
CONFIGURATION_KEYS = (
    "identifier", "provider", "model", "system_prompt", "temperature", "max_tokens", "timeout",
    "fallbacks", "budget", "context_tags", "escalation", "rules",
)
BUDGET_KEYS = ("daily_requests", "daily_tokens", "daily_cost")
RULES_KEYS = ("mode", "tags", "judges", "default", "min_confidence")
SNIPPET_KEYS = ("identifier", "name", "tags", "sort", "data_class", "is_active", "hidden", "body")
TERM_LIST_KEYS = ("name", "configurations", "forbidden", "required", "site", "language", "mode", "message", "is_active")
PATTERN_RULE_KEYS = (
    "identifier", "statement", "tags", "severity", "violation_pattern", "satisfied_pattern",
    "no_verdict_reason", "wrong_samples", "correct_samples", "source", "is_active",
)

# Where a model field lives in the document, for fields whose path is not their own name.
CONFIGURATION_PATHS = {
    "budget_daily_requests": "budget.daily_requests",
    "budget_daily_tokens": "budget.daily_tokens",
    "budget_daily_cost": "budget.daily_cost",
    "rule_mode": "rules.mode",
    "rule_tags": "rules.tags",
    "rule_judges": "rules.judges",
    "rule_default": "rules.default",
}

# A name an environment variable can have (a key pasted here would not look like this).
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The same shape the REST API accepts for a call's language (BCP 47-ish: de, de-AT, zh-Hant).
LANGUAGE_RE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$")

CHANGE_REASON = "policy import"
# Document paths of the relations, which are rows of their own rather than fields of the configuration.
LINK_KEYS = {"fallbacks", "rules.judges"}

# --- Messages a person reads (tests assert on them). ---

MSG_DOCUMENT = gettext_lazy("A policy document is a mapping with the sections: %(sections)s.")
MSG_NOT_MAPPING = gettext_lazy("Give a mapping of keys to values.")
MSG_NOT_LIST = gettext_lazy("Give a list.")
MSG_UNKNOWN_KEY = gettext_lazy("Unknown key.")
MSG_REQUIRED = gettext_lazy("This key is required.")
MSG_NOT_STRING = gettext_lazy("Give a string (quote it if YAML read it as a number, date or boolean).")
MSG_EMPTY = gettext_lazy("This may not be empty.")
MSG_NOT_INTEGER = gettext_lazy("Give a whole number.")
MSG_NOT_NUMBER = gettext_lazy("Give a number.")
MSG_NOT_BOOLEAN = gettext_lazy("Give true or false.")
MSG_AT_LEAST = gettext_lazy("Give at least %(minimum)s.")
MSG_RANGE = gettext_lazy("Give a number from %(minimum)s to %(maximum)s.")
MSG_CHOICE = gettext_lazy("Choose one of: %(choices)s.")
MSG_ENV_NAME = gettext_lazy("Give the name of an environment variable, not a key.")
MSG_SURROUNDING_SPACE = gettext_lazy("A name has no white space at its start or end.")
MSG_LANGUAGE = gettext_lazy("Give a language code such as de or de-AT.")
MSG_DUPLICATE = gettext_lazy("Named twice in this document (first at %(path)s).")
MSG_LISTED_TWICE = gettext_lazy("Listed twice.")
MSG_UNKNOWN_PROVIDER = gettext_lazy("Unknown provider: %(name)s.")
MSG_UNKNOWN_CONFIGURATION = gettext_lazy("Unknown configuration: %(name)s.")
MSG_SELF_REFERENCE = gettext_lazy("A configuration cannot name itself.")
MSG_NO_CONFIGURATION = gettext_lazy("A term list needs at least one configuration.")
MSG_TERM_LINE_BREAK = gettext_lazy("One term per item: a term holds no line break.")
MSG_PRUNE_PROVIDER_IN_USE = gettext_lazy(
    "Pruning would remove provider %(provider)s, which configuration %(configuration)s still uses "
    "(this document has no configurations section, so configurations are kept)."
)
MSG_PRUNE_ORPHAN_LIST = gettext_lazy(
    "Pruning would leave term list “%(list)s” without a configuration "
    "(this document has no term_lists section, so term lists are kept)."
)


class PolicyInvalid(Exception):
    """The document has errors; `errors` maps each path in the document to its messages."""

    def __init__(self, errors: dict):
        super().__init__("policy document has errors: " + "; ".join(f"{p}: {' '.join(m)}" for p, m in errors.items()))
        self.errors = errors


@dataclass
class ImportReport:
    """What an import did (or, in a dry run, would do): entries read "section:identifier"."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # "section:identifier" -> the document paths (within the record) whose values change.
    changed_keys: dict[str, list[str]] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def has_changes(self) -> bool:
        return bool(self.created or self.changed or self.removed)

    def as_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "created": self.created,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "changed_keys": self.changed_keys,
        }


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------


def _number(value):
    """A Decimal or float as a plain number for YAML and JSON; None stays None."""
    if value is None:
        return None
    return float(value)


def _or_none(value: str):
    return value or None


def export_policy() -> dict:
    """The whole policy as a document in the format of policy-example.yaml: every key, in its order."""
    providers = [
        {
            "name": p.name,
            "kind": p.kind,
            "route": p.route,
            "api_base": _or_none(p.api_base),
            "api_key_env": _or_none(p.api_key_env),
            "trust_zone": _or_none(p.trust_zone),
            "timeout": p.timeout,
            "max_concurrency": p.max_concurrency,
            "requests_per_minute": p.requests_per_minute,
            "tokens_per_minute": p.tokens_per_minute,
            "price_per_mtok_in": _number(p.price_per_mtok_in),
            "price_per_mtok_out": _number(p.price_per_mtok_out),
        }
        for p in Provider.objects.order_by("name")
    ]
    configurations = [
        {
            "identifier": c.identifier,
            "provider": c.provider.name,
            "model": c.model,
            "system_prompt": c.system_prompt,
            "temperature": c.temperature,
            "max_tokens": c.max_tokens,
            "timeout": c.timeout,
            "fallbacks": c.fallback_identifiers(),
            "budget": {
                "daily_requests": c.budget_daily_requests,
                "daily_tokens": c.budget_daily_tokens,
                "daily_cost": _number(c.budget_daily_cost),
            },
            "context_tags": list(c.context_tags),
            "escalation": c.escalation.identifier if c.escalation_id else None,
            "rules": {
                "mode": c.rule_mode,
                "tags": list(c.rule_tags),
                "judges": c.judge_identifiers(),
                "default": c.rule_default,
                "min_confidence": c.min_confidence,
            },
        }
        for c in Configuration.objects.select_related("provider", "escalation")
        .prefetch_related("judge_links__judge", "fallback_links__fallback").order_by("identifier")
    ]
    snippets = [
        {
            "identifier": s.identifier,
            "name": s.name,
            "tags": list(s.tags),
            "sort": s.sort,
            "data_class": _or_none(s.data_class),
            "is_active": s.is_active,
            "hidden": s.hidden,
            "body": s.body,
        }
        for s in Snippet.objects.order_by("sort", "identifier")
    ]
    term_lists = [
        {
            "name": t.name,
            "configurations": sorted(c.identifier for c in t.configurations.all()),
            "forbidden": parse_terms(t.forbidden),
            "required": parse_terms(t.required),
            "site": _or_none(t.site),
            "language": _or_none(t.language),
            "mode": t.mode,
            "message": t.message,
            "is_active": t.is_active,
        }
        for t in TermList.objects.prefetch_related("configurations").order_by("name")
    ]
    pattern_rules = [
        {
            "identifier": r.identifier,
            "statement": r.statement,
            "tags": list(r.tags),
            "severity": r.severity,
            "violation_pattern": _or_none(r.violation_pattern),
            "satisfied_pattern": _or_none(r.satisfied_pattern),
            "no_verdict_reason": _or_none(r.no_verdict_reason),
            "wrong_samples": list(r.wrong_samples),
            "correct_samples": list(r.correct_samples),
            "source": _or_none(r.source),
            "is_active": r.is_active,
        }
        for r in PatternRule.objects.order_by("identifier")
    ]
    return {
        "providers": providers,
        "configurations": configurations,
        "snippets": snippets,
        "term_lists": term_lists,
        "pattern_rules": pattern_rules,
    }


class _FlowList(list):
    """A short list of one-line scalars, written `[a, b]` as the example writes it."""


class _FlowDict(dict):
    """A mapping written `{a: 1, b: 2}`, as the example writes `budget`."""


class _Pattern(str):
    """A regular expression, written single-quoted as the example writes it: backslashes stay as typed."""


class _PolicyDumper(yaml.SafeDumper):
    def increase_indent(self, flow=False, indentless=False):
        # Indent a list under its key (`  - name: …`), as the example does.
        return super().increase_indent(flow, False)


def _represent_str(dumper, value: str):
    # Multi-line prose (snippet bodies, prompts) reads best as a literal block. PyYAML falls back
    # to a quoted style by itself where a block cannot hold the value exactly.
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_str(value)


_PolicyDumper.add_representer(str, _represent_str)
_PolicyDumper.add_representer(
    _Pattern, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
)
_PolicyDumper.add_representer(
    _FlowList, lambda dumper, value: dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)
)
_PolicyDumper.add_representer(
    _FlowDict, lambda dumper, value: dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)
)


def _yaml_shape(node, key=None):
    """Mark the lists and the mapping the example writes in flow style."""
    if isinstance(node, str) and key in ("violation_pattern", "satisfied_pattern") and "\n" not in node:
        return _Pattern(node)
    if isinstance(node, dict):
        shaped = {k: _yaml_shape(v, k) for k, v in node.items()}
        return _FlowDict(shaped) if key == "budget" else shaped
    if isinstance(node, list):
        items = [_yaml_shape(v) for v in node]
        if all(isinstance(v, (str, int, float)) and not (isinstance(v, str) and "\n" in v) for v in items):
            return _FlowList(items)
        return items
    return node


def export_yaml() -> str:
    """The policy document as YAML (what `export_policy` the command writes)."""
    document = _yaml_shape(export_policy())
    # One blank line between sections, as in the example.
    return "\n".join(
        yaml.dump({section: value}, Dumper=_PolicyDumper, sort_keys=False, allow_unicode=True,
                  default_flow_style=False, width=100)
        for section, value in document.items()
    )


# ---------------------------------------------------------------------------
# Reading a document: every error is collected, with its path.
# ---------------------------------------------------------------------------


class _Errors:
    def __init__(self):
        self.by_path: dict[str, list[str]] = {}

    def add(self, path: str, message) -> None:
        messages = self.by_path.setdefault(path, [])
        text = str(message)
        if text not in messages:
            messages.append(text)

    def __bool__(self) -> bool:
        return bool(self.by_path)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


_MISSING = object()


class _Reader:
    """Typed access to one mapping of the document; each problem is reported at its path."""

    def __init__(self, errors: _Errors, path: str, data: dict, keys: tuple[str, ...]):
        self.errors = errors
        self.path = path
        self.data = data
        self.failed: set[str] = set()
        for key in data:
            if key not in keys:
                errors.add(self.at(key), MSG_UNKNOWN_KEY)

    def at(self, key) -> str:
        return f"{self.path}.{key}"

    def fail(self, key: str, message) -> None:
        self.errors.add(self.at(key), message)
        self.failed.add(key)

    def raw(self, key: str, *, required: bool = False):
        value = self.data.get(key, _MISSING)
        if value is _MISSING and required:
            self.fail(key, MSG_REQUIRED)
        return value

    def string(self, key: str, default: str = "", *, required=False, nullable=False, non_empty=False) -> str:
        """A string; with `nullable`, null (and a missing key) means blank."""
        value = self.raw(key, required=required)
        if value is _MISSING:
            return default
        if value is None and nullable:
            return ""
        if not isinstance(value, str):
            self.fail(key, MSG_NOT_STRING)
            return default
        if (required or non_empty) and not value.strip():
            self.fail(key, MSG_EMPTY)
        return value

    def choice(self, key: str, choices, default: str, *, nullable=False) -> str:
        value = self.raw(key)
        if value is _MISSING or (value is None and nullable):
            return default if value is _MISSING else ""
        if value not in choices:
            shown = ", ".join(choices) + (", null" if nullable else "")
            self.fail(key, _(str(MSG_CHOICE)) % {"choices": shown})
            return default
        return value

    def integer(self, key: str, default, *, minimum=None, nullable=False):
        value = self.raw(key)
        if value is _MISSING or (value is None and nullable):
            return default if value is _MISSING else None
        if not _is_int(value):
            self.fail(key, MSG_NOT_INTEGER)
            return default
        if minimum is not None and value < minimum:
            self.fail(key, _(str(MSG_AT_LEAST)) % {"minimum": minimum})
        return value

    def number(self, key: str, default, *, minimum=None, maximum=None, nullable=False):
        value = self.raw(key)
        if value is _MISSING or (value is None and nullable):
            return default if value is _MISSING else None
        if not _is_number(value):
            self.fail(key, MSG_NOT_NUMBER)
            return default
        if maximum is not None and not minimum <= value <= maximum:
            self.fail(key, _(str(MSG_RANGE)) % {"minimum": minimum, "maximum": maximum})
        elif minimum is not None and value < minimum:
            self.fail(key, _(str(MSG_AT_LEAST)) % {"minimum": minimum})
        return float(value)

    def decimal(self, key: str, default, *, nullable=False):
        """A number for a DecimalField: read through its shortest decimal spelling (0.15, not 0.1499…)."""
        value = self.raw(key)
        if value is _MISSING or (value is None and nullable):
            return default if value is _MISSING else None
        if not _is_number(value):
            self.fail(key, MSG_NOT_NUMBER)
            return default
        if value < 0:
            self.fail(key, _(str(MSG_AT_LEAST)) % {"minimum": 0})
        try:
            return Decimal(str(value))
        except InvalidOperation:
            self.fail(key, MSG_NOT_NUMBER)
            return default

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            self.fail(key, MSG_NOT_BOOLEAN)
            return default
        return value

    def strings(self, key: str, *, required=False, keep_positions=False) -> list:
        """A list of strings; a wrong item is reported at `key[index]` (None in its place with keep_positions)."""
        value = self.raw(key, required=required)
        if value is _MISSING or value is None:
            return []
        if not isinstance(value, list):
            self.fail(key, MSG_NOT_LIST)
            return []
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.errors.add(f"{self.at(key)}[{index}]", MSG_NOT_STRING)
                self.failed.add(key)
                if keep_positions:
                    result.append(None)
            else:
                result.append(item)
        return result

    def mapping(self, key: str, keys: tuple[str, ...]) -> _Reader:
        value = self.raw(key)
        if value is _MISSING or value is None:
            value = {}
        elif not isinstance(value, dict):
            self.fail(key, MSG_NOT_MAPPING)
            value = {}
        return _Reader(self.errors, self.at(key), value, keys)


@dataclass
class _Record:
    """One record of the document, read: model field values plus references by name."""

    section: str
    path: str
    name: str
    values: dict  # model field -> value, as stored
    refs: dict = field(default_factory=dict)  # provider / escalation / configurations, by name
    # model field -> path within the record, for field-level validation messages
    paths: dict = field(default_factory=dict)
    failed: set = field(default_factory=set)  # model fields whose value could not be read

    @property
    def label(self) -> str:
        return f"{self.section}:{self.name}"


def _default(model, field_name: str):
    return model._meta.get_field(field_name).get_default()


def _identifiers(reader: _Reader, key: str, errors: _Errors, *, own: str | None = None) -> list[str]:
    """A list of configuration identifiers: no duplicates, never the configuration itself.

    A wrong item stays in the list as None, so later checks report the others at their own index.
    """
    values = reader.strings(key, keep_positions=True)
    seen = set()
    for index, value in enumerate(values):
        item_path = f"{reader.at(key)}[{index}]"
        if value is None:
            continue
        if value in seen:
            errors.add(item_path, MSG_LISTED_TWICE)
        elif own is not None and value == own:
            errors.add(item_path, MSG_SELF_REFERENCE)
        seen.add(value)
    return values


def _read_provider(errors: _Errors, path: str, data: dict) -> _Record:
    r = _Reader(errors, path, data, PROVIDER_KEYS)
    name = r.string("name", required=True)
    api_key_env = r.string("api_key_env", nullable=True)
    if api_key_env and not ENV_NAME_RE.match(api_key_env):
        r.fail("api_key_env", MSG_ENV_NAME)
    values = {
        "name": name,
        "kind": r.choice("kind", Provider.Kind.values, _default(Provider, "kind")),
        "route": r.string("route", required=True),
        "api_base": r.string("api_base", nullable=True),
        "api_key_env": api_key_env,
        "trust_zone": r.choice("trust_zone", [z for z, _label in Provider._meta.get_field("trust_zone").choices],
                               "", nullable=True),
        "timeout": r.integer("timeout", _default(Provider, "timeout"), minimum=1),
        "max_concurrency": r.integer("max_concurrency", 0, minimum=0),
        "requests_per_minute": r.integer("requests_per_minute", 0, minimum=0),
        "tokens_per_minute": r.integer("tokens_per_minute", 0, minimum=0),
        "price_per_mtok_in": r.decimal("price_per_mtok_in", None, nullable=True),
        "price_per_mtok_out": r.decimal("price_per_mtok_out", None, nullable=True),
    }
    return _Record("providers", path, name, values, paths={f: f for f in values}, failed=set(r.failed))


def _read_configuration(errors: _Errors, path: str, data: dict) -> _Record:
    r = _Reader(errors, path, data, CONFIGURATION_KEYS)
    identifier = r.string("identifier", required=True)
    budget = r.mapping("budget", BUDGET_KEYS)
    rules = r.mapping("rules", RULES_KEYS)
    values = {
        "identifier": identifier,
        "model": r.string("model", required=True),
        "system_prompt": r.string("system_prompt", nullable=True),
        "temperature": r.number("temperature", None, minimum=0, maximum=2, nullable=True),
        "max_tokens": r.integer("max_tokens", None, minimum=0, nullable=True),
        "timeout": r.integer("timeout", _default(Configuration, "timeout"), minimum=0, nullable=False),
        "budget_daily_requests": budget.integer("daily_requests", 0, minimum=0),
        "budget_daily_tokens": budget.integer("daily_tokens", 0, minimum=0),
        "budget_daily_cost": budget.decimal("daily_cost", Decimal("0")),
        "context_tags": normalise_tags(r.strings("context_tags")),
        "rule_mode": rules.choice("mode", Configuration.RuleMode.values, _default(Configuration, "rule_mode")),
        "rule_tags": normalise_tags(rules.strings("tags")),
        "rule_default": rules.choice("default", Configuration.RuleDefault.values,
                                     _default(Configuration, "rule_default")),
        "min_confidence": rules.number("min_confidence", _default(Configuration, "min_confidence"),
                                       minimum=0, maximum=1),
    }
    refs = {"provider": r.string("provider", required=True), "escalation": r.string("escalation", nullable=True),
            # Relations (JudgeLink, FallbackLink): written once every configuration of the document exists.
            "fallbacks": _identifiers(r, "fallbacks", errors, own=identifier),
            "rule_judges": _identifiers(rules, "judges", errors, own=identifier)}
    if refs["escalation"] and refs["escalation"] == identifier:
        r.fail("escalation", MSG_SELF_REFERENCE)
    paths = {f: CONFIGURATION_PATHS.get(f, f) for f in [*values, "fallbacks", "rule_judges"]}
    failed = set(r.failed) | {f"budget_{k}" for k in budget.failed} | {
        {"mode": "rule_mode", "tags": "rule_tags", "judges": "rule_judges", "default": "rule_default"}.get(k, k)
        for k in rules.failed
    }
    return _Record("configurations", path, identifier, values, refs=refs, paths=paths, failed=failed)


def _read_snippet(errors: _Errors, path: str, data: dict) -> _Record:
    r = _Reader(errors, path, data, SNIPPET_KEYS)
    identifier = r.string("identifier", required=True)
    values = {
        "identifier": identifier,
        "name": r.string("name", required=True),
        "tags": normalise_tags(r.strings("tags")),
        "sort": r.integer("sort", _default(Snippet, "sort")),
        "data_class": r.choice("data_class", [c for c, _label in Snippet._meta.get_field("data_class").choices],
                               "", nullable=True),
        "is_active": r.boolean("is_active", _default(Snippet, "is_active")),
        "hidden": r.boolean("hidden", _default(Snippet, "hidden")),
        "body": r.string("body", nullable=True),
    }
    return _Record("snippets", path, identifier, values, paths={f: f for f in values}, failed=set(r.failed))


def _terms(reader: _Reader, key: str, errors: _Errors) -> str:
    """A term list's terms as stored (one per line, normalised); each bad term reported at its index."""
    terms = reader.raw(key)
    if terms is _MISSING or terms is None:
        return ""
    if not isinstance(terms, list):
        reader.fail(key, MSG_NOT_LIST)
        return ""
    good = []
    for index, term in enumerate(terms):
        item_path = f"{reader.at(key)}[{index}]"
        if not isinstance(term, str):
            errors.add(item_path, MSG_NOT_STRING)
        elif "\n" in term.strip() or "\r" in term.strip():
            errors.add(item_path, MSG_TERM_LINE_BREAK)
        elif (problem := validate_term(term)) is not None:
            # The matcher's messages are plain English constants, translated by identity.
            errors.add(item_path, _(problem))
        else:
            good.append(term)
    return "\n".join(parse_terms(good))


def _read_term_list(errors: _Errors, path: str, data: dict) -> _Record:
    r = _Reader(errors, path, data, TERM_LIST_KEYS)
    name = r.string("name", required=True)
    if name != name.strip():
        r.fail("name", MSG_SURROUNDING_SPACE)
    site = r.string("site", nullable=True)
    language = r.string("language", nullable=True)
    if language and not LANGUAGE_RE.match(language):
        r.fail("language", MSG_LANGUAGE)
    configurations = _identifiers(r, "configurations", errors)
    if not configurations and "configurations" not in r.failed:
        r.fail("configurations", MSG_NO_CONFIGURATION)
    values = {
        "name": name,
        "forbidden": _terms(r, "forbidden", errors),
        "required": _terms(r, "required", errors),
        "site": site,
        "language": language,
        "mode": r.choice("mode", TermList.Mode.values, _default(TermList, "mode")),
        "message": r.string("message", nullable=True),
        "is_active": r.boolean("is_active", _default(TermList, "is_active")),
    }
    return _Record("term_lists", path, name, values, refs={"configurations": configurations},
                   paths={f: f for f in values}, failed=set(r.failed))


def _read_pattern_rule(errors: _Errors, path: str, data: dict) -> _Record:
    """A pattern rule, its samples validated against its patterns (SPEC §6.5), each fault at its sample's path."""
    from snippets.validation import problems_of

    r = _Reader(errors, path, data, PATTERN_RULE_KEYS)
    identifier = r.string("identifier", required=True)
    values = {
        "identifier": identifier,
        "statement": r.string("statement", required=True),
        "tags": normalise_tags(r.strings("tags")),
        "severity": r.choice("severity", PatternRule.Severity.values, _default(PatternRule, "severity")),
        "violation_pattern": r.string("violation_pattern", nullable=True),
        "satisfied_pattern": r.string("satisfied_pattern", nullable=True),
        "no_verdict_reason": r.string("no_verdict_reason", nullable=True),
        "wrong_samples": r.strings("wrong_samples"),
        "correct_samples": r.strings("correct_samples"),
        "source": r.string("source", nullable=True),
        "is_active": r.boolean("is_active", _default(PatternRule, "is_active")),
    }
    record = _Record("pattern_rules", path, identifier, values, paths={f: f for f in values}, failed=set(r.failed))
    if not record.failed & {"violation_pattern", "satisfied_pattern", "wrong_samples", "correct_samples"}:
        for problem in problems_of(PatternRule(**values).as_spec()):
            index = "" if problem.index is None else f"[{problem.index}]"
            errors.add(f"{path}.{problem.field}{index}", problem.message)
    return record


READERS = {
    "providers": _read_provider,
    "configurations": _read_configuration,
    "snippets": _read_snippet,
    "term_lists": _read_term_list,
    "pattern_rules": _read_pattern_rule,
}
MODELS = {"providers": Provider, "configurations": Configuration, "snippets": Snippet, "term_lists": TermList,
          "pattern_rules": PatternRule}


def _check_fields(errors: _Errors, record: _Record) -> None:
    """The model's own field validators (slugs, URLs, lengths, digits), reported at document paths."""
    model = MODELS[record.section]
    instance = model(**record.values)
    exclude = {f.name for f in model._meta.concrete_fields if f.name not in record.values} | record.failed
    try:
        instance.clean_fields(exclude=exclude)
    except ValidationError as exc:
        for field_name, messages in exc.message_dict.items():
            for message in messages:
                errors.add(f"{record.path}.{record.paths.get(field_name, field_name)}", message)


@dataclass
class _Document:
    """A validated document: the records of each section present in it."""

    sections: dict[str, list[_Record]]

    def present(self, section: str) -> bool:
        return section in self.sections

    def records(self, section: str) -> list[_Record]:
        return self.sections.get(section, [])


def _read_document(document, errors: _Errors, *, prune: bool) -> _Document:
    if not isinstance(document, dict):
        errors.add("document", _(str(MSG_DOCUMENT)) % {"sections": ", ".join(SECTIONS)})
        return _Document({})
    for key in document:
        if key not in SECTIONS:
            errors.add(str(key), MSG_UNKNOWN_KEY)

    sections: dict[str, list[_Record]] = {}
    for section, read in READERS.items():
        if section not in document:
            continue
        items = document[section]
        records: list[_Record] = []
        sections[section] = records
        if items is None:
            continue
        if not isinstance(items, list):
            errors.add(section, MSG_NOT_LIST)
            continue
        first_seen: dict[str, str] = {}
        for index, item in enumerate(items):
            path = f"{section}[{index}]"
            if not isinstance(item, dict):
                errors.add(path, MSG_NOT_MAPPING)
                continue
            record = read(errors, path, item)
            records.append(record)
            _check_fields(errors, record)
            if not record.name:
                continue
            name_path = f"{path}.{NAME_KEYS[section]}"
            if record.name in first_seen:
                errors.add(name_path, _(str(MSG_DUPLICATE)) % {"path": first_seen[record.name]})
            else:
                first_seen[record.name] = name_path

    _check_references(_Document(sections), errors, prune=prune)
    _check_families(_Document(sections), errors)
    return _Document(sections)


def _known_names(doc: _Document, section: str, *, prune: bool) -> set[str]:
    """Names a reference may use: the document's, and the database's unless prune will remove them."""
    names = {r.name for r in doc.records(section) if r.name}
    if not (prune and doc.present(section)):
        key = NAME_KEYS[section]
        names |= set(MODELS[section].objects.values_list(key, flat=True))
    return names


def _first_mentions(names: list[str]):
    """(index, name) for each name's first place in a list: a repeat is reported as such, once."""
    seen = set()
    for index, name in enumerate(names):
        if name is not None and name not in seen:
            seen.add(name)
            yield index, name


def _check_references(doc: _Document, errors: _Errors, *, prune: bool) -> None:
    """References may point forward in the document or at records already stored."""
    providers = _known_names(doc, "providers", prune=prune)
    configurations = _known_names(doc, "configurations", prune=prune)

    def check_configuration(path: str, name: str) -> None:
        if name not in configurations:
            errors.add(path, _(str(MSG_UNKNOWN_CONFIGURATION)) % {"name": name})

    for record in doc.records("configurations"):
        provider = record.refs.get("provider")
        if provider and provider not in providers:
            errors.add(f"{record.path}.provider", _(str(MSG_UNKNOWN_PROVIDER)) % {"name": provider})
        escalation = record.refs.get("escalation")
        if escalation and escalation != record.name:
            check_configuration(f"{record.path}.escalation", escalation)
        for key, field_name in (("fallbacks", "fallbacks"), ("rules.judges", "rule_judges")):
            for index, name in _first_mentions(record.refs[field_name]):
                if name != record.name:
                    check_configuration(f"{record.path}.{key}[{index}]", name)
    for record in doc.records("term_lists"):
        for index, name in _first_mentions(record.refs["configurations"]):
            check_configuration(f"{record.path}.configurations[{index}]", name)
    _check_links(doc, errors, prune=prune)

    if not prune:
        return
    # Pruning one section must not break records of a section the document leaves out (kept as stored).
    if doc.present("providers") and not doc.present("configurations"):
        for identifier, provider in Configuration.objects.values_list("identifier", "provider__name"):
            if provider not in providers:
                errors.add("providers", _(str(MSG_PRUNE_PROVIDER_IN_USE)) % {
                    "provider": provider, "configuration": identifier})
    if doc.present("configurations") and not doc.present("term_lists"):
        for term_list in TermList.objects.prefetch_related("configurations"):
            if not any(c.identifier in configurations for c in term_list.configurations.all()):
                errors.add("configurations", _(str(MSG_PRUNE_ORPHAN_LIST)) % {"list": term_list.name})


def _check_links(doc: _Document, errors: _Errors, *, prune: bool) -> None:
    """Fallbacks of another kind, fallback loops, judges judging each other in block mode (governance.links),
    on the policy as it would stand after the import, reported at the document's paths."""
    stored = links.graph_from_database()
    old = {(p.source, p.field, p.target, p.code) for p in links.link_problems(stored)}
    graph = {} if (prune and doc.present("configurations")) else stored
    kinds = dict(Provider.objects.values_list("name", "kind"))
    kinds.update({r.name: r.values["kind"] for r in doc.records("providers") if r.name})
    stored_providers = dict(Configuration.objects.values_list("identifier", "provider__name"))
    paths = {}
    for record in doc.records("configurations"):
        if not record.name:
            continue
        provider = record.refs.get("provider") or stored_providers.get(record.name)
        graph[record.name] = links.Node(
            kind=kinds.get(provider, "chat"), mode=record.values.get("rule_mode") or "off",
            judges=[n for n in record.refs["rule_judges"] if n], fallbacks=[n for n in record.refs["fallbacks"] if n])
        paths[record.name] = record.path
    if doc.present("providers"):
        # A provider's new kind reaches the stored configurations that run on it.
        for identifier, node in graph.items():
            if identifier not in paths and stored_providers.get(identifier) in kinds:
                node.kind = kinds[stored_providers[identifier]]
    for problem in links.link_problems(graph):
        if problem.code in ("self", "twice"):
            continue  # reported by _identifiers, at the same path
        if problem.code == "fallback_kind" and problem.source in paths:
            continue  # reported by _check_families, at the same path
        if (problem.source, problem.field, problem.target, problem.code) in old:
            continue  # already so before the import: not this document's doing
        key = "fallbacks" if problem.field == "fallbacks" else "rules.judges"
        where = paths.get(problem.source)
        path = f"{where}.{key}[{problem.index}]" if where else "configurations"
        errors.add(path, problem.message)


def _check_families(doc: _Document, errors: _Errors) -> None:
    """Chat and decision configurations never mix (SPEC §6.4), judged on the records as they will stand."""
    from governance.families import family_faults

    provider_kinds = dict(Provider.objects.values_list("name", "kind"))
    provider_kinds.update({r.name: r.values["kind"] for r in doc.records("providers") if r.name})
    kinds = {name: provider_kinds.get(provider)
             for name, provider in Configuration.objects.values_list("identifier", "provider__name")}
    kinds.update({r.name: provider_kinds.get(r.refs.get("provider")) for r in doc.records("configurations") if r.name})
    for record in doc.records("configurations"):
        provider = record.refs.get("provider")
        kind = provider_kinds.get(provider)
        if kind is None:
            continue  # an unknown provider is reported by the reference check
        values = {**record.values, "escalation": record.refs.get("escalation"), "fallbacks": record.refs.get("fallbacks")}
        known = {name: k for name, k in kinds.items() if k is not None}
        for fault in family_faults(kind, provider, values, kinds=known):
            path = f"{record.path}.{record.paths.get(fault.field, fault.field)}"
            errors.add(f"{path}[{fault.index}]" if fault.index is not None else path, fault.message)


# ---------------------------------------------------------------------------
# Writing: compare, then save only what differs.
# ---------------------------------------------------------------------------


def _differences(record: _Record, current: dict) -> list[str]:
    """Document paths (within the record) whose wanted value differs from the stored one."""
    changed = []
    for field_name, wanted in record.values.items():
        if current.get(field_name) != wanted:
            changed.append(record.paths.get(field_name, field_name))
    for ref, wanted in record.refs.items():
        if ref == "configurations":
            if set(current.get(ref, ())) != set(wanted):
                changed.append(ref)
        elif (current.get(ref) or "") != (wanted or ""):
            changed.append(record.paths.get(ref, ref))
    return changed


def _stored(obj, section: str) -> dict:
    values = {f: getattr(obj, f) for f in READ_FIELDS[section]}
    if section == "configurations":
        values["provider"] = obj.provider.name
        values["escalation"] = obj.escalation.identifier if obj.escalation_id else None
        values["fallbacks"] = obj.fallback_identifiers()
        values["rule_judges"] = obj.judge_identifiers()
    elif section == "term_lists":
        values["configurations"] = [c.identifier for c in obj.configurations.all()]
    return values


READ_FIELDS = {
    "providers": ("name", "kind", "route", "api_base", "api_key_env", "trust_zone", "timeout",
                  "max_concurrency", "requests_per_minute", "tokens_per_minute",
                  "price_per_mtok_in", "price_per_mtok_out"),
    "configurations": ("identifier", "model", "system_prompt", "temperature", "max_tokens", "timeout",
                       "budget_daily_requests", "budget_daily_tokens", "budget_daily_cost", "context_tags",
                       "rule_mode", "rule_tags", "rule_default", "min_confidence"),
    "snippets": ("identifier", "name", "tags", "sort", "data_class", "is_active", "hidden", "body"),
    "term_lists": ("name", "forbidden", "required", "site", "language", "mode", "message", "is_active"),
    "pattern_rules": ("identifier", "statement", "tags", "severity", "violation_pattern", "satisfied_pattern",
                      "no_verdict_reason", "wrong_samples", "correct_samples", "source", "is_active"),
}


def _mark_history(obj) -> None:
    """History rows say why, and name no user: an API import's request.user is a consumer, not a User."""
    obj._change_reason = CHANGE_REASON
    obj._history_user = None


def _save(obj) -> None:
    _mark_history(obj)
    obj.save()


def _existing(section: str) -> dict:
    queryset = MODELS[section].objects.all()
    if section == "configurations":
        queryset = queryset.select_related("provider", "escalation").prefetch_related(
            "judge_links__judge", "fallback_links__fallback")
    elif section == "term_lists":
        queryset = queryset.prefetch_related("configurations")
    return {getattr(obj, NAME_KEYS[section]): obj for obj in queryset}


def _apply(doc: _Document, report: ImportReport, *, prune: bool, write: bool) -> None:
    stored = {section: _existing(section) for section in MODELS}
    providers = stored["providers"]
    configurations = stored["configurations"]
    pending_escalations: list[tuple[Configuration, str | None]] = []
    # Judges and fallbacks may name configurations later in the document: linked once every one exists.
    pending_links: list[tuple[Configuration, _Record]] = []

    for section in ("providers", "configurations", "snippets", "term_lists", "pattern_rules"):
        for record in doc.records(section):
            obj = stored[section].get(record.name)
            changed: list[str] = []
            if obj is None:
                report.created.append(record.label)
            else:
                changed = _differences(record, _stored(obj, section))
                if not changed:
                    report.unchanged.append(record.label)
                    continue
                report.changed.append(record.label)
                report.changed_keys[record.label] = changed
            if not write:
                continue
            if obj is None:
                obj = MODELS[section]()
                stored[section][record.name] = obj
            for field_name, value in record.values.items():
                setattr(obj, field_name, value)
            save_now = True
            if section == "configurations":
                obj.provider = providers[record.refs["provider"]]
                # The escalation target may come later in the document: set it once every record exists.
                wanted = record.refs["escalation"] or None
                current = obj.escalation.identifier if obj.escalation_id else None
                if wanted != current:
                    target = configurations.get(wanted) if wanted else None
                    if wanted is None or (target is not None and target.pk):
                        obj.escalation = target
                    else:
                        pending_escalations.append((obj, wanted))
                        # Only the escalation changes: one save, in the second pass, is enough.
                        save_now = obj.pk is None or any(key not in LINK_KEYS | {"escalation"} for key in changed)
                if obj.pk is not None and changed and all(key in LINK_KEYS for key in changed):
                    save_now = False  # only links change: they are rows of their own, written below
                pending_links.append((obj, record))
            if save_now:
                _save(obj)
            if section == "term_lists":
                wanted_scope = {configurations[name].pk for name in record.refs["configurations"]}
                if set(obj.configurations.values_list("pk", flat=True)) != wanted_scope:
                    obj.configurations.set(wanted_scope)
        if section == "configurations" and write:
            for obj, wanted in pending_escalations:
                obj.escalation = configurations[wanted]
                _save(obj)
            for obj, record in pending_links:
                for name in LINK_FIELDS:
                    set_links(obj, name, [configurations[n] for n in record.refs[name] if n])

    if not prune:
        return
    # PROTECT foreign keys point from configurations to providers (and term lists name configurations):
    # remove the records that refer before the records they refer to.
    for section in ("pattern_rules", "term_lists", "snippets", "configurations", "providers"):
        if not doc.present(section):
            continue
        named = {r.name for r in doc.records(section)}
        if write and section == "configurations":
            # Escalation is PROTECT and a removed configuration may escalate to another removed one
            # (kept ones cannot: the references were checked), so unlink them before deleting.
            removed = [obj.pk for name, obj in stored[section].items() if name not in named]
            Configuration.objects.filter(pk__in=removed).update(escalation=None)
            # Judge and fallback links are PROTECT on their target, and may join two removed configurations.
            JudgeLink.objects.filter(configuration__in=removed).delete()
            FallbackLink.objects.filter(configuration__in=removed).delete()
        for name, obj in sorted(stored[section].items()):
            if name in named:
                continue
            report.removed.append(f"{section}:{name}")
            if write:
                _mark_history(obj)
                obj.delete()


def import_policy(document, *, prune: bool = False, dry_run: bool = False) -> ImportReport:
    """Upsert the document's records by identifier/name, atomically; with `prune`, remove the rest.

    Import is an administrator's act (SPEC §2.3): it writes every field, the admin-only ones
    included, so only an administrator's path may call it -- `manage.py import_policy` (shell access
    to the server) and `PUT /api/v1/policy` (administrator consumers only). It does not check the
    actor itself.

    Every error is collected before anything is written; `PolicyInvalid.errors` maps each path
    (`term_lists[2].forbidden[5]`) to its messages. A record is saved only when a value differs,
    so a second import of the same document changes nothing (no history row, no policy version).
    With `prune`, records of a section the document holds but does not name are deleted; a section
    the document leaves out is kept as stored. `dry_run` validates and reports, writing nothing.
    """
    report = ImportReport(dry_run=dry_run)
    with transaction.atomic():
        errors = _Errors()
        doc = _read_document(document, errors, prune=prune)
        if errors:
            raise PolicyInvalid(errors.by_path)
        # One import is one policy edit: one version bump, however many records it writes.
        with one_bump():
            _apply(doc, report, prune=prune, write=not dry_run)
        if dry_run:
            transaction.set_rollback(True)
    return report
