"""The Messages API's shapes in the OpenAPI schema (drf-spectacular); never used to read a request
(governance/protocols/anthropic/request.py reads it)."""
from rest_framework import serializers

from governance.protocols.openai_chat.serializers import OpenAIGavelSerializer

BLOCK = {"type": "object", "required": ["type"], "additionalProperties": True,
         "properties": {"type": {"type": "string"}}}
REQUEST_SCHEMA = {
    "type": "object",
    "required": ["model", "messages", "max_tokens"],
    "additionalProperties": True,
    "properties": {
        "model": {"type": "string", "description": "A configuration identifier granted to the token."},
        "system": {"oneOf": [{"type": "string"}, {"type": "array", "items": BLOCK}],
                   "description": "A string or text blocks."},
        "messages": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["role", "content"], "additionalProperties": True,
            "properties": {"role": {"type": "string", "enum": ["user", "assistant"]},
                           "content": {"oneOf": [{"type": "string"}, {"type": "array", "items": BLOCK}],
                                       "description": "text, image, document, tool_use, tool_result; "
                                                      "thinking blocks passed back are left out."}}}},
        "max_tokens": {"type": "integer", "minimum": 1, "description": "Capped by the configuration's max_tokens."},
        "temperature": {"type": "number", "minimum": 0, "maximum": 1,
                        "description": "Replaced by the configuration's temperature where it sets one."},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "top_k": {"type": "integer", "minimum": 0,
                  "description": "Passed on; refused (`unsupported_parameter`) where the provider's route does "
                                 "not take it."},
        "stop_sequences": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "stream": {"type": "boolean"},
        "metadata": {"type": "object", "properties": {"user_id": {"type": "string"}}},
        "thinking": {"type": "object", "required": ["type"], "properties": {
            "type": {"type": "string", "enum": ["enabled", "adaptive", "disabled"]},
            "budget_tokens": {"type": "integer"}},
            "description": "Passed on; refused (`unsupported_parameter`) where the provider's route does not "
                           "take it."},
        "tools": {"type": "array", "items": {
            "type": "object", "required": ["name", "input_schema"], "additionalProperties": True,
            "properties": {"name": {"type": "string", "minLength": 1}, "description": {"type": "string"},
                           "input_schema": {"type": "object", "additionalProperties": True}}},
            "description": "Client tools only: a built-in (server) tool is refused, naming it."},
        "tool_choice": {"type": "object", "required": ["type"], "properties": {
            "type": {"type": "string", "enum": ["auto", "any", "tool", "none"]}, "name": {"type": "string"},
            "disable_parallel_tool_use": {"type": "boolean"}}},
        "gavel": {"type": "object", "description": "Call facts: also, kind, read_tools, site, language "
                                                   "(as in POST /api/v1/completions)."},
    },
}


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
