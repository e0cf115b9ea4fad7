"""The Messages API's shapes in the OpenAPI schema (drf-spectacular); never used to read a request
(governance/protocols/anthropic/request.py reads it)."""
from drf_spectacular.extensions import OpenApiSerializerExtension
from rest_framework import serializers

from governance.api.serializers import CompletionRequestSerializer
from governance.protocols.openai_chat.serializers import EXTENSION_KEYS, OpenAIGavelSerializer

NO_NUL = {"type": "string", "pattern": "^[^\\u0000]*$"}
NAME = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": "^[^\\u0000]*$"}


def _block(kind: str, required=(), **properties) -> dict:
    """One content block: its `type` as a pattern (drf-spectacular's enum hook would merge one-value enums
    of every branch into one component), extra keys (cache_control, citations) allowed."""
    return {"type": "object", "required": ["type", *required], "additionalProperties": True,
            "properties": {"type": {"type": "string", "pattern": f"^{kind}$"}, **properties}}


def _source(kind: str, **properties) -> dict:
    return {"type": "object", "required": ["type", *properties], "additionalProperties": True,
            "properties": {"type": {"type": "string", "pattern": f"^{kind}$"},
                           **{name: {"type": "string"} for name in properties}}}


TEXT = _block("text", ["text"], text=NO_NUL)
BASE64 = _source("base64", media_type=True, data=True)
USER_BLOCK = {"oneOf": [
    TEXT,
    _block("image", ["source"], source={"oneOf": [BASE64, _source("url", url=True)]}),
    _block("document", ["source"], source={"oneOf": [BASE64, {**_source("text", data=True), "properties": {
        "type": {"type": "string", "pattern": "^text$"}, "data": NO_NUL}}]}),
    _block("tool_result", ["tool_use_id"], tool_use_id=NAME, is_error={"type": "boolean", "nullable": True},
           content={"nullable": True, "oneOf": [NO_NUL, {"type": "array", "items": {"oneOf": [
               TEXT, _block("tool_reference", ["tool_name"], tool_name=NAME)]}}]}),
]}
TOOL_REFERENCE = {"type": "object", "required": ["type", "name"], "additionalProperties": True, "properties": {
    "type": {"type": "string", "pattern": "^tool_reference$"}, "name": NAME}}
SYSTEM_BLOCK = {"oneOf": [
    TEXT,
    _block("tool_addition", ["tool"], tool={"oneOf": [TOOL_REFERENCE, {
        "type": "object", "required": ["type", "definition"], "additionalProperties": True, "properties": {
            "type": {"type": "string", "pattern": "^tool_definition$"},
            "definition": {"type": "object", "required": ["name", "input_schema"], "additionalProperties": True,
                           "properties": {"name": {"type": "string", "minLength": 1},
                                          "input_schema": {"type": "object"},
                                          "type": {"type": "string", "enum": ["custom"]}}}}}]}),
    _block("tool_removal", ["tool"], tool=TOOL_REFERENCE),
]}
ASSISTANT_BLOCK = {"oneOf": [
    TEXT,
    _block("tool_use", ["id", "name"], id=NAME, name=NAME, input={"type": "object", "additionalProperties": True}),
    _block("thinking"),
    _block("redacted_thinking"),
]}


def _turn(role: str, block: dict, min_items: int) -> dict:
    return {"type": "object", "required": ["role", "content"], "additionalProperties": True, "properties": {
        "role": {"type": "string", "pattern": f"^{role}$"},
        "content": {"oneOf": [NO_NUL, {"type": "array", "items": block, "minItems": min_items}]}}}


def _optional(schema: dict, description: str = "") -> dict:
    return {**schema, "nullable": True, **({"description": description} if description else {})}


ROUTE = "Passed on; refused (`unsupported_parameter`) where the provider's route does not take it."
OPTIONAL = ("Passed on where the provider's route takes it (litellm sends the route's equivalent); else dropped, "
            "with a `checks` entry {check: request, result: dropped, field, reason: not_taken_by_route}.")


def request_schema(model: dict, extension: dict) -> dict:
    """The request body as governance/protocols/anthropic/request.py reads it: what it accepts, exactly."""
    return {
        "type": "object",
        "required": ["model", "messages", "max_tokens"],
        "additionalProperties": True,
        "description": "Members not listed are dropped, each with a `checks` entry {check: request, result: dropped, "
                       "field, reason: not_sent}; so is `cache_control` anywhere. POST messages/count_tokens takes the "
                       "same body without max_tokens and stream.",
        "properties": {
            "model": model,
            "system": _optional({"oneOf": [NO_NUL, {"type": "array", "items": TEXT}]}, "A string or text blocks."),
            "messages": {"type": "array", "minItems": 1, "items": {"oneOf": [
                _turn("user", USER_BLOCK, 1), _turn("assistant", ASSISTANT_BLOCK, 0), _turn("system", SYSTEM_BLOCK, 0)]},
                "description": "Thinking blocks passed back are left out; tool results become tool messages. A "
                               "`system` turn (not the first) is system text where it stands; its tool_addition / "
                               "tool_removal blocks change the tools offered from there on."},
            "max_tokens": {"type": "integer", "minimum": 1, "description": "Capped by the configuration's max_tokens."},
            "temperature": _optional({"type": "number", "minimum": 0, "maximum": 1},
                                     "Replaced by the configuration's temperature where it sets one."),
            "top_p": _optional({"type": "number", "minimum": 0, "maximum": 1}),
            "top_k": _optional({"type": "integer", "minimum": 0}, ROUTE),
            "stop_sequences": _optional({"type": "array", "items": {"type": "string", "minLength": 1}}),
            "stream": _optional({"type": "boolean"}),
            "metadata": _optional({"type": "object", "additionalProperties": True,
                                   "properties": {"user_id": {"type": "string", "nullable": True}}}),
            "thinking": _optional({"type": "object", "required": ["type"], "additionalProperties": True, "properties": {
                "type": {"type": "string", "pattern": "^(enabled|adaptive|disabled)$"}}}, OPTIONAL),
            "output_config": _optional({"type": "object", "additionalProperties": True, "properties": {
                "effort": {"type": "string", "pattern": "^(low|medium|high|xhigh|max)$", "nullable": True},
                "format": {"nullable": True, "type": "object", "required": ["type", "schema"],
                           "additionalProperties": True, "properties": {
                               "type": {"type": "string", "pattern": "^json_schema$"},
                               "schema": {"type": "object", "additionalProperties": True}}}}},
                "`format` is the provider's response_format; `effort` its reasoning_effort (" + OPTIONAL + ")"),
            "tools": _optional({"type": "array", "items": {
                "type": "object", "required": ["name", "input_schema"], "additionalProperties": True,
                "properties": {"type": {"type": "string", "pattern": "^custom$", "nullable": True},
                               "name": {"type": "string", "minLength": 1}, "description": {"type": "string",
                                                                                        "nullable": True},
                               "input_schema": {"type": "object", "additionalProperties": True},
                               "defer_loading": {"type": "boolean", "nullable": True}}}},
                "Client tools only: a built-in (server) tool is refused, naming it. A tool with defer_loading is "
                "offered once a tool_reference or a tool_addition loads it."),
            "tool_choice": _optional({"oneOf": [
                {"type": "object", "required": ["type"], "additionalProperties": True,
                 "properties": {"type": {"type": "string", "enum": ["auto", "any", "none"]},
                                "disable_parallel_tool_use": {"type": "boolean", "nullable": True}}},
                {"type": "object", "required": ["type", "name"], "additionalProperties": True,
                 "properties": {"type": {"type": "string", "enum": ["tool"]},
                                "name": {"type": "string", "minLength": 1},
                                "disable_parallel_tool_use": {"type": "boolean", "nullable": True}}},
            ]}, "`tool` needs a `name`. Sent with `tools` only."),
            "mcp_servers": _optional({"type": "array", "maxItems": 0},
                                     "Refused unless empty: Gavel cannot screen what runs there."),
            "container": _optional({"type": "string", "maxLength": 0},
                                   "Refused unless empty: Gavel cannot screen what runs there."),
            "gavel": extension,
        },
    }


class AnthropicMessagesRequestSerializer(serializers.Serializer):
    """The request body in the OpenAPI schema (AnthropicMessagesRequestScheme); never used to read a request."""


class AnthropicMessagesRequestScheme(OpenApiSerializerExtension):
    """`model` and `gavel` with the very fields of POST completions, the rest from request_schema."""

    target_class = "governance.protocols.anthropic.serializers.AnthropicMessagesRequestSerializer"

    def map_serializer(self, auto_schema, direction):
        if direction != "request":
            return auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        fields = CompletionRequestSerializer().fields

        def field(name):
            schema = auto_schema._map_serializer_field(fields[name], direction)
            auto_schema._insert_field_validators(fields[name], schema)  # maxLength, pattern, …
            return schema

        extension = {"type": "object", "additionalProperties": False, "nullable": True,
                     "properties": {key: field(key) for key in EXTENSION_KEYS},
                     "description": "Gavel's call facts (optional), as on the Chat Completions gateway."}
        model = {**field("configuration"), "description": "A configuration identifier granted to the key."}
        return request_schema(model, extension)


class AnthropicCountTokensRequestSerializer(serializers.Serializer):
    """The count_tokens body in the OpenAPI schema: the messages body without max_tokens (and stream)."""


class AnthropicCountTokensRequestScheme(AnthropicMessagesRequestScheme):
    target_class = "governance.protocols.anthropic.serializers.AnthropicCountTokensRequestSerializer"

    def map_serializer(self, auto_schema, direction):
        schema = super().map_serializer(auto_schema, direction)
        if direction == "request":
            schema = {**schema, "required": ["model", "messages"],
                      "properties": {k: v for k, v in schema["properties"].items() if k not in ("max_tokens", "stream")}}
        return schema


class AnthropicContentBlockSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["text", "tool_use"])
    text = serializers.CharField(required=False, help_text="A text block's text (the block message when blocked).")
    id = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    input = serializers.DictField(required=False)


class AnthropicUsageSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()


class AnthropicMessageSerializer(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField(help_text="`message`")
    role = serializers.CharField(help_text="`assistant`")
    model = serializers.CharField(help_text="The configuration identifier asked for.")
    content = AnthropicContentBlockSerializer(many=True)
    stop_reason = serializers.ChoiceField(choices=["end_turn", "tool_use", "refusal"])
    stop_sequence = serializers.CharField(allow_null=True)
    usage = AnthropicUsageSerializer()
    gavel = OpenAIGavelSerializer()


class AnthropicTokenCountSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField(help_text="litellm's count for the configuration's model.")


class AnthropicModelSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="`model`")
    id = serializers.CharField(help_text="A configuration identifier.")
    display_name = serializers.CharField()
    created_at = serializers.CharField()


class AnthropicModelListSerializer(serializers.Serializer):
    data = AnthropicModelSerializer(many=True)
    has_more = serializers.BooleanField()
    first_id = serializers.CharField(allow_null=True)
    last_id = serializers.CharField(allow_null=True)


class AnthropicErrorDetailSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="Anthropic's error category.")
    message = serializers.CharField()
    code = serializers.CharField(help_text="Gavel's error code, as in the REST API's error body.")
    param = serializers.CharField(allow_null=True, help_text="The first field named, if any.")


class AnthropicErrorSerializer(serializers.Serializer):
    type = serializers.CharField(help_text="`error`")
    error = AnthropicErrorDetailSerializer()
