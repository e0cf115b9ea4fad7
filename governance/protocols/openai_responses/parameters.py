"""The Responses API's parameters, declared once (SPEC §11.6): what each accepted value becomes in the
completions run, and what Gavel refuses with 400 `unsupported_parameter` naming it.

`input`, `instructions`, `tools`, `tool_choice` and `text` are read by items.py; `gavel` as in §11.5.
Unlike Chat Completions, a top-level member no row declares is refused too: the Responses API keeps
adding parameters that change the answer, and none may be silently dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from governance.protocols.openai_chat.parameters import conforms

PASS = "pass"                 # to the provider through litellm, checked against the route (client_parameters)
OWN = "own"                   # an argument of the model call of its own (user)
TEMPERATURE = "temperature"   # replaced by the configuration's temperature where it sets one
MAX_TOKENS = "max_tokens"     # capped by the configuration's max_tokens
WITH_TOOLS = "with_tools"     # to the provider, only when the request offers tools
ACCEPTED = "accepted"         # changes nothing Gavel sends or returns but the echo (metadata, store, ...)
DROPPED = "dropped"           # metadata that never reaches the model as text: dropped, a `checks` entry says so
READ = "read"                 # read by the gateway or by items.py

REFUSE_STORED = _("Gavel keeps no responses: send the whole conversation in input instead.")  # items: kept.py


@dataclass(frozen=True)
class Parameter:
    name: str
    schema: dict
    use: str
    description: str = ""
    accepts: dict | None = None  # the values Gavel honours, when fewer than the schema allows
    refusal: str = ""
    reason: str = ""  # DROPPED: the reason code of its `checks` entry

    @property
    def published(self) -> dict:
        return self.accepts if self.accepts is not None else self.schema


def _number(low: float, high: float) -> dict:
    return {"type": "number", "minimum": low, "maximum": high}


_ANY: dict = {}
_NEVER = {"not": {}}  # no value but null (absent) is honoured

PARAMETERS: tuple[Parameter, ...] = (
    Parameter("model", {"type": "string"}, READ, "A configuration identifier granted to the token."),
    Parameter("input", {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "object"}}]}, READ,
              "A string, or a list of items: messages, function_call, function_call_output, reasoning."),
    Parameter("instructions", {"type": "string"}, READ, "Sent as a system message before the input."),
    Parameter("tools", {"type": "array", "items": {"type": "object"}}, READ, "Function tools only."),
    Parameter("tool_choice", {"oneOf": [{"type": "string"}, {"type": "object"}]}, READ,
              "auto, none, required or a named function; sent with tools only."),
    Parameter("text", {"type": "object"}, READ, "`format`: text, json_object or json_schema."),
    Parameter("gavel", {"type": "object"}, READ, "Gavel's call facts OpenAI has no parameter for (optional)."),
    Parameter("stream", {"type": "boolean"}, READ, "Typed events (`text/event-stream`), held or live."),
    Parameter("stream_options", {"type": "object"}, ACCEPTED, "Accepted; nothing in it changes the answer."),
    Parameter("temperature", _number(0, 2), TEMPERATURE,
              "Replaced by the configuration's temperature where it sets one."),
    Parameter("top_p", _number(0, 1), PASS),
    Parameter("max_output_tokens", {"type": "integer", "minimum": 1}, MAX_TOKENS,
              "Capped by the configuration's max_tokens."),
    Parameter("parallel_tool_calls", {"type": "boolean"}, WITH_TOOLS, "Sent with tools only."),
    # A summary asked for (Codex always asks, "auto") is dropped with a `checks` entry: none is returned.
    Parameter("reasoning", {"type": "object", "properties": {
        "effort": {"type": "string"}, "summary": _ANY, "generate_summary": _ANY}},
        READ, "`effort` reaches the provider as reasoning_effort; summaries are not returned (a summary asked "
              "for is dropped, said in `checks`)."),
    Parameter("metadata", {"type": "object", "additionalProperties": {"type": "string"}}, ACCEPTED,
              "Echoed on the response."),
    Parameter("store", {"type": "boolean"}, ACCEPTED, "Accepted; Gavel keeps no responses (`store` is false)."),
    Parameter("user", {"type": "string", "maxLength": 256}, OWN),
    Parameter("safety_identifier", {"type": "string", "maxLength": 256}, DROPPED,
              "Dropped (said in `checks`): not sent to the provider.", reason="not_sent_to_model"),
    Parameter("prompt_cache_key", {"type": "string"}, DROPPED,
              "Dropped (said in `checks`): not sent to the provider.", reason="not_sent_to_model"),
    Parameter("client_metadata", {"type": "object"}, DROPPED,
              "Dropped (said in `checks`): the client's own facts (Codex sends them), never the model's text.",
              reason="not_sent_to_model"),
    Parameter("service_tier", {"type": "string"}, PASS),
    Parameter("include", {"type": "array", "items": {"type": "string"}}, DROPPED,
              "Only reasoning.encrypted_content, which Gavel has none of to include (said in `checks`).",
              reason="no_reasoning_returned",
              accepts={"type": "array", "items": {"type": "string", "pattern": "^reasoning\\.encrypted_content$"}},
              refusal=_("Gavel returns the screened answer only: no log probabilities, search results or "
                        "tool outputs to include.")),
    Parameter("truncation", {"type": "string", "enum": ["auto", "disabled"]}, ACCEPTED, "Only disabled.",
              accepts={"type": "string", "enum": ["disabled"]},
              refusal=_("Gavel sends the conversation as given: give truncation disabled or leave it out.")),
    Parameter("top_logprobs", {"type": "integer", "minimum": 0, "maximum": 20}, ACCEPTED, "Only 0.",
              accepts={"type": "integer", "minimum": 0, "maximum": 0},
              refusal=_("Gavel does not return log probabilities: they would show the tokens of text it withheld "
                        "or masked.")),
    Parameter("background", {"type": "boolean"}, ACCEPTED, "Only false.",
              accepts={"type": "boolean", "enum": [False]},
              refusal=_("Gavel answers while the request waits: for work in the background use POST /api/v1/tasks.")),
    Parameter("previous_response_id", {"type": "string"}, ACCEPTED, "Not supported: send the whole conversation.",
              accepts=_NEVER, refusal=REFUSE_STORED),
    Parameter("conversation", _ANY, ACCEPTED, "Not supported: send the whole conversation.",
              accepts=_NEVER, refusal=REFUSE_STORED),
    Parameter("prompt", _ANY, ACCEPTED, "Not supported: send instructions and input.",
              accepts=_NEVER, refusal=_("Gavel keeps no prompt templates: send instructions and input.")),
    Parameter("max_tool_calls", {"type": "integer", "minimum": 1}, ACCEPTED, "Not supported.",
              accepts=_NEVER, refusal=_("Gavel offers function tools only, and cannot cap built-in tool calls.")),
)
BY_NAME = {parameter.name: parameter for parameter in PARAMETERS}
# The provider's names of what the client named inside an object: a route's refusal names the client's.
CLIENT_NAMES = {"reasoning_effort": "reasoning.effort", "verbosity": "text.verbosity"}


def read_parameters(body: dict, errors: dict, unsupported: dict, *, offers_tools: bool, request=None) -> dict:
    """The model-call options of `body`'s parameters (not the READ ones); bad values are added to
    `errors`, values and members Gavel cannot honour to `unsupported`, under their names; what is
    dropped to `request.dropped` (items.RequestNotes: the answer's `checks` say it). A null value
    counts as absent."""
    options: dict = {}
    passed: dict = {}
    for name, value in body.items():
        parameter = BY_NAME.get(name)
        if parameter is None:
            unsupported[name] = [str(_("Gavel does not support this parameter of the Responses API."))]
            continue
        if value is None:
            continue
        if not conforms(value, parameter.schema):
            errors[name] = [str(_("Give a valid value."))]
            continue
        if parameter.accepts is not None and not conforms(value, parameter.accepts):
            unsupported[name] = [str(parameter.refusal)]
            continue
        if parameter.use == PASS or (parameter.use == WITH_TOOLS and offers_tools):
            passed[name] = value
        elif parameter.use == OWN and value:
            options[name] = value
        elif parameter.use == TEMPERATURE:
            options["client_temperature"] = float(value)
        elif parameter.use == MAX_TOKENS:
            options["client_max_tokens"] = value
        elif parameter.use == DROPPED and request is not None and value not in ([], {}, ""):
            request.drop(name, parameter.reason)
    reasoning = body.get("reasoning") or {}
    if isinstance(reasoning, dict) and "reasoning" not in errors:
        for key in ("summary", "generate_summary"):
            if reasoning.get(key) is not None and request is not None:
                # Nothing is returned for it: a model's reasoning is not screened text, so none leaves Gavel.
                request.drop(f"reasoning.{key}", "no_reasoning_summaries")
        if reasoning.get("effort") is not None:
            passed["reasoning_effort"] = reasoning["effort"]
    text = body.get("text")
    if isinstance(text, dict) and text.get("verbosity") is not None:
        passed["verbosity"] = text["verbosity"]
    if passed:
        options["client_parameters"] = passed
    return options
