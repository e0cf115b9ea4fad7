"""Issue 41: the published schema and the server agree, from the schema fuzzer's findings without the
project's hooks. Each case states a body; the test validates it against the request schema the server
publishes and requires the server's answer to match: schema-valid is never a 400, schema-invalid is a 400.
"""
import copy
import json

import jsonschema
import pytest

pytestmark = pytest.mark.django_db


def _as_json_schema(node):
    """An OpenAPI 3.0 schema as JSON Schema (draft 4): `nullable` becomes a null branch."""
    if isinstance(node, list):
        return [_as_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _as_json_schema(value) for key, value in node.items() if key not in ("nullable", "example")}
    if node.get("nullable"):
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return {"anyOf": [out, {"type": "null"}]}
    return out


@pytest.fixture(scope="module")
def openapi(django_db_blocker):
    from drf_spectacular.generators import SchemaGenerator

    with django_db_blocker.unblock():
        return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))


def body_schema(openapi, path: str, method: str = "post") -> dict:
    body = openapi["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    return {**_as_json_schema(copy.deepcopy(body)),
            "components": _as_json_schema(copy.deepcopy(openapi["components"]))}


def schema_allows(schema: dict, body) -> bool:
    return jsonschema.Draft4Validator(schema).is_valid(body)


@pytest.fixture
def chat(api):
    return lambda body: api.post("/openai/v1/chat/completions", body, format="json")


MESSAGES = [{"role": "user", "content": "Hello"}]


@pytest.mark.parametrize("extra", [
    {"functions": [], "function_call": "auto"},  # the finding: functions [] with function_call
    {"functions": [], "function_call": None},
    {"function_call": "none"},
    {"function_call": {"name": "f"}},
    {"functions": None, "function_call": "auto"},
    {"functions": [{"name": "f"}], "tools": [{"type": "function", "function": {"name": "g"}}]},
    {"functions": [{"name": "f"}], "tools": []},
    {"functions": [{"name": "f", "parameters": {"type": "object", "properties": {}}}], "function_call": "auto"},
    {"functions": [{"name": "f"}], "function_call": {"name": "f"}},
    {"functions": None, "function_call": None},
    {"tools": [{"type": "function", "function": {"name": "g"}}]},
])
def test_chat_legacy_functions_schema_and_server_agree(openapi, chat, extra):
    body = {"model": "newsroom", "messages": MESSAGES, **extra}
    allowed = schema_allows(body_schema(openapi, "/openai/v1/chat/completions"), body)
    answer = chat(body)
    assert (answer.status_code != 400) == allowed, (allowed, answer.status_code, answer.content[:300])


@pytest.mark.parametrize("given", [
    "", "Hello", [], [{"role": "user", "content": ""}], [{"role": "user", "content": []}],
    [{"role": "user", "content": "Hi"}], [{"type": "reasoning"}], [{"type": "reasoning"}, {"type": "reasoning"}],
    [{"type": "reasoning"}, {"role": "user", "content": "Hi"}],
    [{"type": "function_call_output", "call_id": "c", "output": []}],
    [{"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}],
])
def test_responses_input_schema_and_server_agree(openapi, api, given):
    body = {"model": "newsroom", "input": given}
    allowed = schema_allows(body_schema(openapi, "/openai/v1/responses"), body)
    answer = api.post("/openai/v1/responses", body, format="json")
    assert (answer.status_code != 400) == allowed, (allowed, answer.status_code, answer.content[:300])


def test_an_unknown_provider_in_served_by_is_an_unknown_record_not_bad_input(openapi, api, provider):
    """`served_by` names a provider: any slug keeps the schema, one that names no provider is a 404 (as an
    unknown configuration is), documented on the operation."""
    body = {"text": "Hello", "configuration": "newsroom", "served_by": "no-such-provider"}
    assert schema_allows(body_schema(openapi, "/api/v1/screenings"), body)
    answer = api.post("/api/v1/screenings", body, format="json")
    assert answer.status_code == 404, answer.content
    assert answer.json()["error"]["fields"] == {"served_by": ["Unknown provider: no-such-provider"]}
    assert "served_by" in openapi["paths"]["/api/v1/screenings"]["post"]["responses"]["404"]["description"]
    known = api.post("/api/v1/screenings", {**body, "served_by": provider.name}, format="json")
    assert known.status_code == 200, known.content
