"""The gateway's request in the OpenAPI document (drf-spectacular): documented from the one table of
parameters that also checks them. Registered when the gateway's views are imported."""
from drf_spectacular.extensions import OpenApiSerializerExtension

from governance.api.serializers import CompletionRequestSerializer
from governance.protocols.openai_chat.parameters import request_schema
from governance.protocols.openai_chat.serializers import EXTENSION_KEYS


class OpenAIChatRequestScheme(OpenApiSerializerExtension):
    """POST /openai/v1/chat/completions as governance/protocols/openai_chat/serializers.parse_chat_request reads it: the
    messages, tools and `gavel` facts with the very fields of POST completions; OpenAI's parameters from
    the one table that also checks them (governance/protocols/openai_chat/parameters.py); any other key ignored."""

    target_class = "governance.protocols.openai_chat.serializers.OpenAIChatRequestSerializer"

    def map_serializer(self, auto_schema, direction):
        if direction != "request":
            return auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        fields = CompletionRequestSerializer().fields

        def field(name):
            schema = auto_schema._map_serializer_field(fields[name], direction)
            auto_schema._insert_field_validators(fields[name], schema)  # maxLength, pattern, …
            return schema

        return request_schema(
            messages={**field("messages"), "minItems": 1},
            tools=field("tools"),
            extension={"type": "object", "additionalProperties": False,
                       "properties": {key: field(key) for key in EXTENSION_KEYS},
                       "description": "Gavel's call facts (optional)."},
            model={**field("configuration"), "description": "A configuration identifier granted to the token."},
        )
