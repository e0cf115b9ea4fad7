"""The policy document's JSON Schema: the one statement of its structure (SPEC §11.2, issue 41).

It is three things at once, so they cannot disagree:
- the import's first check (`structure_errors`, called by document.read_document): whatever the schema
  refuses, the import refuses, at the same path;
- the OpenAPI components of PUT /api/v1/policy, POST /policy/test and POST /policy/drafts
  (`openapi_schema`, the same dictionary with `nullable` for OpenAPI 3.0);
- the file an editor validates the YAML with (GET /api/v1/policy/schema.json;
  `# yaml-language-server: $schema=<that URL>` on the first line of a policy file).

What no JSON Schema can say stays the import's and is described as such on the document (SEMANTIC):
references between records, a name given twice, a pattern rule whose samples disagree with its patterns,
a judge that is not a chat configuration, fallback loops, a key variable the server's allow-list refuses.

To add a section or a key: one entry in SECTION_SCHEMAS (a section) or in that section's `properties`
(a key), and the same key in governance.policy.format's key list (the reader's). test_schema_policy.py
checks that the two lists agree.
"""
from __future__ import annotations

import copy
import re

from governance.policy.format import (BUDGET_KEYS, CONFIGURATION_KEYS, EXAMPLE_KEYS, EXPECT_KEYS,
                                      MCP_SERVER_KEYS, NAME_KEYS, PATTERN_RULE_KEYS, PROVIDER_KEYS, RULES_KEYS,
                                      SECTIONS, SNIPPET_KEYS, TERM_LIST_KEYS)

SCHEMA_ID = "https://gavel.invalid/api/v1/policy/schema.json"
LARGEST_INTEGER = 2_147_483_647  # governance.policy.reading.LARGEST_INTEGER: an integer column's largest value

# A character Python's str.strip() keeps: a name that must not be blank holds one.
_NOT_SPACE = "[^\\u0000\\t\\n\\u000b\\u000c\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
# No NUL character anywhere (PostgreSQL cannot store it; the import refuses it because the schema does).
NO_NUL = "^[^\\u0000]*$"
# A slug (Django's SlugField): letters, digits, hyphens, underscores.
SLUG = "^[-a-zA-Z0-9_]+$"
# A pattern rule's identifier (snippets.patterns.IDENTIFIER_RE).
RULE_IDENTIFIER = "^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$"
# A language code (governance.policy.format.LANGUAGE_RE): de, de-AT, zh-Hant.
LANGUAGE = "^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$"
# An environment variable's name (governance/models/provider_keys.py: ASCII letters, digits, _).
ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
# An API base as Django's URLValidator takes it: http(s), a host name with a top-level domain, localhost or
# an IPv4 address, an optional port, a path without white space.
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
URL = (f"^[hH][tT][tT][pP][sS]?://(?:localhost|{_LABEL}(?:\\.{_LABEL})*\\.[a-z]{{2,63}}|{_OCTET}(?:\\.{_OCTET}){{3}})"
       "(?::(?:[0-9]{1,4}|[0-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?(?:/[!-~]*)?$")


def text(*, max_length: int | None = None, non_empty: bool = False, nullable: bool = False, pattern=None,
         description: str = "") -> dict:
    schema: dict = {"type": ["string", "null"] if nullable else "string", "pattern": NO_NUL}
    if non_empty:
        schema["pattern"] = f"^[^\\u0000]*{_NOT_SPACE}[^\\u0000]*$"
    if pattern:
        schema["pattern"] = pattern
    if max_length:
        schema["maxLength"] = max_length
    if description:
        schema["description"] = description
    return schema


def integer(*, minimum: int | None = None, maximum: int = LARGEST_INTEGER, nullable=False, description="") -> dict:
    schema: dict = {"type": ["integer", "null"] if nullable else "integer",
                    "minimum": -maximum - 1 if minimum is None else minimum, "maximum": maximum}
    if description:
        schema["description"] = description
    return schema


def number(*, minimum=None, maximum=None, nullable=False, description="") -> dict:
    schema: dict = {"type": ["number", "null"] if nullable else "number"}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    if description:
        schema["description"] = description
    return schema


def choice(values, *, nullable=False, description="") -> dict:
    schema: dict = {"enum": [*values, None] if nullable else list(values)}
    if description:
        schema["description"] = description
    return schema


def strings(item: dict | None = None, *, nullable=True, unique=False, description="") -> dict:
    schema: dict = {"type": ["array", "null"] if nullable else "array",
                    "items": item or {"type": "string", "pattern": NO_NUL}}
    if unique:
        schema["uniqueItems"] = True
    if description:
        schema["description"] = description
    return schema


def record(properties: dict, required: tuple[str, ...], description: str = "") -> dict:
    schema = {"type": "object", "additionalProperties": False, "required": list(required), "properties": properties}
    if description:
        schema["description"] = description
    return schema


BOOLEAN = {"type": "boolean"}
TAGS = strings(description="Tags, trimmed and lower-cased when read.")
CONFIGURATION_REFS = strings(text(non_empty=True), unique=True, description=(
    "Configuration identifiers, each once: of this document or already stored (checked by the import, 400)."))


def _choices():
    """The models' choices, read when the schema is built (the models are the source)."""
    from governance.models import Configuration, McpServer, PolicyExample, Provider
    from governance.screening.pipeline import KINDS
    from snippets.models import PatternRule, Snippet
    from termlists.models import TermList

    def of(model, name):
        return [value for value, _label in model._meta.get_field(name).choices]

    return {"kind": Provider.Kind.values, "trust_zone": of(Provider, "trust_zone"),
            "mcp_trust_zone": of(McpServer, "trust_zone"),
            "rule_mode": Configuration.RuleMode.values, "rule_default": Configuration.RuleDefault.values,
            "data_class": of(Snippet, "data_class"), "list_mode": TermList.Mode.values,
            "severity": PatternRule.Severity.values, "example_kind": list(KINDS),
            "format": PolicyExample.Format.values}


def _finding() -> dict:
    """An expected finding: one branch per check, each with the keys that check takes (examples.CHECK_KEYS)."""
    name = text(non_empty=True)
    return {"oneOf": [
        record({"check": {"const": "term_list"}, "list": name, "term": text(nullable=True, non_empty=True)},
               ("check", "list")),
        record({"check": {"const": "rules_judge"}, "snippet": name,
                "rule": {"type": ["integer", "null"], "minimum": 1,
                         "description": "The line number within the snippet, as hints show it."}},
               ("check", "snippet")),
        record({"check": {"const": "pattern_rules"}, "rule": name}, ("check", "rule")),
        record({"check": {"const": "citations"}, "rule": text(nullable=True, non_empty=True)},
               ("check",)),
        record({"check": {"const": "field"}}, ("check",)),
    ]}


def section_schemas() -> dict:
    """Each section's record. ONE PLACE PER SECTION: a new section (e.g. `mcp_servers`) is one entry here."""
    c = _choices()
    findings = {"type": ["array", "null"], "items": _finding()}
    return {
        "providers": record({
            "name": text(max_length=100, pattern=SLUG, description="Letters, digits, hyphens, underscores."),
            "kind": choice(c["kind"]),
            "route": text(max_length=64, non_empty=True, description="The litellm provider prefix."),
            "api_base": text(max_length=500, nullable=True, pattern=f"^$|{URL}"),
            "api_key_env": text(max_length=128, nullable=True, pattern=ENV_NAME, description=(
                "The environment variable holding the key. The server's allow-list (GAVEL_PROVIDER_KEY_ENVS, "
                "default *_API_KEY and *_TOKEN; never Gavel's own settings) is checked by the import (400).")),
            "trust_zone": choice(c["trust_zone"], nullable=True),
            "timeout": integer(minimum=1),
            "max_concurrency": integer(minimum=0),
            "requests_per_minute": integer(minimum=0),
            "tokens_per_minute": integer(minimum=0),
            "price_per_mtok_in": number(minimum=0, maximum=999999.999999, nullable=True,
                                        description="At most 6 decimal places (checked by the import)."),
            "price_per_mtok_out": number(minimum=0, maximum=999999.999999, nullable=True,
                                         description="At most 6 decimal places (checked by the import)."),
        }, ("name", "route")),
        "mcp_servers": record({
            "name": text(max_length=100, pattern=SLUG, description="Letters, digits, hyphens, underscores."),
            "url": text(max_length=500, pattern=URL, description="The upstream's Streamable HTTP endpoint."),
            "headers_env": {"type": ["object", "null"], "additionalProperties": text(pattern=ENV_NAME),
                            "description": (
                                "Header name → the environment variable holding its value (the client never "
                                "holds the upstream's credentials). The server's allow-list, as for a provider's "
                                "api_key_env, is checked by the import.")},
            "trust_zone": choice(c["mcp_trust_zone"], nullable=True),
            "timeout": integer(minimum=1),
        }, ("name", "url")),
        "configurations": record({
            "identifier": text(max_length=100, pattern=SLUG),
            "provider": text(non_empty=True, description=(
                "A provider of this document or already stored (checked by the import, 400).")),
            "model": text(max_length=200, non_empty=True),
            "system_prompt": text(nullable=True),
            "temperature": number(minimum=0, maximum=2, nullable=True),
            "max_tokens": integer(minimum=0, nullable=True),
            "timeout": integer(minimum=0),
            "fallbacks": CONFIGURATION_REFS,
            "budget": {"type": ["object", "null"], "additionalProperties": False, "properties": {
                "daily_requests": integer(minimum=0),
                "daily_tokens": integer(minimum=0, maximum=2**63 - 1),
                "daily_cost": number(minimum=0, maximum=99999999.9999,
                                     description="At most 4 decimal places (checked by the import)."),
            }},
            "context_tags": TAGS,
            "read_tools": strings(text(non_empty=True)),
            "escalation": text(nullable=True, description="A configuration identifier (checked by the import)."),
            "rules": {"type": ["object", "null"], "additionalProperties": False, "properties": {
                "mode": choice(c["rule_mode"]),
                "tags": TAGS,
                "judges": {**CONFIGURATION_REFS, "description": (
                    "Judge configurations, in order. A judge must be a chat or decision configuration of a family "
                    "the import accepts, never one that judges this one in block mode (checked by the import).")},
                "default": choice(c["rule_default"]),
                "min_confidence": number(minimum=0, maximum=1),
            }},
            "mcp_servers": strings(text(non_empty=True), description=(
                "The MCP servers this configuration's /mcp/ endpoint may use (checked by the import).")),
            "approve_tools": strings(text(non_empty=True)),
            "deny_tools": strings(text(non_empty=True)),
            "mcp_results": choice(c["rule_mode"]),
        }, ("identifier", "provider", "model")),
        "snippets": record({
            "identifier": text(max_length=100, pattern=SLUG),
            "name": text(max_length=200, non_empty=True),
            "tags": TAGS,
            "sort": integer(),
            "data_class": choice(c["data_class"], nullable=True),
            "is_active": BOOLEAN,
            "hidden": BOOLEAN,
            "body": text(nullable=True),
        }, ("identifier", "name")),
        "term_lists": record({
            "name": text(max_length=200, pattern=f"^{_NOT_SPACE}(?:[^\\u0000]*{_NOT_SPACE})?$",
                         description="No white space at either end."),
            "configurations": {**CONFIGURATION_REFS, "type": "array", "minItems": 1},
            "forbidden": strings(description=(
                "Terms, one per item; `term => suggestion` gives a suggestion. The term syntax (docs/termlists.md) is "
                "checked by the import (400 at the term's path).")),
            "required": strings(),
            "site": text(max_length=100, nullable=True, pattern=f"^$|{SLUG}"),
            "language": text(max_length=35, nullable=True, pattern=f"^$|{LANGUAGE}"),
            "mode": choice(c["list_mode"]),
            "message": text(nullable=True),
            "is_active": BOOLEAN,
        }, ("name", "configurations")),
        "pattern_rules": record({
            "identifier": text(max_length=150, pattern=RULE_IDENTIFIER),
            "statement": text(max_length=500, non_empty=True),
            "tags": TAGS,
            "severity": choice(c["severity"]),
            "violation_pattern": text(nullable=True, description=(
                "A regular expression; that it compiles and that the samples agree is checked by the import.")),
            "satisfied_pattern": text(nullable=True),
            "no_verdict_reason": text(nullable=True),
            "wrong_samples": strings(),
            "correct_samples": strings(),
            "source": text(max_length=500, nullable=True),
            "is_active": BOOLEAN,
        }, ("identifier", "statement")),
        "examples": record({
            "name": text(max_length=200, non_empty=True),
            "configuration": text(max_length=100, non_empty=True,
                                  description="A configuration identifier (checked by the import)."),
            "also": CONFIGURATION_REFS,
            "kind": choice(c["example_kind"]),
            "site": text(max_length=100, nullable=True),
            "language": text(max_length=35, nullable=True, pattern=f"^$|{LANGUAGE}"),
            "format": choice(c["format"]),
            "text": text(nullable=True, description="The text; empty or absent only when tool_calls has one."),
            "tool_calls": {"type": ["array", "null"], "items": {
                "type": "object", "required": ["name", "arguments"],
                "properties": {"name": text()}}},
            "expect": {"type": "object", "additionalProperties": False, "required": ["outcome"], "properties": {
                "outcome": choice(("allowed", "allowed_with_hints", "blocked")),
                "findings": findings,
                "absent": findings,
            }},
            "note": text(nullable=True),
            "kept_by": text(max_length=150, nullable=True),
            "kept_at": {"type": ["string", "null"], "format": "date-time", "pattern": NO_NUL},
            "from_task": {"type": ["string", "null"], "format": "uuid"},
        }, ("name", "configuration", "expect"), description="Needs `text` or `tool_calls`."),
    }


SEMANTIC = (
    "Structure is what this schema says; the import refuses more, for what no JSON Schema can say, each at its "
    "path: a name given twice in a section; a reference (a configuration's provider, fallbacks, escalation and "
    "judges; a term list's configurations; an example's configuration, lists, terms, snippets and rules) to a "
    "record that is neither in the document nor stored; a fallback loop or a fallback of another kind; a judge "
    "that is not a chat or decision configuration of an accepted family; a pattern rule whose samples disagree "
    "with its patterns or whose pattern does not compile; a term the term syntax refuses; a key variable the "
    "server's allow-list refuses; a price or cost with more decimal places than it is kept with; a kept_at "
    "that is not a moment; an example with neither text nor tool calls. Over the API these are answered 422 "
    "`invalid_policy` with every path; a structure this schema refuses is a 400.")


def policy_schema() -> dict:
    """The document: each section a list of its records (null: an empty section), nothing else."""
    sections = section_schemas()
    assert tuple(sections) == SECTIONS, "governance.policy.format.SECTIONS and SECTION_SCHEMAS disagree"
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Gavel policy document",
        "description": ("A Gavel policy file (docs/policy.md; policies/example.yaml is a complete example). "
                        + SEMANTIC),
        "type": "object",
        "additionalProperties": False,
        "properties": {name: {"type": ["array", "null"], "items": item} for name, item in sections.items()},
    }


_SCHEMA = None


def schema() -> dict:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = policy_schema()
    return _SCHEMA


def published(url: str | None = None) -> dict:
    """The schema as served, its `$id` the URL it is served at."""
    result = copy.deepcopy(schema())
    if url:
        result["$id"] = url
    return result


def openapi_schema() -> dict:
    """The same schema for OpenAPI 3.0 (drf-spectacular): `nullable` for a null type, `enum` for `const`."""

    def convert(node):
        if isinstance(node, list):
            return [convert(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: convert(value) for key, value in node.items() if key not in ("$schema", "$id", "title")}
        kinds = out.get("type")
        if isinstance(kinds, list):
            rest = [k for k in kinds if k != "null"]
            out["type"] = rest[0]
            if "null" in kinds:
                out["nullable"] = True
        if "const" in out:
            out["type"] = "string"
            out["enum"] = [out.pop("const")]
        if "enum" in out and None in out["enum"]:
            out["nullable"] = True  # and null stays in the enum, as OpenAPI 3.0.3 asks
            out.setdefault("type", "string")
        elif "enum" in out:
            out.setdefault("type", "string")
        return out

    return convert(schema())


# --- the import's first check ---

def _path(error) -> str:
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _message(error) -> str:
    from governance.policy import messages

    validator = error.validator
    if validator == "additionalProperties":
        return str(messages.MSG_UNKNOWN_KEY)
    if validator == "required":
        return str(messages.MSG_REQUIRED)
    if validator == "pattern":
        return str(messages.MSG_SCHEMA) % {"problem": f"{error.schema.get('description') or 'the form this key takes'}"}
    return str(messages.MSG_SCHEMA) % {"problem": error.message}


def validator():
    """The import's validator: the schema, with `uuid` checked as a format (`date-time` is read by the import)."""
    import jsonschema

    return jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker(("uuid",)))


def structure_errors(document) -> list[tuple[str, str]]:
    """(path, message) for each place the document breaks its schema; empty when it keeps it."""
    found = []
    for error in validator().iter_errors(document):
        path = _path(error)
        if error.validator == "additionalProperties":
            extra = [key for key in error.instance if key not in error.schema.get("properties", {})]
            found.extend((f"{path}.{key}" if path else str(key), _message(error)) for key in extra)
        elif error.validator == "required":
            missing = re.match(r"'(.+)' is a required property", error.message)
            key = missing[1] if missing else ""
            found.append((f"{path}.{key}" if path else key, _message(error)))
        elif error.validator == "oneOf" and error.context:
            # A finding: report the branch of its `check` (or that the check is unknown).
            check = error.instance.get("check") if isinstance(error.instance, dict) else None
            check = check if isinstance(check, str) else None
            branch = [e for e in error.context if e.validator != "const" and
                      e.relative_schema_path and check is not None]
            if isinstance(error.instance, dict) and check in {"term_list", "rules_judge", "pattern_rules",
                                                               "citations", "field"}:
                matching = [e for e in branch if _branch_check(e) == check] or error.context
                for sub in matching:
                    sub_path = _path(sub)
                    if sub.validator == "additionalProperties":
                        extra = [k for k in sub.instance if k not in sub.schema.get("properties", {})]
                        found.extend((f"{sub_path}.{k}", _message(sub)) for k in extra)
                    elif sub.validator == "required":
                        missing = re.match(r"'(.+)' is a required property", sub.message)
                        found.append((f"{sub_path}.{missing[1] if missing else ''}", _message(sub)))
                    else:
                        found.append((sub_path, _message(sub)))
            else:
                found.append((f"{path}.check" if isinstance(error.instance, dict) else path, _message(error)))
        else:
            found.append((path or "document", _message(error)))
    return found


def _branch_check(error) -> str | None:
    branch = error.relative_schema_path[0] if error.relative_schema_path else None
    order = ("term_list", "rules_judge", "pattern_rules", "citations", "field")
    return order[branch] if isinstance(branch, int) and branch < len(order) else None


KEY_LISTS = {"providers": PROVIDER_KEYS, "mcp_servers": MCP_SERVER_KEYS, "configurations": CONFIGURATION_KEYS, "snippets": SNIPPET_KEYS,
             "term_lists": TERM_LIST_KEYS, "pattern_rules": PATTERN_RULE_KEYS, "examples": EXAMPLE_KEYS,
             "configurations.budget": BUDGET_KEYS, "configurations.rules": RULES_KEYS,
             "examples.expect": EXPECT_KEYS}
__all__ = ["schema", "validator", "published", "openapi_schema", "structure_errors", "section_schemas", "NAME_KEYS", "KEY_LISTS"]
