"""The gateway's request: OpenAI's parameters read by the one table of parameters.py, the rest handed
to the completions serializer itself, so messages, tools and call facts are read exactly as POST
/api/v1/completions reads them. Also the response shapes, for the OpenAPI schema."""
from django.utils.translation import gettext as _
from rest_framework import serializers

from governance.api.errors import field_messages
from governance.api.serializers import (
    CompletionInfoSerializer, CompletionRequestSerializer, HintSerializer, ScreeningResponseSerializer,
)
from governance.errors import BadInput
from governance.protocols.openai_chat import parameters
from governance.protocols.openai_chat.errors import client_name

# The `gavel` extension object: call facts OpenAI has no parameter for.
EXTENSION_KEYS = ("also", "kind", "read_tools", "site", "language")


def parse_chat_request(body) -> tuple[dict, dict, bool]:
    """The body of POST chat/completions → (completions request data, model call options, stream).

    OpenAI's parameters are read by the one table of governance/protocols/openai_chat/parameters.py; messages, tools
    and the `gavel` facts by the completions serializer itself. Raises BadInput naming every bad field
    in the client's own names (`model`, `gavel.also`, …); a value Gavel cannot honour (`n` 2) is
    `unsupported_parameter`.
    """
    if not isinstance(body, dict):
        raise BadInput(_("The body must be a JSON object."), code="malformed")
    errors: dict = {}
    unsupported: dict = {}
    options, stream = parameters.read_parameters(body, errors, unsupported, offers_tools=bool(body.get("tools")))
    extension = body.get("gavel")
    if extension is None:
        extension = {}
    elif not isinstance(extension, dict):
        errors["gavel"] = [_("Give an object.")]
        extension = {}
    for key in sorted(set(extension) - set(EXTENSION_KEYS)):
        errors[f"gavel.{key}"] = [_("Unknown field.")]
    data = {key: extension[key] for key in EXTENSION_KEYS if key in extension}
    if "model" in body:
        data["configuration"] = body["model"]
    for key in ("messages", "tools"):
        if body.get(key) is not None:
            data[key] = body[key]
    serializer = CompletionRequestSerializer(data=data)
    if not serializer.is_valid():
        for name, messages in field_messages(serializer.errors).items():
            errors[client_name(name)] = messages
    if errors:
        raise BadInput(_("The request has invalid fields."), fields={**errors, **unsupported})
    if unsupported:
        raise BadInput(_("The request asks for what Gavel does not support."), code="unsupported_parameter",
                       fields=unsupported)
    return serializer.validated_data, options, stream


# --- OpenAPI documentation of the gateway (drf-spectacular) ---
class OpenAIChatRequestSerializer(serializers.Serializer):
    """The request body in the OpenAPI schema: built from governance/protocols/openai_chat/parameters.py by
    governance/api/schema.py (OpenAIChatRequestScheme); never used to read a request."""


class OpenAIGavelSerializer(ScreeningResponseSerializer):
    """The governance result: the response of POST /api/v1/completions without text and tool calls."""

    text = None
    tool_calls = None
    hints = HintSerializer(many=True)
    completion = CompletionInfoSerializer()


class OpenAIFunctionSerializer(serializers.Serializer):
    name = serializers.CharField()
    arguments = serializers.CharField(help_text="JSON text.")


class OpenAIToolCallSerializer(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    function = OpenAIFunctionSerializer()


class OpenAIMessageSerializer(serializers.Serializer):
    role = serializers.CharField()
    content = serializers.CharField(allow_null=True, help_text="null when blocked.")
    refusal = serializers.CharField(allow_null=True, help_text="The block message when blocked, else null.")
    tool_calls = OpenAIToolCallSerializer(many=True, required=False)


class OpenAIChoiceSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    message = OpenAIMessageSerializer()
    finish_reason = serializers.ChoiceField(choices=["stop", "tool_calls", "content_filter"])


class OpenAIUsageSerializer(serializers.Serializer):
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()


class OpenAIChatCompletionSerializer(serializers.Serializer):
    id = serializers.CharField()
    object = serializers.CharField(help_text="`chat.completion`")
    created = serializers.IntegerField()
    model = serializers.CharField(help_text="The configuration identifier asked for.")
    choices = OpenAIChoiceSerializer(many=True)
    usage = OpenAIUsageSerializer()
    gavel = OpenAIGavelSerializer()


class OpenAIModelSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="A configuration identifier.")
    object = serializers.CharField(help_text="`model`")
    created = serializers.IntegerField()
    owned_by = serializers.CharField()


class OpenAIModelListSerializer(serializers.Serializer):
    object = serializers.CharField(help_text="`list`")
    data = OpenAIModelSerializer(many=True)


class OpenAIErrorDetailSerializer(serializers.Serializer):
    message = serializers.CharField()
    type = serializers.CharField(help_text="OpenAI's error category.")
    param = serializers.CharField(allow_null=True)
    code = serializers.CharField(help_text="Gavel's error code, as in the REST API's error body.")


class OpenAIErrorSerializer(serializers.Serializer):
    error = OpenAIErrorDetailSerializer()
