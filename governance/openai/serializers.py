"""The gateway's request: OpenAI's parameters checked here, the rest handed to the completions
serializer itself, so messages, tools and call facts are read exactly as POST /api/v1/completions
reads them. Also the response shapes, for the OpenAPI schema."""
from django.utils.translation import gettext as _
from rest_framework import serializers

from governance.api.errors import field_messages
from governance.api.serializers import (
    CompletionInfoSerializer, CompletionRequestSerializer, HintSerializer, MessageSerializer,
    ScreeningResponseSerializer,
)
from governance.errors import BadInput
from governance.openai.errors import client_name

# The `gavel` extension object: call facts OpenAI has no parameter for.
EXTENSION_KEYS = ("also", "kind", "read_tools", "site", "language")
TOOL_CHOICES = ("none", "auto", "required")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _openai_options(body: dict, errors: dict) -> tuple[dict, bool]:
    """OpenAI's own parameters, as options of the model call (SPEC §11.5); other keys are accepted
    and not passed on. The client's temperature and max_tokens are marked as the client's: the
    configuration's own values replace or cap them (completions.sampling)."""
    options = {}
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        errors["stream"] = [_("Give true or false.")]
    temperature = body.get("temperature")
    if temperature is not None:
        if not _number(temperature) or not 0 <= temperature <= 2:
            errors["temperature"] = [_("Give a number from 0 to 2.")]
        else:
            options["client_temperature"] = float(temperature)
    limits = []
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            errors[name] = [_("Give a whole number of at least 1.")]
        else:
            limits.append(value)
    if limits:
        options["client_max_tokens"] = min(limits)
    response_format = body.get("response_format")
    if response_format is not None:
        if not isinstance(response_format, dict) or not isinstance(response_format.get("type"), str):
            errors["response_format"] = [_("Give an object with a type.")]
        else:
            options["response_format"] = response_format
    tool_choice = body.get("tool_choice")
    if tool_choice is not None:
        named = (isinstance(tool_choice, dict) and tool_choice.get("type") == "function"
                 and isinstance(tool_choice.get("function"), dict)
                 and isinstance(tool_choice["function"].get("name"), str))
        if tool_choice not in TOOL_CHOICES and not named:
            errors["tool_choice"] = [_("Give none, auto, required or a named function.")]
        else:
            options["tool_choice"] = tool_choice
    user = body.get("user")
    if user is not None:
        if not isinstance(user, str) or len(user) > 256:
            errors["user"] = [_("Give a string of at most 256 characters.")]
        elif user:
            options["user"] = user
    return options, bool(stream)


def parse_chat_request(body) -> tuple[dict, dict, bool]:
    """The body of POST chat/completions → (completions request data, model call options, stream).

    Raises BadInput naming every bad field in the client's own names (`model`, `gavel.also`, …).
    """
    if not isinstance(body, dict):
        raise BadInput(_("The body must be a JSON object."), code="malformed")
    errors: dict = {}
    options, stream = _openai_options(body, errors)
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
        raise BadInput(_("The request has invalid fields."), fields=errors)
    return serializer.validated_data, options, stream


# --- OpenAPI documentation of the gateway (drf-spectacular) ---
class OpenAIExtensionSerializer(serializers.Serializer):
    also = serializers.ListField(child=serializers.SlugField(), required=False,
                                 help_text="Further configurations whose policies apply.")
    kind = serializers.CharField(required=False, help_text="Call kind, default `completion`.")
    read_tools = serializers.ListField(child=serializers.CharField(), required=False,
                                       help_text="Tools that only read: their arguments are not screened.")
    site = serializers.SlugField(required=False)
    language = serializers.CharField(required=False)


class OpenAIChatRequestSerializer(serializers.Serializer):
    model = serializers.SlugField(help_text="A configuration identifier granted to the token.")
    messages = MessageSerializer(many=True)
    tools = serializers.ListField(child=serializers.DictField(), required=False)
    tool_choice = serializers.JSONField(required=False)
    stream = serializers.BooleanField(required=False, default=False)
    temperature = serializers.FloatField(required=False, allow_null=True,
                                         help_text="Replaced by the configuration's temperature where it sets one.")
    max_tokens = serializers.IntegerField(required=False, allow_null=True,
                                          help_text="Capped by the configuration's max_tokens.")
    max_completion_tokens = serializers.IntegerField(required=False, allow_null=True)
    response_format = serializers.DictField(required=False, allow_null=True)
    user = serializers.CharField(required=False)
    gavel = OpenAIExtensionSerializer(required=False, help_text="Gavel's call facts (optional).")


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
