"""Input and output serializers of the REST API (SPEC §11.1). Unknown keys are errors."""
import json

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from governance.api.fields import Boolean, Choice, Pattern, Slug, StrictSerializer, String
from governance.screening.pipeline import KINDS
from governance.screening.text import MAX_JSON_DEPTH, nested_deeper_than

TOO_DEEP = format_lazy(_("The JSON is nested more than {} levels deep."), MAX_JSON_DEPTH)


def _refuse_deep(decoded) -> None:
    if nested_deeper_than(decoded):
        raise serializers.ValidationError(TOO_DEEP)


# A string that holds JSON: the format `json` says it in words, and a pattern a generator can draw from and a
# client can test says it for the JSON texts a regular expression can describe (a scalar, or an array or
# object of scalars, with JSON's white space). The server reads any JSON text (issue 41: no hook teaches
# the fuzzer the format, so the pattern is what the schema allows).
_JSON_WS = "[ \\t\\n\\r]*"
_JSON_STRING = '"(?:[^"\\\\\\u0000-\\u001f]|\\\\["\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*"'
_JSON_SCALAR = f"(?:{_JSON_STRING}|-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null)"
_JSON_ARRAY = f"\\[{_JSON_WS}(?:{_JSON_SCALAR}(?:{_JSON_WS},{_JSON_WS}{_JSON_SCALAR})*)?{_JSON_WS}\\]"
_JSON_MEMBER = f"{_JSON_STRING}{_JSON_WS}:{_JSON_WS}{_JSON_SCALAR}"
_JSON_OBJECT = f"\\{{{_JSON_WS}(?:{_JSON_MEMBER}(?:{_JSON_WS},{_JSON_WS}{_JSON_MEMBER})*)?{_JSON_WS}\\}}"
JSON_TEXT_PATTERN = f"^{_JSON_WS}(?:{_JSON_SCALAR}|{_JSON_ARRAY}|{_JSON_OBJECT}){_JSON_WS}$"
JSON_TEXT = {"type": "string", "format": "json", "pattern": JSON_TEXT_PATTERN}
TOOL_ARGUMENTS_SCHEMA = {
    "oneOf": [
        {"type": "object", "additionalProperties": True},
        {"type": "array", "items": {}},
        JSON_TEXT,
    ],
    "description": "An object or an array, or a string holding JSON.",
}


@extend_schema_field(TOOL_ARGUMENTS_SCHEMA)
class ToolArguments(serializers.JSONField):
    pass


class ToolCallSerializer(StrictSerializer):
    id = String(required=False, allow_blank=True, max_length=200)
    name = String(max_length=200)
    arguments = ToolArguments(help_text="An object, or a JSON string.")

    def validate_arguments(self, value):
        if isinstance(value, str):
            try:
                decoded = json.loads(value)
            except ValueError:
                raise serializers.ValidationError(_("A string of arguments must hold JSON."))
            except RecursionError:
                raise serializers.ValidationError(TOO_DEEP)
            _refuse_deep(decoded)
            return value
        if not isinstance(value, (dict, list)):
            raise serializers.ValidationError(_("Give an object or a JSON string."))
        _refuse_deep(value)
        return value


class ConfigurationRefs(serializers.Serializer):
    configuration = Slug(required=False, allow_null=True, max_length=100)
    also = serializers.ListField(child=Slug(max_length=100), required=False, default=list)
    site = Slug(required=False, allow_blank=True, default="", max_length=100)
    language = Pattern(
        r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$", required=False, allow_blank=True, default="", max_length=35
    )


class ScreeningRequestSerializer(StrictSerializer, ConfigurationRefs):
    text = String(allow_blank=True, trim_whitespace=False)
    format = Choice(choices=["text", "json"], default="text")
    tool_calls = ToolCallSerializer(many=True, required=False, default=list)
    kind = Choice(choices=KINDS, default="completion")
    offers_tools = Boolean(default=False)
    read_tools = serializers.ListField(child=String(max_length=200), required=False, default=list)
    served_by = Slug(required=False, allow_null=True, max_length=100,
                     help_text="The provider that answered, by name; a name no provider has is a 404 "
                               "(`unknown_provider`).")

    def validate(self, attrs):
        if attrs.get("format") == "json":
            try:
                decoded = json.loads(attrs["text"])
            except ValueError:
                raise serializers.ValidationError({"text": [_("format is json but the text is not JSON.")]})
            except RecursionError:
                raise serializers.ValidationError({"text": [TOO_DEEP]})
            if nested_deeper_than(decoded):
                raise serializers.ValidationError({"text": [TOO_DEEP]})
        return attrs


class FunctionCallSerializer(StrictSerializer):
    name = String(max_length=200)
    arguments = String(allow_blank=True, trim_whitespace=False)
    # The openai SDK's `.parse()` helper adds the decoded arguments: accepted, never sent on (SPEC §11.5).
    parsed_arguments = serializers.JSONField(required=False, allow_null=True,
                                             help_text="The SDK helpers' decoded arguments: ignored.")

    def validate(self, attrs):
        attrs.pop("parsed_arguments", None)
        return attrs


class AssistantToolCallSerializer(StrictSerializer):
    """A tool call an earlier assistant message proposed, in OpenAI's shape."""

    id = String(max_length=200)
    type = Choice(choices=["function"])
    function = FunctionCallSerializer()
    # The openai SDK's `.stream()` helper keeps each call's position in the stream: ignored.
    index = serializers.IntegerField(required=False, allow_null=True, help_text="The SDK helpers' position: ignored.")

    def validate(self, attrs):
        attrs.pop("index", None)
        return attrs


NO_NUL_STRING = {"type": "string", "pattern": "^[^\\u0000]*$"}
CONTENT_PART_SCHEMA = {
    "anyOf": [
        {"type": "object", "required": ["type", "text"], "additionalProperties": True,
         "properties": {"type": {"type": "string", "pattern": "^text$"}, "text": NO_NUL_STRING}},
        {"type": "object", "required": ["type"], "additionalProperties": True,
         "properties": {"type": {"type": "string", "not": {"pattern": "^text$"}}}},
    ],
    "description": "A text part ({type: text, text}) is text; other parts (image_url, input_audio, file, …) "
                   "are passed to the provider as sent.",
}
CONTENT_SCHEMA = {
    "oneOf": [NO_NUL_STRING, {"type": "array", "items": CONTENT_PART_SCHEMA}],
    "nullable": True,
    "description": "A string, a list of content parts, or null (an assistant turn with tool calls, a function "
                   "call or a refusal).",
}


@extend_schema_field(CONTENT_SCHEMA)
class Content(serializers.Field):
    """A message's content as the Chat Completions API takes it: a string, null, or a list of parts.
    A text part needs its text; any other part (an image, audio, a file) is passed on as sent."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, str):
            if "\x00" in data:
                raise serializers.ValidationError(_("Null characters are not allowed."))
            return data
        if not isinstance(data, list):
            raise serializers.ValidationError(_("Give a string or a list of content parts."))
        errors = []
        for part in data:
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                errors.append([_("Give a content part: an object with a type.")])
            elif part["type"] == "text" and not isinstance(part.get("text"), str):
                errors.append([_("A text part holds its text as a string.")])
            elif part["type"] == "text" and "\x00" in part["text"]:
                errors.append([_("Null characters are not allowed.")])
            else:
                errors.append([])
        if any(errors):
            raise serializers.ValidationError(errors)
        return [dict(part) for part in data]

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "object", "nullable": True, "additionalProperties": True})
class AnyObject(serializers.DictField):
    pass


class MessageSerializer(StrictSerializer):
    """One Chat Completions message, checked before any provider is asked (a provider would refuse it: a
    502). Every message the API accepts is accepted, every assistant message Gavel returned included (a
    blocked one: content null and a refusal), so a client's standard tool loop works."""

    role = Choice(choices=["system", "developer", "user", "assistant", "tool", "function"])
    content = Content()
    name = String(required=False, max_length=200)
    tool_call_id = String(required=False, max_length=200)
    tool_calls = AssistantToolCallSerializer(many=True, required=False, allow_null=True)
    function_call = FunctionCallSerializer(required=False, allow_null=True)
    refusal = String(required=False, allow_null=True, allow_blank=True, trim_whitespace=False)
    audio = AnyObject(required=False, allow_null=True)
    annotations = serializers.ListField(child=serializers.DictField(), required=False, allow_null=True)
    # The openai SDK's `.parse()` helper's decoded content: accepted, never sent on (SPEC §11.5).
    parsed = serializers.JSONField(required=False, allow_null=True, help_text="The SDK helpers' parsed content: ignored.")

    ASSISTANT_ONLY = ("tool_calls", "function_call", "refusal", "audio", "annotations")

    def validate(self, attrs):
        role = attrs["role"]
        errors = {}
        given = {name for name in self.ASSISTANT_ONLY if attrs.get(name) not in (None, [])}
        if attrs.get("content") is None and not (role == "assistant" and given & {"tool_calls", "function_call",
                                                                                  "refusal", "audio"}):
            errors["content"] = [_("Give the content (only an assistant message with tool_calls, a function_call "
                                   "or a refusal may omit it).")]
        if role != "assistant":
            for name in self.ASSISTANT_ONLY:
                if name in attrs:
                    errors[name] = [_("Only an assistant message has %(field)s.") % {"field": name}]
        if role == "tool" and not attrs.get("tool_call_id"):
            errors["tool_call_id"] = [_("A tool message names the tool_call_id it answers.")]
        if role != "tool" and "tool_call_id" in attrs:
            errors["tool_call_id"] = [_("Only a tool message has a tool_call_id.")]
        if role == "function" and not attrs.get("name"):
            errors["name"] = [_("A function message names the function it answers.")]
        if errors:
            raise serializers.ValidationError(errors)
        return provider_message(attrs)


def provider_message(attrs: dict) -> dict:
    """The message as the provider is sent it: the members that only describe an earlier answer
    (annotations, the SDK helpers' `parsed`) or say nothing (null, an empty list) left out; the rest as given."""
    message = {}
    for name, value in attrs.items():
        if name in ("annotations", "parsed") or (value is None and name != "content") or (name == "tool_calls" and not value):
            continue
        message[name] = value
    return message


# What the server checks of a tool definition, no more: OpenAI's other keys are passed on as given.
TOOL_SCHEMA = {
    "type": "object",
    "required": ["type", "function"],
    "properties": {
        "type": {"type": "string", "enum": ["function"]},
        "function": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}},
            "additionalProperties": True,
        },
    },
    "additionalProperties": True,
}


@extend_schema_field({"type": "array", "items": TOOL_SCHEMA})
class Tools(serializers.ListField):
    child = serializers.DictField()


class CompletionRequestSerializer(StrictSerializer, ConfigurationRefs):
    configuration = Slug(max_length=100)
    messages = MessageSerializer(many=True, allow_empty=False)
    tools = Tools(required=False, default=list)
    read_tools = serializers.ListField(child=String(max_length=200), required=False, default=list)
    kind = Choice(choices=KINDS, default="completion")
    stream = Boolean(default=False)

    def validate_tools(self, tools):
        for index, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if tool.get("type") != "function" or not isinstance(name, str) or not name:
                raise serializers.ValidationError(
                    _("tools[%(i)d] must be an OpenAI function tool with a name.") % {"i": index}
                )
        return tools


class FieldSerializer(StrictSerializer):
    record = String(max_length=200, help_text="The caller's id of the record, e.g. page:42.")
    name = String(max_length=100, help_text="The field whose value is proposed.")
    label = String(max_length=200, required=False, allow_blank=True, help_text="What a person reads.")
    max_length = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000,
                                          help_text="Longer answers are a finding of check `field`.")


class TaskRequestSerializer(StrictSerializer, ConfigurationRefs):
    configuration = Slug(max_length=100)
    kind = Choice(choices=["queued_task", "field_fill"])
    messages = MessageSerializer(many=True, required=False, allow_empty=False)
    instruction = String(required=False, trim_whitespace=False, max_length=200_000)
    field = FieldSerializer(required=False)
    callback_url = serializers.URLField(required=False, allow_blank=True, max_length=1000)

    def validate(self, attrs):
        errors = {}
        has_messages, has_instruction = bool(attrs.get("messages")), bool((attrs.get("instruction") or "").strip())
        if has_messages == has_instruction:
            message = _("Give either messages or instruction, not both.") if has_messages else _(
                "Give messages or an instruction.")
            errors["messages" if has_messages else "instruction"] = [message]
        if attrs.get("kind") == "field_fill" and not attrs.get("field"):
            errors["field"] = [_("A field fill needs field: record and name.")]
        if attrs.get("kind") == "queued_task" and attrs.get("field"):
            errors["field"] = [_("Only a field fill has a field.")]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


# --- response documentation (drf-spectacular) ---
class HintSerializer(serializers.Serializer):
    check = serializers.CharField()
    type = serializers.CharField()
    configuration = serializers.CharField(required=False)
    rule = serializers.DictField(required=False)
    list = serializers.CharField(required=False)
    terms = serializers.ListField(child=serializers.CharField(), required=False)
    missing = serializers.ListField(child=serializers.CharField(), required=False,
                                    help_text="Required terms missing, on a forbidden-term hint of the same list.")
    suggestion = serializers.DictField(
        child=serializers.CharField(), required=False,
        help_text="The list's replacement for each found term that carries one (a line written "
                  "`Kunde => Kundin oder Kunde`), term to replacement.")
    tool_call = serializers.IntegerField(required=False, help_text="Index of the tool call the hint is about.")
    argument = serializers.CharField(required=False, help_text="Path of the argument inside that tool call.")
    passage = serializers.CharField(allow_null=True)
    start = serializers.IntegerField(allow_null=True)
    end = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(required=False)
    message = serializers.CharField()


class CheckSerializer(serializers.Serializer):
    check = serializers.CharField()
    result = serializers.CharField()
    reason = serializers.CharField(required=False)
    tools = serializers.ListField(
        child=serializers.CharField(), required=False,
        help_text="check read_tools: the tools the caller named as reads that the configuration does not "
                  "declare; their calls were screened.")


class BlockSerializer(serializers.Serializer):
    check = serializers.CharField()
    message = serializers.CharField()
    stored_message = serializers.CharField()
    suggestion = serializers.DictField(
        child=serializers.CharField(), required=False,
        help_text="A block by term lists: each blocking list's replacement for a found term that carries one, "
                  "term to replacement (as the hint has it).")


class VerificationEntrySerializer(serializers.Serializer):
    check = serializers.ChoiceField(choices=["pattern_rules", "citations"])
    rule = serializers.CharField(help_text="The pattern rule's identifier (or the unknown one a text cites).")
    result = serializers.ChoiceField(choices=["passed", "violated", "no_verdict"])
    reason = serializers.CharField(required=False, help_text=(
        "no_verdict: the rule's no_verdict_reason, or timeout / error when its check could not run; "
        "violated: unknown_rule for a citation of no active rule."))


class VerificationSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["verified", "unverified", "not_applicable"])
    checks = VerificationEntrySerializer(many=True)


class ScreeningResponseSerializer(serializers.Serializer):
    id = serializers.CharField()
    policy_version = serializers.IntegerField()
    outcome = serializers.ChoiceField(choices=["allowed", "allowed_with_hints", "blocked"])
    text = serializers.CharField(required=False)
    tool_calls = serializers.ListField(child=serializers.DictField(), required=False)
    hints = HintSerializer(many=True)
    block = BlockSerializer(allow_null=True)
    verification = VerificationSerializer()
    checks = CheckSerializer(many=True)


class CompletionInfoSerializer(serializers.Serializer):
    provider = serializers.CharField()
    model = serializers.CharField()
    usage = serializers.DictField()
    cost = serializers.FloatField()
    escalated_from = serializers.CharField(
        required=False, help_text="Present when the answer is an escalation's: the configuration "
                                  "whose answer failed verification.")


class CompletionResponseSerializer(ScreeningResponseSerializer):
    completion = CompletionInfoSerializer()


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    fields = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


class GovernanceEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    correlation_id = serializers.CharField()
    decision = serializers.CharField()
    check = serializers.CharField()
    configuration = serializers.CharField()
    provider = serializers.CharField()
    model = serializers.CharField()
    actor = serializers.CharField()
    mode = serializers.CharField()
    detail = serializers.JSONField()


class TaskReviewSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accepted", "rejected"])
    by = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField(allow_null=True)
    edited = serializers.BooleanField()


class TaskFailureSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()


class TaskCallbackSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["pending", "delivered", "failing", "failed", "refused"])
    attempts = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)


class TaskSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.ChoiceField(choices=["queued_task", "field_fill"])
    status = serializers.ChoiceField(
        choices=["queued", "running", "ready", "blocked", "failed", "cancelled", "accepted", "rejected"])
    configuration = serializers.CharField()
    also = serializers.ListField(child=serializers.CharField())
    field = serializers.DictField(allow_null=True)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()
    attempts = serializers.IntegerField()
    failure = TaskFailureSerializer(allow_null=True)
    review = TaskReviewSerializer(allow_null=True)
    outcome = serializers.ChoiceField(choices=["allowed", "allowed_with_hints", "blocked"], required=False)
    text = serializers.CharField(required=False, help_text="The answer; the accepted text after review.")
    hints = HintSerializer(many=True, required=False)
    block = BlockSerializer(allow_null=True, required=False)
    verification = VerificationSerializer(required=False)
    checks = CheckSerializer(many=True, required=False)
    completion = CompletionInfoSerializer(allow_null=True, required=False)
    callback = TaskCallbackSerializer(required=False)


class TaskPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = TaskSerializer(many=True)


# --- batches (SPEC 10.1) ---
class BatchRequestSerializer(StrictSerializer):
    items = TaskRequestSerializer(many=True, allow_empty=False, max_length=10_000,
                                  help_text="Up to 10,000 task bodies as for POST tasks; every one is validated "
                                            "before any is queued.")
    name = String(required=False, allow_blank=True, max_length=200)
    callback_url = serializers.URLField(required=False, allow_blank=True, max_length=1000,
                                        help_text="Receives the batch as JSON once, when it has finished.")


class BatchCountsSerializer(serializers.Serializer):
    queued = serializers.IntegerField()
    running = serializers.IntegerField()
    ready = serializers.IntegerField()
    blocked = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    accepted = serializers.IntegerField()
    rejected = serializers.IntegerField()


class BatchSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField(allow_blank=True)
    created = serializers.DateTimeField()
    total = serializers.IntegerField()
    counts = BatchCountsSerializer()
    done = serializers.FloatField(help_text="The share of its tasks that have finished, 0 to 1.")
    finished = serializers.DateTimeField(allow_null=True, help_text="When the last task finished; null until then.")
    callback = TaskCallbackSerializer(required=False)


class BatchPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    results = BatchSerializer(many=True)
class RuleStatsQuerySerializer(serializers.Serializer):
    days = serializers.IntegerField(required=False, default=30, min_value=1, max_value=365,
                                    help_text="The period: the last N days, today included.")


class RuleStatSerializer(serializers.Serializer):
    check = serializers.ChoiceField(choices=["term_list", "rules_judge", "pattern_rules", "citations", "field"])
    list = serializers.CharField(help_text="The term list (term_list), else empty.")
    term = serializers.CharField(help_text="The term as the list writes it (term_list), else empty.")
    snippet = serializers.CharField(help_text="The snippet of a judged rule (rules_judge), else empty.")
    rule = serializers.CharField(help_text="A judged rule's line number in its snippet, or a pattern rule's "
                                           "identifier; else empty.")
    line = serializers.CharField(help_text="The rule line or statement as the events recorded it; may be empty.")
    fired = serializers.IntegerField(help_text="How often it was found (blocked or reported) in the period.")
    blocked = serializers.IntegerField(help_text="Of those, how often it blocked.")
    reviewed = serializers.IntegerField(help_text="Hints an editor marked right or wrong.")
    right = serializers.IntegerField()
    wrong = serializers.IntegerField(help_text="Hints marked wrong (false positives).")
    missed = serializers.IntegerField(help_text="Texts where an editor said it should have been found.")
    precision = serializers.FloatField(allow_null=True, help_text="right / reviewed; null when nothing was reviewed.")


class RuleStatsSerializer(serializers.Serializer):
    days = serializers.IntegerField()
    rules = RuleStatSerializer(many=True, help_text="Most wrong first.")
