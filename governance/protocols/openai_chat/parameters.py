"""The gateway's OpenAI parameters, declared once (SPEC §11.5).

Each parameter of POST chat/completions is one `Parameter` row: the JSON schema of the values
accepted (checked here, and published as-is in the OpenAPI schema), where an accepted value goes
(`use`), and which values Gavel cannot honour and refuses with 400 `unsupported_parameter` naming
the parameter. Nothing else reads OpenAI's parameters: `read_parameters` turns a request body into
model-call options, and governance/api/schema.py builds the request schema from the same rows.
A key no row declares is ignored (an application's extra keys never break it).

Pure: plain data in and out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

# Where an accepted value goes.
PASS = "pass"                 # to the provider, as sent (options["client_parameters"])
TEMPERATURE = "temperature"   # the client's temperature: the configuration's replaces it where it sets one
MAX_TOKENS = "max_tokens"     # the client's limit: the configuration's max_tokens caps it
WITH_TOOLS = "with_tools"     # to the provider, only when the request offers tools
GATEWAY = "gateway"           # read by the gateway itself (stream, stream_options)


@dataclass(frozen=True)
class Parameter:
    name: str
    schema: dict  # OpenAI's shape of the value: a value outside it is 400 `invalid`
    use: str
    description: str = ""
    # The values Gavel honours, when fewer than OpenAI's shape allows: one outside them is 400
    # `unsupported_parameter`, saying `refusal`. The OpenAPI schema publishes these.
    accepts: dict | None = None
    refusal: Any = ""

    @property
    def published(self) -> dict:
        return self.accepts if self.accepts is not None else self.schema


def _number(low: float, high: float) -> dict:
    return {"type": "number", "minimum": low, "maximum": high}


NAMED_FUNCTION = {"type": "object", "required": ["type", "function"], "properties": {
    "type": {"type": "string", "enum": ["function"]},
    "function": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
}}
TOOL_CHOICES = ("none", "auto", "required")

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("stream", {"type": "boolean"}, GATEWAY, "A chunk stream (`text/event-stream`)."),
    Parameter("stream_options", {"type": "object", "properties": {"include_usage": {"type": "boolean"}}},
              GATEWAY, "Accepted; the last chunk of every stream carries `usage` and `gavel`."),
    Parameter("temperature", _number(0, 2), TEMPERATURE,
              "Replaced by the configuration's temperature where it sets one."),
    Parameter("top_p", _number(0, 1), PASS),
    Parameter("max_tokens", {"type": "integer", "minimum": 1}, MAX_TOKENS,
              "Capped by the configuration's max_tokens."),
    Parameter("max_completion_tokens", {"type": "integer", "minimum": 1}, MAX_TOKENS,
              "Capped by the configuration's max_tokens (the smaller of the two counts)."),
    Parameter("stop", {"oneOf": [{"type": "string"},
                                 {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4}]},
              PASS, "Up to four stop sequences."),
    Parameter("seed", {"type": "integer"}, PASS),
    Parameter("presence_penalty", _number(-2, 2), PASS),
    Parameter("frequency_penalty", _number(-2, 2), PASS),
    Parameter("logit_bias", {"type": "object", "additionalProperties": _number(-100, 100)}, PASS),
    Parameter("response_format", {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}},
              PASS),
    Parameter("user", {"type": "string", "maxLength": 256}, PASS),
    Parameter("tool_choice", {"oneOf": [{"type": "string", "enum": list(TOOL_CHOICES)}, NAMED_FUNCTION]},
              WITH_TOOLS, "Sent with `tools` only."),
    Parameter("parallel_tool_calls", {"type": "boolean"}, WITH_TOOLS, "Sent with `tools` only."),
    # Patterns, not enums: the schema's enum hook would move an enum into a component of its own.
    Parameter("reasoning_effort", {"type": "string", "pattern": "^(none|minimal|low|medium|high|xhigh|max)$"}, PASS, "Passed on; refused (`unsupported_parameter`) where the provider's route does not take it."),
    Parameter("verbosity", {"type": "string", "pattern": "^(low|medium|high)$"}, PASS,
              "Passed on; refused (`unsupported_parameter`) where the provider's route does not take it."),
    Parameter("service_tier", {"type": "string", "maxLength": 64}, PASS,
              "Passed on; refused (`unsupported_parameter`) where the provider's route does not take it."),
    Parameter("prediction", {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}},
              PASS, "Passed on; refused (`unsupported_parameter`) where the provider's route does not take it."),
    # Accepted and kept by Gavel: neither changes the answer, and the provider never stores a text
    # Gavel has not screened (the governance events are the record).
    Parameter("metadata", {"type": "object", "additionalProperties": {"type": "string"}}, GATEWAY,
              "Accepted, not sent on: it does not change the answer."),
    Parameter("store", {"type": "boolean"}, GATEWAY,
              "Accepted, not sent on: the provider does not keep answers Gavel screens."),
    # What Gavel cannot honour: an answer that is screened as one text.
    Parameter("n", {"type": "integer", "minimum": 1}, GATEWAY, "Only 1: Gavel screens one answer per call.",
              accepts={"type": "integer", "minimum": 1, "maximum": 1},
              refusal=_("Gavel screens one answer per call: give n 1 or leave it out.")),
    Parameter("logprobs", {"type": "boolean"}, GATEWAY,
              "Only false: token log probabilities would show a text screening withheld or masked.",
              accepts={"type": "boolean", "not": {"enum": [True]}},
              refusal=_("Gavel does not return log probabilities: they would show the tokens of text it withheld "
                        "or masked.")),
    Parameter("top_logprobs", {"type": "integer", "minimum": 0, "maximum": 20}, GATEWAY, "Only 0.",
              accepts={"type": "integer", "minimum": 0, "maximum": 0},
              refusal=_("Gavel does not return log probabilities: they would show the tokens of text it withheld "
                        "or masked.")),
    Parameter("modalities", {"type": "array", "items": {"type": "string"}}, GATEWAY, "Only text.",
              accepts={"type": "array", "items": {"type": "string", "pattern": "^text$"}},
              refusal=_("Gavel screens text answers only: give modalities [\"text\"] or leave it out.")),
    Parameter("audio", {"type": "object"}, GATEWAY, "Not taken: Gavel screens text answers only.",
              accepts={"not": {}}, refusal=_("Gavel screens text answers only: leave audio out.")),
)
BY_NAME = {parameter.name: parameter for parameter in PARAMETERS}
# Passed on as arguments of their own of the model call (judging.llm sends `user` in the body too, and
# `tool_choice` only with tools); every other passed parameter travels in options["client_parameters"].
OWN_ARGUMENTS = ("response_format", "tool_choice", "user")
# Messages are read exactly as POST /api/v1/completions reads them; these are the request's other members.
REQUEST_KEYS = ("model", "messages", "tools", "gavel")


# --- the JSON-schema subset the rows use ---
_TYPES = {
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def conforms(value, schema: dict) -> bool:
    """Whether `value` is valid under `schema` (type, bounds, enum, pattern, items, properties, oneOf, not)."""
    if "oneOf" in schema:
        return sum(conforms(value, branch) for branch in schema["oneOf"]) == 1
    if "not" in schema and conforms(value, schema["not"]):
        return False
    kind = schema.get("type")
    if kind and not _TYPES[kind](value):
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if kind in ("number", "integer"):
        if "minimum" in schema and value < schema["minimum"]:
            return False
        if "maximum" in schema and value > schema["maximum"]:
            return False
    if kind == "string":
        if len(value) > schema.get("maxLength", len(value)):
            return False
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return False
    if kind == "array":
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            return False
        return all(conforms(item, schema.get("items", {})) for item in value)
    if kind == "object":
        if any(key not in value for key in schema.get("required", ())):
            return False
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                if not conforms(item, properties[key]):
                    return False
            elif extra is False or (isinstance(extra, dict) and not conforms(item, extra)):
                return False
    return True


def _expected(schema: dict) -> str:
    """What a person is asked to give, from the schema."""
    if "oneOf" in schema:
        return " or ".join(_expected(branch) for branch in schema["oneOf"])
    kind = schema.get("type")
    if "enum" in schema:
        return ", ".join(str(v) for v in schema["enum"])
    if kind in ("number", "integer"):
        word = str(_("a whole number")) if kind == "integer" else str(_("a number"))
        if "minimum" in schema and "maximum" in schema:
            return str(_("%(what)s from %(low)s to %(high)s")) % {"what": word, "low": schema["minimum"],
                                                                  "high": schema["maximum"]}
        if "minimum" in schema:
            return str(_("%(what)s of at least %(low)s")) % {"what": word, "low": schema["minimum"]}
        return word
    if kind == "string" and schema.get("pattern", "").startswith("^("):
        return schema["pattern"][2:-2].replace("|", ", ")
    if kind == "string" and "maxLength" in schema:
        return str(_("a string of at most %(n)d characters")) % {"n": schema["maxLength"]}
    words = {"boolean": _("true or false"), "string": _("a string"), "array": _("a list"),
             "object": _("an object")}
    if kind == "object" and schema.get("required"):
        return str(_("an object with %(keys)s")) % {"keys": ", ".join(schema["required"])}
    return str(words.get(kind, _("a valid value")))


def read_parameters(body: dict, errors: dict, unsupported: dict, *, offers_tools: bool) -> tuple[dict, bool]:
    """OpenAI's parameters of `body` → (model-call options, stream). Bad values are added to `errors`,
    values Gavel cannot honour to `unsupported`, each under the parameter's name; a null value counts
    as absent; undeclared keys are ignored."""
    options: dict = {}
    passed: dict = {}
    limits = []
    stream = False
    for parameter in PARAMETERS:
        value = body.get(parameter.name)
        if value is None:
            continue
        if not conforms(value, parameter.schema):
            errors[parameter.name] = [str(_("Give %(what)s.")) % {"what": _expected(parameter.schema)}]
            continue
        if parameter.accepts is not None and not conforms(value, parameter.accepts):
            unsupported[parameter.name] = [str(parameter.refusal)]
            continue
        if parameter.name in OWN_ARGUMENTS:
            if parameter.use == PASS or offers_tools:
                options[parameter.name] = value
        elif parameter.use == PASS or (parameter.use == WITH_TOOLS and offers_tools):
            passed[parameter.name] = value
        elif parameter.use == TEMPERATURE:
            options["client_temperature"] = float(value)
        elif parameter.use == MAX_TOKENS:
            limits.append(value)
        elif parameter.name == "stream":
            stream = value
    if limits:
        options["client_max_tokens"] = min(limits)
    if options.get("user") == "":
        del options["user"]
    if passed:
        options["client_parameters"] = passed
    return options, stream


def request_schema(messages: dict, tools: dict, extension: dict, model: dict) -> dict:
    """The OpenAPI schema of the request body: these rows plus the members POST completions reads."""
    properties = {"model": model, "messages": messages, "tools": {**tools, "nullable": True}}
    for parameter in PARAMETERS:
        schema = {**parameter.published, "nullable": True}
        if parameter.description:
            schema["description"] = parameter.description
        properties[parameter.name] = schema
    # Legacy function calling: read by governance/protocols/openai_chat/functions.py before this table.
    # Two branches, as functions.as_tools reads them: without legacy functions (`functions` and `function_call`
    # absent or null), or with them (a non-empty `functions`, no `tools`; OpenAI refuses the same, issue 41).
    properties["gavel"] = {**extension, "nullable": True}
    only_null = {"nullable": True, "not": {}}  # null or absent (an enum of null would be named by the enum hook)
    legacy = {
        "functions": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["name"], "additionalProperties": True,
            "properties": {"name": {"type": "string", "minLength": 1}}},
            "description": "Legacy: offered as function tools; the answer's call comes back as `function_call`."},
        "function_call": {"nullable": True, "oneOf": [
            {"type": "string", "enum": ["none", "auto"]},
            {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "minLength": 1}}}],
            "description": "Legacy: sent as `tool_choice`; needs `functions`."},
        "tools": {**only_null, "description": "Not with the legacy `functions`."},
    }
    plain = {"functions": {**only_null, "description": "Legacy function calling: see the other branch."},
             "function_call": {**only_null, "description": "Legacy: needs `functions`."}}
    return {"anyOf": [
        {"type": "object", "required": ["model", "messages"], "properties": {**properties, **plain},
         "additionalProperties": True},
        {"type": "object", "required": ["model", "messages", "functions"], "properties": {**properties, **legacy},
         "additionalProperties": True},
    ]}
