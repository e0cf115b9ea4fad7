"""The Responses API request read into a completions request (SPEC §11.6), and the response shapes
for the OpenAPI schema.

The conversation and tools are translated by items.py into Chat Completions messages and tools, then
read by the completions serializer itself, exactly as POST /api/v1/completions reads them; the
parameters by the one table of parameters.py. Every bad field is named as the client named it.
"""
import re

from django.utils.translation import gettext as _
from rest_framework import serializers

from governance.api.errors import field_messages
from governance.api.serializers import CompletionRequestSerializer
from governance.errors import BadInput
from governance.protocols.openai_chat.errors import client_name
from governance.protocols.openai_chat.serializers import EXTENSION_KEYS, OpenAIGavelSerializer
from governance.protocols.openai_responses import items, parameters

# The request members a response echoes (translate.DEFAULTS).
ECHOED = ("instructions", "max_output_tokens", "metadata", "parallel_tool_calls", "reasoning", "temperature",
          "text", "tool_choice", "tools", "top_p", "truncation", "user")
_MESSAGE_PATH = re.compile(r"^messages\[(\d+)\](.*)$")


def _client_path(name: str, origins: list[str]) -> str:
    """`messages[2].content` of the translated request → the item it came from (`input[1]`)."""
    match = _MESSAGE_PATH.match(name)
    if match and int(match.group(1)) < len(origins):
        return origins[int(match.group(1))]
    return client_name(name)


def parse_responses_request(body, references: dict | None = None) -> tuple[dict, dict, bool, dict, items.RequestNotes]:
    """The body of POST responses → (completions request data, model-call options, stream, echo, notes:
    what was dropped and the namespaced functions' names, items.RequestNotes).

    `references` are the items Gavel kept that the input refers to (kept.look_up). Raises BadInput
    naming every bad field (`input[2].type`, `tools[0].type`, `text.format`); a
    parameter or value Gavel cannot honour (`previous_response_id`, a built-in tool) is
    `unsupported_parameter`, naming it.
    """
    if not isinstance(body, dict):
        raise BadInput(_("The body must be a JSON object."), code="malformed")
    errors: dict = {}
    unsupported: dict = {}
    notes = items.RequestNotes()
    tools = items.tools_of(body.get("tools"), unsupported, notes)
    options = parameters.read_parameters(body, errors, unsupported, offers_tools=bool(tools), request=notes)
    messages, origins = items.messages_of(body, errors, references)
    for name in [name for name in errors if name.endswith(".type") and name.startswith("input[")]:
        unsupported[name] = errors.pop(name)  # an item Gavel cannot screen: refused, not malformed
    if body.get("text") is not None:
        response_format = items.response_format_of(body["text"], errors)
        if response_format:
            options["response_format"] = response_format
    if body.get("tool_choice") is not None:
        choice = items.tool_choice_of(body["tool_choice"], errors)  # checked with or without tools
        if tools:
            options["tool_choice"] = choice
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
    data["messages"] = messages
    if tools:
        data["tools"] = tools
    serializer = CompletionRequestSerializer(data=data)
    if not serializer.is_valid():
        input_named = any(name.startswith("input") for name in (*errors, *unsupported))
        for name, messages_ in field_messages(serializer.errors).items():
            if name.partition(".")[0] == "messages" and not _MESSAGE_PATH.match(name):
                if input_named:
                    continue  # no messages because every item was refused: that refusal says it
                name = "input"
            errors.setdefault(_client_path(name, origins), messages_)
    if errors:
        raise BadInput(_("The request has invalid fields."), fields={**errors, **unsupported})
    if unsupported:
        raise BadInput(_("The request asks for what Gavel does not support."), code="unsupported_parameter",
                       fields=unsupported)
    echo = {key: body.get(key) for key in ECHOED if body.get(key) is not None}
    return serializer.validated_data, options, bool(body.get("stream")), echo, notes


# --- OpenAPI documentation (drf-spectacular) ---
class ResponsesRequestSerializer(serializers.Serializer):
    """The request body in the OpenAPI schema: built from parameters.py by governance/api/schema.py
    (ResponsesRequestScheme); never used to read a request."""


class ResponsesContentSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["output_text", "refusal"])
    text = serializers.CharField(required=False, help_text="The answer's text (`output_text`).")
    refusal = serializers.CharField(required=False, help_text="The block message (`refusal`).")
    annotations = serializers.ListField(child=serializers.DictField(), required=False)


class ResponsesOutputItemSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["message", "function_call"])
    id = serializers.CharField()
    status = serializers.CharField()
    role = serializers.CharField(required=False, help_text="`assistant` (message).")
    content = ResponsesContentSerializer(many=True, required=False, help_text="The message's parts.")
    call_id = serializers.CharField(required=False, help_text="The id a function_call_output answers.")
    name = serializers.CharField(required=False, help_text="The function's name (function_call).")
    namespace = serializers.CharField(required=False, help_text="The namespace the function was declared in, "
                                                                "when it was (function_call).")
    arguments = serializers.CharField(required=False, help_text="JSON text (function_call).")


class ResponsesIncompleteSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="`content_filter` when Gavel blocked the answer.")


class ResponsesUsageSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField()
    input_tokens_details = serializers.DictField()
    output_tokens = serializers.IntegerField()
    output_tokens_details = serializers.DictField()
    total_tokens = serializers.IntegerField()


class ResponsesResponseSerializer(serializers.Serializer):
    id = serializers.CharField()
    object = serializers.CharField(help_text="`response`")
    created_at = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["completed", "incomplete"])
    incomplete_details = ResponsesIncompleteSerializer(allow_null=True)
    model = serializers.CharField(help_text="The configuration identifier asked for.")
    output = ResponsesOutputItemSerializer(many=True)
    usage = ResponsesUsageSerializer()
    store = serializers.BooleanField(help_text="Always false: Gavel keeps no responses.")
    gavel = OpenAIGavelSerializer()
