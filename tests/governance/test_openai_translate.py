"""The gateway's pure parts (SPEC §11.5): stream steps as OpenAI chunks, errors in OpenAI's body,
and whose temperature and max_tokens a model call gets. No database, no server."""
import json

import pytest

from governance.runs.completions import sampling
from governance.models import Configuration
from governance.protocols.openai_chat.errors import client_name, openai_error
from governance.protocols.openai_chat.translate import chat_completion, chunk_stream

BODY = {"id": "abc", "policy_version": 3, "outcome": "allowed", "text": "Calm seas.", "tool_calls": [], "hints": [],
        "block": None, "verification": {"status": "not_applicable", "checks": []}, "checks": [],
        "completion": {"provider": "p", "model": "m", "usage": {"prompt_tokens": 2, "completion_tokens": 3,
                                                                 "total_tokens": 5}, "cost": 0.0}}
BLOCK = {"check": "term_list", "message": "Stopped: Kunde.", "stored_message": "Stopped."}


def chunks(steps) -> list:
    lines = list(chunk_stream(steps, correlation_id="abc", model="newsroom", created=7))
    assert lines[-1] == "data: [DONE]\n\n"
    assert all(line.startswith("data: ") and line.endswith("\n\n") for line in lines)
    return [json.loads(line[6:]) for line in lines[:-1]]


def done(**changes) -> tuple:
    body = {key: value for key, value in BODY.items() if key != "text"}
    return "done", {**body, **changes}


def test_a_live_stream_is_one_chunk_per_delta_then_the_gavel_chunk():
    sent = chunks([("delta", {"text": "Calm"}), ("delta", {"text": " seas."}), ("hints", {"hints": []}), done()])
    assert [c["choices"][0]["delta"] for c in sent] == [
        {"role": "assistant", "content": "Calm"}, {"content": " seas."}, {}]
    assert [c["choices"][0]["finish_reason"] for c in sent] == [None, None, "stop"]
    assert {c["id"] for c in sent} == {"chatcmpl-abc"} and {c["model"] for c in sent} == {"newsroom"}
    assert sent[-1]["gavel"]["id"] == "abc" and "text" not in sent[-1]["gavel"]
    assert sent[-1]["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    assert all("gavel" not in c for c in sent[:-1])


def test_a_blocked_stream_is_one_content_filter_chunk_without_text_or_tool_calls():
    call = {"id": "c1", "name": "save", "arguments": {"body": "Kunde"}}
    [only] = chunks([("blocked", {"block": BLOCK}), done(outcome="blocked", block=BLOCK, tool_calls=[call])])
    assert only["choices"][0]["delta"] == {"role": "assistant", "content": None, "refusal": BLOCK["message"]}
    assert only["choices"][0]["finish_reason"] == "content_filter" and only["gavel"]["block"] == BLOCK


def test_screened_tool_calls_come_before_the_gavel_chunk_with_string_arguments():
    call = {"id": "c1", "name": "save", "arguments": {"body": "Calm"}}
    calls, last = chunks([done(tool_calls=[call, {"name": "tag", "arguments": "{}"}])])
    assert calls["choices"][0]["delta"]["tool_calls"] == [
        {"index": 0, "id": "c1", "type": "function", "function": {"name": "save", "arguments": '{"body": "Calm"}'}},
        {"index": 1, "id": "call_2", "type": "function", "function": {"name": "tag", "arguments": "{}"}}]
    assert last["choices"][0]["finish_reason"] == "tool_calls"


def test_a_stream_error_is_an_openai_error_line_and_the_stream_still_ends_with_gavel():
    error = {"error": {"code": "provider_timeout", "message": "The provider stopped.", "fields": {}}}
    delta, failed, last = chunks([("delta", {"text": "Ca"}), ("error", error), done(outcome="allowed_with_hints")])
    assert delta["choices"][0]["delta"]["content"] == "Ca"
    assert failed == {"error": {"message": "The provider stopped.", "type": "api_error", "param": None,
                                "code": "provider_timeout"}}
    assert last["gavel"]["outcome"] == "allowed_with_hints"


def test_a_block_is_content_filter_with_null_content_and_the_block_as_refusal():
    blocked = {key: value for key, value in BODY.items() if key not in ("text", "tool_calls")}
    answer = chat_completion({**blocked, "outcome": "blocked", "block": BLOCK}, model="newsroom", created=7)
    [choice] = answer["choices"]
    assert choice["finish_reason"] == "content_filter"
    assert choice["message"] == {"role": "assistant", "content": None, "refusal": BLOCK["message"]}
    assert answer["gavel"]["block"] == BLOCK


@pytest.mark.parametrize(("status", "kind"), [
    (400, "invalid_request_error"), (401, "authentication_error"), (403, "permission_error"),
    (404, "not_found_error"), (413, "invalid_request_error"), (429, "rate_limit_error"), (502, "api_error"),
    (504, "api_error"), (500, "api_error")])
def test_each_status_has_openais_error_type(status, kind):
    assert openai_error(status, {"code": "x", "message": "m"})["error"]["type"] == kind


def test_an_error_names_its_first_field_in_the_clients_words():
    body = openai_error(404, {"code": "unknown_configuration", "message": "Unknown configuration: a",
                              "fields": {"also": ["Unknown configuration: a"], "configuration": ["x"]}})
    assert body == {"error": {"message": "Unknown configuration: a (gavel.also: Unknown configuration: a; model: x)",
                              "type": "not_found_error", "param": "gavel.also", "code": "unknown_configuration"}}
    assert [client_name(n) for n in ("configuration", "also[2]", "messages[0].role", "site")] == [
        "model", "gavel.also[2]", "messages[0].role", "gavel.site"]


@pytest.mark.parametrize(("own", "options", "sent"), [
    ((None, None), {"client_temperature": 1.5, "client_max_tokens": 500}, (1.5, 500)),
    ((0.2, 50), {"client_temperature": 1.5, "client_max_tokens": 500}, (0.2, 50)),
    ((0.2, 50), {"client_max_tokens": 20}, (0.2, 20)),
    ((0.2, 50), {}, (0.2, 50)),
    ((0.2, 50), {"temperature": 0, "client_temperature": 1.5}, (0, 50)),  # a judge's temperature 0 is final
])
def test_the_configuration_replaces_the_clients_temperature_and_caps_its_max_tokens(own, options, sent):
    configuration = Configuration(identifier="c", temperature=own[0], max_tokens=own[1])
    kwargs = sampling(configuration, {"tools": ["t"], **options})
    assert (kwargs["temperature"], kwargs["max_tokens"]) == sent
    assert kwargs["tools"] == ["t"] and not any(k.startswith("client_") for k in kwargs)


def test_the_gateway_is_in_the_openapi_schema_behind_api_v1_docs(client):
    schema = client.get("/api/v1/schema/", {"format": "json"}).json()
    paths = {"/openai/v1/models", "/openai/v1/models/{identifier}", "/openai/v1/chat/completions"}
    assert paths <= set(schema["paths"])
    operation = schema["paths"]["/openai/v1/chat/completions"]["post"]
    assert {"200", "400", "401", "403", "404", "413", "429", "502", "504"} <= set(operation["responses"])
    assert client.get("/api/v1/docs/").status_code == 200


# --- the one parameter table (governance/protocols/openai_chat/parameters.py) ---
def test_the_table_drives_validation_pass_through_and_the_schema(client):
    from governance.protocols.openai_chat.parameters import PARAMETERS, conforms
    from governance.protocols.openai_chat.serializers import parse_chat_request

    document = client.get("/api/v1/schema/?format=json").json()
    body = document["paths"]["/openai/v1/chat/completions"]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"].rsplit("/", 1)[-1]
    # Two branches: without the legacy functions, and with them (no tools then), as functions.as_tools reads them.
    plain, legacy = document["components"]["schemas"][ref]["anyOf"]
    published = plain["properties"]
    # The legacy functions / function_call are read before the table (governance/protocols/openai_chat/functions.py).
    assert set(published) == set(legacy["properties"]) == {"model", "messages", "tools", "gavel", "functions",
                                                           "function_call", *(p.name for p in PARAMETERS)}
    assert legacy["properties"]["functions"]["minItems"] == 1 and "functions" in legacy["required"]
    for parameter in PARAMETERS:
        assert {k: v for k, v in published[parameter.name].items() if k not in ("nullable", "description")} == \
            parameter.published, parameter.name
    base = {"model": "newsroom", "messages": [{"role": "user", "content": "hi"}]}
    _data, options, stream = parse_chat_request({**base, "stop": ["x"], "seed": 1, "top_p": 0.5, "stream": True,
                                                 "temperature": 1.0, "max_tokens": 9, "max_completion_tokens": 5})
    assert options == {"client_parameters": {"stop": ["x"], "seed": 1, "top_p": 0.5}, "client_temperature": 1.0,
                       "client_max_tokens": 5} and stream is True
    # tool_choice and parallel_tool_calls only travel with tools
    _data, options, _stream = parse_chat_request({**base, "tool_choice": "auto", "parallel_tool_calls": False})
    assert options == {}
    assert not conforms(2, {"type": "integer", "minimum": 1, "maximum": 1})
    from governance.errors import BadInput

    for extra, code in (({"n": 2}, "unsupported_parameter"), ({"seed": "7"}, "invalid"),
                        ({"stop": ["a"] * 5}, "invalid"), ({"top_logprobs": 1}, "unsupported_parameter")):
        with pytest.raises(BadInput) as refused:
            parse_chat_request({**base, **extra})
        assert refused.value.code == code and set(refused.value.fields) == set(extra)
