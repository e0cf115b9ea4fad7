"""The OpenAPI schema of POST /openai/v1/responses (drf-spectacular), built from parameters.py, the table
that also reads the request; the `gavel` facts with the very fields of POST completions."""
from drf_spectacular.extensions import OpenApiSerializerExtension

from governance.api.serializers import CompletionRequestSerializer
from governance.protocols.openai_chat.serializers import EXTENSION_KEYS
from governance.protocols.openai_responses.parameters import PARAMETERS

NO_NUL = "^[^\\u0000]*$"  # the chat messages an input becomes refuse the null character
PLAIN = {"type": "string", "pattern": NO_NUL}
NAME = {"type": "string", "minLength": 1, "pattern": NO_NUL}
TEXT_PART = {"type": "object", "required": ["type", "text"], "properties": {
    "type": {"type": "string", "enum": ["input_text", "output_text"]}, "text": PLAIN}}
REFUSAL_PART = {"type": "object", "required": ["type", "refusal"], "properties": {
    "type": {"type": "string", "enum": ["refusal"]}, "refusal": PLAIN}}
TEXT_CONTENT = {"oneOf": [PLAIN, {"type": "array", "items": TEXT_PART}]}


def _message(roles: list[str], content: dict) -> dict:
    return {"type": "object", "required": ["role", "content"], "properties": {
        "type": {"type": "string", "enum": ["message"]}, "role": {"type": "string", "enum": roles},
        "content": content}}


ITEM = {"oneOf": [
    _message(["user", "system", "developer"], TEXT_CONTENT),
    # Only an assistant's message may hold a refusal part.
    _message(["assistant"], {"oneOf": [PLAIN, {"type": "array", "items": {"oneOf": [TEXT_PART, REFUSAL_PART]}}]}),
    {"type": "object", "required": ["type", "call_id", "name", "arguments"], "properties": {
        "type": {"type": "string", "enum": ["function_call"]}, "call_id": NAME, "name": NAME, "arguments": PLAIN}},
    {"type": "object", "required": ["type", "call_id", "output"], "properties": {
        "type": {"type": "string", "enum": ["function_call_output"]}, "call_id": NAME, "output": TEXT_CONTENT}},
    {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["reasoning"]}}},
], "description": "A message (`role`, `content`: a string or text parts), a `function_call` (`call_id`, `name`, "
   "`arguments`), a `function_call_output` (`call_id`, `output`) or a `reasoning` item passed back (not sent to "
   "the provider). Other members an item carries (`id`, `status`) are ignored. An input of reasoning items "
   "only has nothing to screen: `input` holds one item of another type."}
FUNCTION_TOOL = {"type": "object", "required": ["type", "name"], "properties": {
    "type": {"type": "string", "enum": ["function"]}, "name": {"type": "string", "minLength": 1},
    "description": {"type": "string"}, "parameters": {"type": "object", "additionalProperties": True},
    "strict": {"type": "boolean"}}}
NAMESPACE_TOOL = {"type": "object", "required": ["type", "name", "tools"], "properties": {
    "type": {"type": "string", "enum": ["namespace"]}, "name": {"type": "string", "minLength": 1},
    "description": {"type": "string"}, "tools": {"type": "array", "items": FUNCTION_TOOL}},
    "description": "Its function tools are offered and screened as function tools named `<namespace>__<name>` "
                   "(`<namespace><name>` when the namespace ends in `__`); a call comes back as a function_call "
                   "with `name` and `namespace`."}
HOSTED_TOOL = {"type": "object", "required": ["type"], "additionalProperties": True, "properties": {
    "type": {"type": "string", "minLength": 1, "not": {"enum": ["function", "namespace"]}}},
    "description": "A hosted tool (web_search, file_search, code_interpreter, ...): OpenAI would run it, Gavel "
                   "cannot, so it is not offered to the model; `gavel.checks` carries `{\"check\": \"request\", "
                   "\"result\": \"dropped\", \"reason\": \"hosted_tool\", \"member\": \"tools[i]\", \"tool\": type}`."}
TEXT = {"type": "object", "properties": {
    "format": {"oneOf": [
        {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["text"]}}},
        {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["json_object"]}}},
        {"type": "object", "required": ["type", "name", "schema"], "additionalProperties": True, "properties": {
            "type": {"type": "string", "enum": ["json_schema"]}, "name": {"type": "string"},
            "schema": {"type": "object", "additionalProperties": True}, "strict": {"type": "boolean"}}}]},
    "verbosity": {"type": "string", "description": "Reaches the provider as verbosity."}}}
SPECIFIC = {
    # A list with one item that is not a reasoning item passed back: reasoning alone has nothing to screen.
    "input": {"oneOf": [PLAIN, {"type": "array", "items": ITEM, "minItems": 1, "not": {"type": "array", "items": {
        "type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": ["reasoning"]}}}}}]},
    "instructions": PLAIN,
    "tools": {"type": "array", "items": {"oneOf": [FUNCTION_TOOL, NAMESPACE_TOOL, HOSTED_TOOL]}},
    "tool_choice": {"oneOf": [{"type": "string", "enum": ["auto", "none", "required"]},
                              {"type": "object", "required": ["type", "name"], "properties": {
                                  "type": {"type": "string", "enum": ["function"]}, "name": {"type": "string"}}}]},
    "text": TEXT,
    "reasoning": {"type": "object", "properties": {
        "effort": {"type": "string"},
        "summary": {"type": "string", "nullable": True, "description": "No summary is returned: a value asked "
                    "for is dropped, said in `checks` (reason `no_reasoning_summaries`)."},
        "generate_summary": {"type": "string", "nullable": True, "description": "As `summary`."}}},
}


class ResponsesRequestScheme(OpenApiSerializerExtension):
    target_class = "governance.protocols.openai_responses.serializers.ResponsesRequestSerializer"

    def map_serializer(self, auto_schema, direction):
        if direction != "request":
            return auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        fields = CompletionRequestSerializer().fields

        def field(name):
            schema = auto_schema._map_serializer_field(fields[name], direction)
            auto_schema._insert_field_validators(fields[name], schema)
            return schema

        properties = {}
        for parameter in PARAMETERS:
            if parameter.name == "gavel":
                schema = {"type": "object", "additionalProperties": False,
                          "properties": {key: field(key) for key in EXTENSION_KEYS}}
            elif parameter.name == "model":
                schema = field("configuration")
            else:
                schema = dict(SPECIFIC.get(parameter.name, parameter.published))
            if parameter.description:
                schema["description"] = parameter.description
            properties[parameter.name] = {**schema, "nullable": True} if parameter.name not in ("model", "input") \
                else schema
        return {"type": "object", "required": ["model", "input"], "properties": properties,
                "additionalProperties": False,
                "description": "A member not listed here is refused with 400 `unsupported_parameter` naming it. "
                               "So is a value passed to the provider (`top_p`, `reasoning.effort`, "
                               "`text.verbosity`, …) that the route of the configuration's provider does not "
                               "take: which these are depends on the configuration."}
