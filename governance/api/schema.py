"""The OpenAPI document made exact (drf-spectacular): what the server accepts and every answer it gives.

- a request object that refuses unknown keys says `additionalProperties: false`;
- a list that may not be empty says `minItems: 1`;
- a chat message is documented per role, as the server checks it;
- every operation documents 429 with `Retry-After`, 503 (a service Gavel needs is down) with
  `Retry-After`, and 401 with `WWW-Authenticate`, each with the one error body.
CI fuzzes the document against a live server (tests/production/test_schema_fuzz.py).
"""
import copy
import json

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension, OpenApiSerializerExtension, OpenApiSerializerFieldExtension,
)
from django.conf import settings
from rest_framework import serializers

from governance.api.serializers import CONTENT_SCHEMA, JSON_TEXT
from governance.work.callbacks import host_entry


class ConsumerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "governance.api.auth.ConsumerTokenAuthentication"
    name = "ConsumerToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A consumer token from `manage.py create_consumer` (`Token <token>` is accepted too).",
        }


class StringScheme(OpenApiSerializerFieldExtension):
    """A string field refuses the NUL character (DRF does, and PostgreSQL cannot store it): say so."""

    target_class = "governance.api.serializers.String"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction == "request" and "pattern" not in schema:
            schema["pattern"] = NO_NUL
        return schema


NO_NUL = "^[^\\u0000]*$"


class StrictSerializerScheme(OpenApiSerializerExtension):
    """A serializer that refuses unknown keys documents it, and its lists that may not be empty."""

    target_class = "governance.api.fields.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
            for name, field in self.target.fields.items():
                if name in schema.get("properties", {}) and _may_not_be_empty(field):
                    schema["properties"][name]["minItems"] = 1
        return schema


def _may_not_be_empty(field) -> bool:
    return isinstance(field, (serializers.ListSerializer, serializers.ListField)) and not field.allow_empty


class MessageScheme(OpenApiSerializerExtension):
    """A chat message per role, as MessageSerializer.validate checks it (OpenAI's shapes)."""

    target_class = "governance.api.serializers.MessageSerializer"
    priority = 1  # before StrictSerializerScheme, which matches it too

    def map_serializer(self, auto_schema, direction):
        if direction != "request":
            return auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        fields = self.target.fields
        tool_call = auto_schema.resolve_serializer(fields["tool_calls"].child, direction).ref
        function_call = auto_schema.resolve_serializer(fields["function_call"], direction).ref
        text = {"type": "string", "pattern": NO_NUL}
        content = {key: value for key, value in CONTENT_SCHEMA.items() if key not in ("nullable", "description")}
        name = auto_schema._map_serializer_field(fields["name"], direction)
        tool_call_id = auto_schema._map_serializer_field(fields["tool_call_id"], direction)

        def nullable(schema):
            return {"nullable": True, **schema} if "$ref" not in schema else {"nullable": True, "allOf": [schema]}

        def message(role, required, **properties):
            # One role per branch. A pattern, not a one-value enum: drf-spectacular's enum hook would merge
            # the branches' enums into one component holding every role.
            return {"type": "object", "required": ["role", *required], "additionalProperties": False,
                    "properties": {"role": {"type": "string", "pattern": f"^{role}$"}, **properties}}

        # What an assistant turn may carry besides its content (SDKs send each as null when unset).
        answer = {"name": name, "tool_calls": nullable({"type": "array", "items": tool_call}),
                  "function_call": nullable(function_call), "refusal": nullable(text),
                  "audio": {"type": "object", "nullable": True},
                  "annotations": {"type": "array", "items": {"type": "object"}, "nullable": True},
                  "parsed": {"description": "The openai SDK helpers' parsed content: accepted, not sent on."}}
        # With no content, one of these says what the turn was.
        instead = {"tool_calls": {"type": "array", "items": tool_call, "minItems": 1},
                   "function_call": function_call, "refusal": text, "audio": {"type": "object"}}
        return {"anyOf": [
            *(message(role, ["content"], content=content, name=name) for role in ("system", "developer", "user")),
            message("assistant", ["content"], content=content, **answer),
            *(message("assistant", [key], **{**answer, "content": nullable(content), key: schema})
              for key, schema in instead.items()),
            message("tool", ["content", "tool_call_id"], content=content, tool_call_id=tool_call_id, name=name),
            message("function", ["content", "name"], content=content, name=name),
        ]}


class ScreeningRequestScheme(StrictSerializerScheme):
    """`format: json` asks for a text that is JSON: two branches, as ScreeningRequestSerializer.validate checks."""

    target_class = "governance.api.serializers.ScreeningRequestSerializer"
    match_subclasses = False
    priority = 1

    def map_serializer(self, auto_schema, direction):
        schema = super().map_serializer(auto_schema, direction)
        if direction != "request":
            return schema
        properties = schema["properties"]
        as_text = {**schema, "properties": {**properties, "format": {"type": "string", "pattern": "^text$"}}}
        as_json = {**schema, "required": sorted({*schema.get("required", []), "format"}), "properties": {
            **properties, "format": {"type": "string", "pattern": "^json$"},
            # A JSON document (format is json), as the pattern a generator draws from says (serializers.JSON_TEXT).
            "text": dict(JSON_TEXT),
        }}
        return {"oneOf": [as_text, as_json], "description": schema.get("description", "")}


# A character Python's str.strip() keeps (ECMA's \s is not the same set): an instruction needs one.
NOT_PYTHON_SPACE = "[^\\u0000\\t\\n\\u000b\\u000c\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"


class TaskRequestScheme(StrictSerializerScheme):
    """A task gives messages or an instruction (never both), and a field exactly when it is a field fill:
    four branches, as TaskRequestSerializer.validate checks."""

    target_class = "governance.api.serializers.TaskRequestSerializer"
    match_subclasses = False
    priority = 1

    def map_serializer(self, auto_schema, direction):
        schema = super().map_serializer(auto_schema, direction)
        if direction != "request":
            return schema
        properties = schema["properties"]
        # No NUL anywhere, and one character that is not white space in Python's sense.
        instruction = {**properties["instruction"], "pattern": f"^[^\\u0000]*{NOT_PYTHON_SPACE}[^\\u0000]*$"}
        branches = []
        for kind in ("queued_task", "field_fill"):
            for text in ("messages", "instruction"):
                keep = {k: v for k, v in properties.items()
                        if k not in ("messages", "instruction", "field", "kind")}
                keep["kind"] = {"type": "string", "pattern": f"^{kind}$"}
                keep[text] = instruction if text == "instruction" else properties["messages"]
                required = {*schema.get("required", []), "kind", text}
                if kind == "field_fill":
                    keep["field"] = properties["field"]
                    required.add("field")
                branches.append({**schema, "properties": keep, "required": sorted(required)})
        return {"oneOf": branches, "description": schema.get("description", "")}


def without_v1_alias(endpoints):
    """Preprocessing hook: /v1/ answers exactly as /openai/v1/ (for clients that look for <host>/v1/models);
    the schema documents each operation once, under /openai/v1/."""
    return [endpoint for endpoint in endpoints if not endpoint[0].startswith("/v1/")]


ERROR_REF = {"$ref": "#/components/schemas/Error"}
RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer", "minimum": 1},
                               "description": "Seconds to wait before trying again."}}
EXTRA_RESPONSES = {
    "401": ("No valid token.", {"WWW-Authenticate": {"schema": {"type": "string"},
                                                      "description": 'Bearer realm="gavel"'}}),
    "429": ("Throttled (the consumer's rate) or over a daily budget (`budget_exceeded`).", {}),
    "503": ("A service Gavel needs (the database) is unreachable; try again after `Retry-After`.", RETRY_AFTER),
}


# The result in headers, on every answer of these paths that is not a live stream (SPEC §11.1).
RESULT_HEADERS = {
    "X-Gavel-Outcome": {"schema": {"type": "string", "enum": ["allowed", "allowed_with_hints", "blocked"]},
                        "description": "The outcome, as in the body (absent on a live stream)."},
    "X-Gavel-Screening": {"schema": {"type": "string"},
                          "description": "The correlation id, as `id` in the body (absent on a live stream)."},
}
RESULT_PATHS = ("/api/v1/screenings", "/api/v1/completions", "/openai/v1/chat/completions",
                "/openai/v1/responses", "/anthropic/v1/messages")


def complete_responses(result, generator, request, public):
    """Postprocessing hook: every operation under /api/v1/ that needs a token documents 401, 429
    (throttled; `Retry-After` when throttled) and 503, each with the error body; screenings and
    completions document the result headers of their answers."""
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or not operation.get("security"):
                continue
            if path in RESULT_PATHS and "200" in operation.get("responses", {}):
                operation["responses"]["200"].setdefault("headers", {}).update(copy.deepcopy(RESULT_HEADERS))
            if "requestBody" in operation:
                # Every body Gavel reads is required; a body schema with branches (anyOf) hides that
                # from drf-spectacular, which only sees required keys.
                operation["requestBody"]["required"] = True
            responses = operation.setdefault("responses", {})
            # The error body of this path (OpenAI's under /openai/), as its 400 documents it.
            body = responses.get("400", {}).get("content") or {"application/json": {"schema": ERROR_REF}}
            for status, (description, headers) in EXTRA_RESPONSES.items():
                response = responses.setdefault(status, {"content": copy.deepcopy(body)})
                if not response.get("description"):
                    response["description"] = description
                if headers:
                    response.setdefault("headers", {}).update(headers)
            if "429" in responses:
                responses["429"].setdefault("headers", {}).update({"Retry-After": {
                    "schema": {"type": "integer", "minimum": 1},
                    "description": "Seconds until the consumer's rate allows the next request "
                                   "(sent when throttled; a budget refusal lasts until the next day).",
                }})
    return result


# drf-spectacular appends "Request" to request components (COMPONENT_SPLIT_REQUEST), so a serializer already
# called ScreeningRequest became "ScreeningRequestRequest" (issue 11): drop the doubled suffix everywhere.
def natural_component_names(result, generator, request, public):
    schemas = result.get("components", {}).get("schemas", {})
    renames = {name: name[: -len("Request")] for name in schemas
               if name.endswith("RequestRequest") and name[: -len("Request")] not in schemas}
    if not renames:
        return result
    text = json.dumps(result)
    for old, new in renames.items():
        text = text.replace(f'"#/components/schemas/{old}"', f'"#/components/schemas/{new}"')
    result = json.loads(text)
    schemas = result["components"]["schemas"]
    for old, new in renames.items():
        schemas[new] = schemas.pop(old)
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    return result


# --- callback URLs: the allow-list is the server's configuration, and the schema says it (issue 25) ---
# A port as a URL field takes it: one to five digits, at most 65535.
_PORT = r"(?::(?:[0-9]{1,4}|[0-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))"


def _any_case(text: str) -> str:
    """`text` as a regular expression matching it in any letter case (JSON Schema patterns have no flags)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else ("\\." if c == "." else c) for c in text
                   if c.isalnum() or c in ".-:")  # what a host of the allow-list is made of


def callback_url_pattern(hosts: list[str]) -> str:
    """The callback URLs the server takes, as a pattern: empty (no callback), or http(s) to a host of the
    allow-list (`host` on any port, `host:port` on that one, given or implied by the scheme)."""
    http, https = "[hH][tT][tT][pP]://", "[hH][tT][tT][pP][sS]://"
    choices = []
    for entry in hosts:
        host, port = host_entry(entry)
        if not host:
            continue
        shown = f"\\[{_any_case(host)}\\]" if ":" in host else _any_case(host)
        if port is None:
            choices.append(f"[hH][tT][tT][pP][sS]?://{shown}{_PORT}?")
            continue
        choices.append(f"[hH][tT][tT][pP][sS]?://{shown}:0{{0,{5 - len(str(port))}}}{port}")
        if port in (80, 443):
            choices.append(f"{http if port == 80 else https}{shown}")
    if not choices:
        return "^$"
    return rf"^$|^(?:{'|'.join(choices)})(?:[/?#][^\s]*)?$"


def callback_allow_list(result, generator, request, public):
    """Postprocessing hook: every `callback_url` states the allow-list the server checks (GAVEL_CALLBACK_HOSTS),
    as a pattern a generated client can test before it sends, and in words."""
    pattern = callback_url_pattern(list(settings.GAVEL_CALLBACK_HOSTS))
    words = ("The host must be on this server's callback allow-list (GAVEL_CALLBACK_HOSTS; the pattern lists "
             "it) and the URL must carry no credentials (user info, tokens, keys); anything else is a 400 "
             "naming this field. Empty: no callback.")

    def visit(node):
        if isinstance(node, dict):
            url = node.get("properties", {}).get("callback_url") if isinstance(node.get("properties"), dict) else None
            if isinstance(url, dict) and url.get("type") == "string":
                url["pattern"] = pattern
                url.pop("format", None)  # the pattern says more than `uri`, and allows the empty string
                url["description"] = f"{url['description']} {words}" if url.get("description") else words
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(result.get("components", {}))
    return result
