"""POST /openai/v1/responses read and answered (SPEC §11.6), through Django's test client: what reaches
the provider for each kind of input item and parameter, and what is refused with 400 naming it."""
import json

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def post(api, **body):
    body.setdefault("model", "newsroom")
    return api.post("/openai/v1/responses", body, format="json")


def sent(provider_server) -> dict:
    [request] = provider_server.chat_requests
    return request.body


def test_items_become_the_chat_messages_the_run_reads(api, provider_server):
    response = post(api, instructions="Be brief.", input=[
        {"role": "developer", "content": "House style applies."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather "},
                                                         {"type": "input_text", "text": "in Kiel?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
         "arguments": '{"city": "Kiel"}', "status": "completed"},
        {"type": "function_call", "call_id": "call_2", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny."},
        {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "Noon."}]},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "Not that."}]},
    ])
    assert response.status_code == 200, response.content
    assert sent(provider_server)["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "House style applies."},  # as on Chat Completions
        {"role": "user", "content": "Weather in Kiel?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Kiel"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny."},
        {"role": "tool", "tool_call_id": "call_2", "content": "Noon."},
        {"role": "assistant", "refusal": "Not that."},
    ]


def test_tools_tool_choice_and_formats_reach_the_provider(api, provider_server):
    tool = {"type": "function", "name": "save", "parameters": {"type": "object"}, "strict": True}
    response = post(api, input="Save it.", tools=[tool], tool_choice={"type": "function", "name": "save"},
                    parallel_tool_calls=False, text={"format": {"type": "json_object"}}, max_output_tokens=64,
                    user="desk-7", metadata={"a": "b"}, store=True, include=["reasoning.encrypted_content"])
    assert response.status_code == 200, response.content
    body = sent(provider_server)
    assert body["tools"] == [{"type": "function", "function": {"name": "save", "parameters": {"type": "object"},
                                                               "strict": True}}]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "save"}}
    assert body["parallel_tool_calls"] is False and body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 64 and body["user"] == "desk-7"
    answer = response.json()
    assert answer["metadata"] == {"a": "b"} and answer["store"] is False and answer["tool_choice"]["name"] == "save"


def test_reasoning_effort_reaches_the_provider(api, provider_server):
    response = post(api, input="Think.", reasoning={"effort": "low"})
    assert response.status_code == 200, response.content
    assert sent(provider_server)["reasoning_effort"] == "low"


@pytest.mark.parametrize("body, param, code", [
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0].id", "invalid"),
    ({"input": [{"type": "web_search_call", "id": "ws_1"}]}, "input[0].type", "unsupported_parameter"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
     "input[0].content[0].type", "unsupported_parameter"),
    ({"input": "Hi.", "tools": [{"name": "typeless"}]}, "tools[0].type", "unsupported_parameter"),
    ({"input": "Hi.", "tools": [{"type": "namespace", "name": "ns", "tools": [{"type": "web_search"}]}]},
     "tools[0].tools[0].type", "unsupported_parameter"),
    ({"input": "Hi.", "conversation": "conv_1"}, "conversation", "unsupported_parameter"),
    ({"input": "Hi.", "background": True}, "background", "unsupported_parameter"),
    ({"input": "Hi.", "truncation": "auto"}, "truncation", "unsupported_parameter"),
    ({"input": "Hi.", "include": ["message.output_text.logprobs"]}, "include", "unsupported_parameter"),
    ({"input": "Hi.", "temperature": 5}, "temperature", "invalid"),
    ({"input": []}, "input", "invalid"),
    ({"input": [{"role": "robot", "content": "Hi."}]}, "input[0].role", "invalid"),
    ({"input": [{"type": "function_call_output", "output": "x"}]}, "input[0].call_id", "invalid"),
    ({"input": "Hi.", "text": {"format": {"type": "json_schema"}}}, "text.format", "invalid"),
    ({"input": "Hi.", "gavel": {"colour": "red"}}, "gavel.colour", "invalid"),
    ({"input": "Hi.", "tool_choice": "sometimes"}, "tool_choice", "invalid"),  # checked without tools too
    ({}, "input", "invalid"),
])
def test_what_cannot_be_read_or_honoured_is_a_400_naming_it(api, provider_server, body, param, code):
    response = post(api, **body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert param in error["message"]
    assert (error["code"] == "unsupported_parameter") == (code == "unsupported_parameter"), error
    assert provider_server.chat_requests == []


def test_the_same_endpoint_answers_at_v1(api, provider_server):
    response = api.post("/v1/responses", {"model": "newsroom", "input": "Hi."}, format="json")
    assert response.status_code == 200 and response.json()["object"] == "response"


def test_unknown_model_and_bad_token_are_openai_errors(api, client, provider_server):
    assert post(api, model="no-such", input="Hi.").json()["error"]["type"] == "not_found_error"
    response = client.post("/openai/v1/responses", json.dumps({"model": "newsroom", "input": "Hi."}),
                           content_type="application/json", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401 and response.json()["error"]["type"] == "authentication_error"


def typed_events(response) -> list[dict]:
    """The stream's events, strictly: `event: <type>` then one `data:` line whose `type` is the same,
    sequence numbers counting from 0."""
    assert response.status_code == 200 and response["Content-Type"].startswith("text/event-stream")
    raw = b"".join(response.streaming_content).decode()
    events = []
    for block in raw.strip("\n").split("\n\n"):
        name_line, data_line = block.split("\n")
        event = json.loads(data_line[len("data: "):])
        assert name_line == f"event: {event['type']}"
        events.append(event)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    return events


def test_a_live_stream_that_breaks_off_ends_failed_with_a_not_checked_hint(api, provider_server, backup):
    provider_server.script([{"stream_chunks": ["One ", "two ", "three."], "fail_after": 1, "for_model": "test-model"}])
    events = typed_events(post(api, input="Count.", stream=True))
    assert [e["delta"] for e in events if e["type"] == "response.output_text.delta"] == ["One "]
    error = next(e for e in events if e["type"] == "error")
    assert error["code"] == "provider_error"
    final = events[-1]
    assert final["type"] == "response.failed" and final["response"]["status"] == "failed"
    assert final["response"]["error"]["code"] == "provider_error"
    assert [h["type"] for h in final["response"]["gavel"]["hints"]] == ["not_checked"]


def test_a_held_stream_that_breaks_off_sends_no_text(api, provider_server, configuration, backup):
    configuration.rule_mode = "block"
    configuration.save()
    provider_server.script([{"stream_chunks": ["One ", "two ", "three."], "fail_after": 1, "for_model": "test-model"}])
    events = typed_events(post(api, input="Count.", stream=True))
    assert not [e for e in events if e["type"].startswith("response.output_text")]
    assert "One" not in json.dumps(events)
    final = events[-1]
    assert final["type"] == "response.failed"
    assert final["response"]["gavel"]["outcome"] == "blocked"
    assert final["response"]["gavel"]["block"]["check"] == "stream"


def test_a_streamed_function_call_comes_as_its_items(api, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_9", "name": "save", "arguments": {"body": "Hi"}}]}])
    events = typed_events(post(api, input="Save.", stream=True,
                               tools=[{"type": "function", "name": "save", "parameters": {"type": "object"}}]))
    kinds = [e["type"] for e in events]
    assert kinds == ["response.created", "response.in_progress", "response.output_item.added",
                     "response.function_call_arguments.delta", "response.function_call_arguments.done",
                     "response.output_item.done", "response.completed"]
    item = events[-1]["response"]["output"][0]
    assert (item["type"], item["call_id"], item["name"], json.loads(item["arguments"])) == (
        "function_call", "call_9", "save", {"body": "Hi"})


TOOL = {"type": "function", "name": "save", "parameters": {"type": "object"}}
# Every request member of the Responses API Gavel reads (SPEC §11.6): what the provider must receive.
REACHES = [
    ("instructions", {"instructions": "Be brief."}, lambda b: b["messages"][0] == {"role": "system",
                                                                                  "content": "Be brief."}),
    ("tools", {"tools": [TOOL]}, lambda b: b["tools"][0]["function"]["name"] == "save"),
    ("tool_choice", {"tools": [TOOL], "tool_choice": "required"}, lambda b: b["tool_choice"] == "required"),
    ("parallel_tool_calls", {"tools": [TOOL], "parallel_tool_calls": False},
     lambda b: b["parallel_tool_calls"] is False),
    ("temperature", {"temperature": 0.2}, lambda b: b["temperature"] == 0.2),
    ("top_p", {"top_p": 0.5}, lambda b: b["top_p"] == 0.5),
    ("max_output_tokens", {"max_output_tokens": 77}, lambda b: b["max_tokens"] == 77),
    ("text.format", {"text": {"format": {"type": "json_object"}}},
     lambda b: b["response_format"] == {"type": "json_object"}),
    ("reasoning.effort", {"reasoning": {"effort": "high"}}, lambda b: b["reasoning_effort"] == "high"),
    ("user", {"user": "desk-7"}, lambda b: b["user"] == "desk-7"),
    ("stream", {"stream": True}, lambda b: b["stream"] is True),
]


@pytest.mark.parametrize("name, extra, check", REACHES, ids=[row[0] for row in REACHES])
def test_every_parameter_that_changes_the_answer_reaches_the_provider(api, provider_server, name, extra, check):
    response = post(api, input="Hi.", **extra)
    assert response.status_code == 200, response.content
    if response.streaming:
        b"".join(response.streaming_content)
    assert check(sent(provider_server)), sent(provider_server)


@pytest.mark.parametrize("name, value", [("service_tier", "flex"), ("text.verbosity", "low")])
def test_a_passed_parameter_reaches_the_provider_or_is_refused_naming_it(api, provider_server, name, value):
    """Whether a route takes it is litellm's to say: either way it is never dropped."""
    head, _dot, tail = name.partition(".")
    response = post(api, input="Hi.", **({head: {tail: value}} if tail else {head: value}))
    if response.status_code == 200:
        assert sent(provider_server)[tail or head] == value
    else:  # named as the client named it (litellm 1.110.2 sends no verbosity to the openai route)
        assert response.status_code == 400 and response.json()["error"]["param"] == name, response.content
        assert response.json()["error"]["code"] == "unsupported_parameter"
        assert provider_server.chat_requests == []


@pytest.mark.parametrize("extra", [{"metadata": {"a": "b"}}, {"store": True}, {"safety_identifier": "u-1"},
                                   {"prompt_cache_key": "k"}, {"stream_options": {"include_obfuscation": False}},
                                   # The schema's one value for a summary (issue 25: it was a 400).
                                   {"reasoning": {"summary": None, "generate_summary": None}}])
def test_members_that_change_nothing_sent_are_accepted(api, provider_server, extra):
    response = post(api, input="Hi.", **extra)
    assert response.status_code == 200, response.content
    assert set(extra) & set(sent(provider_server)) == set()


def test_an_item_reference_is_the_item_gavel_returned_to_this_token(api, provider_server, make_consumer,
                                                                    configuration):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "save", "arguments": {"body": "Hi"}}], "text": "Saving."},
        {"text": "Saved."},
    ])
    first = post(api, input="Save it.", tools=[TOOL]).json()
    message, call = first["output"]
    references = [{"type": "item_reference", "id": message["id"]}, {"type": "item_reference", "id": call["id"]}]
    second = post(api, tools=[TOOL], input=[{"role": "user", "content": "Save it."}, *references,
                                            {"type": "function_call_output", "call_id": "call_1", "output": "ok"}])
    assert second.status_code == 200, second.content
    assert provider_server.chat_requests[1].body["messages"][1:] == [
        {"role": "assistant", "content": "Saving.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "save", "arguments": '{"body": "Hi"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    # Another token cannot read what this one was sent.
    _other, token = make_consumer("other-app", [configuration])
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = other.post("/openai/v1/responses", {"model": "newsroom", "input": references}, format="json")
    assert response.status_code == 400 and response.json()["error"]["param"] == "input[0].id"


def test_a_streamed_response_s_items_are_kept_too(api, provider_server):
    provider_server.script([{"text": "The harbour woke early."}, {"text": "Again."}])
    events = typed_events(post(api, input="Write.", stream=True))
    [item] = events[-1]["response"]["output"]
    second = post(api, input=[{"type": "item_reference", "id": item["id"]}, {"role": "user", "content": "More."}])
    assert second.status_code == 200, second.content
    assert provider_server.chat_requests[1].body["messages"][0] == {"role": "assistant",
                                                                    "content": "The harbour woke early."}
