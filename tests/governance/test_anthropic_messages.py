"""The Anthropic Messages API (SPEC §11.7, §11.8) on the wire: what each request member becomes at the
provider (tests/provider_server.py records every body), what is refused naming it, the event stream's
shape, and that a block leaves no blocked text in any byte and writes the governance event.
"""
import json

import pytest
from rest_framework.test import APIClient

from governance.models import GovernanceEvent
from termlists.models import TermList

USER = [{"role": "user", "content": "Write about the harbour."}]
SEARCH_TOOL = {"name": "search", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
FORBIDDEN_ANSWER = "Dear Kunde, the harbour woke early."
PNG = "iVBORw0KGgo="


@pytest.fixture
def client(db, configuration, make_consumer):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token, HTTP_ANTHROPIC_VERSION="2023-06-01")
    return client


@pytest.fixture
def brand_words(configuration):
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.")
    term_list.configurations.set([configuration])
    return term_list


def post(client, path="/anthropic/v1/messages", **body):
    body.setdefault("model", "newsroom")
    body.setdefault("messages", USER)
    body.setdefault("max_tokens", 100)
    return client.post(path, body, format="json")


def sent(provider_server) -> dict:
    return provider_server.chat_requests[-1].body


def refused(response, param: str, code: str = "unsupported_parameter") -> dict:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["code"] == code and body["error"]["param"] == param
    assert param in body["error"]["message"]
    return body


def events(response) -> list[tuple[str, dict]]:
    return events_of(b"".join(response.streaming_content))


def events_of(raw: bytes) -> list[tuple[str, dict]]:
    text = raw.decode()
    result = []
    for block in text.strip().split("\n\n"):
        name, data = block.split("\n")
        result.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return result


# --- every parameter of §11.7 reaches the provider or is refused naming it ---
def test_the_sampling_parameters_reach_the_provider_in_its_names(client, provider_server, configuration):
    configuration.max_tokens = 80
    configuration.save()
    response = post(client, system=[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
                    max_tokens=500, temperature=0.3, top_p=0.8, stop_sequences=["END", "STOP"],
                    metadata={"user_id": "reader-7"}, thinking={"type": "disabled"},
                    output_config={"effort": "low", "format": {"type": "json_schema", "schema": {"type": "object"}}})
    assert response.status_code == 200, response.content
    body = sent(provider_server)
    assert body["messages"][0] == {"role": "system", "content": "Be brief.\n\nBe kind."}
    assert body["max_tokens"] == 80  # the configuration's cap
    assert (body["temperature"], body["top_p"], body["stop"], body["user"]) == (0.3, 0.8, ["END", "STOP"], "reader-7")
    assert body["reasoning_effort"] == "low"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert "thinking" not in body


def test_tools_and_each_tool_choice_reach_the_provider(client, provider_server):
    for choice, expected in (({"type": "auto"}, "auto"), ({"type": "any"}, "required"), ({"type": "none"}, "none"),
                             ({"type": "tool", "name": "search"}, {"type": "function", "function": {"name": "search"}})):
        assert post(client, tools=[SEARCH_TOOL], tool_choice=choice).status_code == 200
        assert sent(provider_server)["tool_choice"] == expected
        assert sent(provider_server)["tools"] == [{"type": "function", "function": {
            "name": "search", "parameters": SEARCH_TOOL["input_schema"]}}]
    post(client, tools=[SEARCH_TOOL], tool_choice={"type": "auto", "disable_parallel_tool_use": True})
    assert sent(provider_server)["parallel_tool_calls"] is False


def test_what_the_provider_s_route_does_not_take_is_refused_naming_it(client, provider_server):
    refused(post(client, top_k=5), "top_k")
    refused(post(client, stream=True, top_k=5), "top_k")
    assert provider_server.chat_requests == []


def dropped(gavel: dict) -> dict:
    return {check["field"]: check["reason"] for check in gavel["checks"] if check["check"] == "request"}


@pytest.mark.parametrize("thinking", [{"type": "adaptive", "display": "omitted"},
                                      {"type": "enabled", "budget_tokens": 2048}])
@pytest.mark.parametrize("stream", [False, True])
def test_claude_code_s_defaults_are_sent_where_taken_else_dropped_and_said_in_checks(
        client, provider_server, configuration, thinking, stream):
    # gpt-4o on the OpenAI route takes neither thinking nor reasoning_effort (litellm's list for the route).
    configuration.model = "gpt-4o"
    configuration.save()
    response = post(client, stream=stream, thinking=thinking, output_config={"effort": "high"},
                    context_management={"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
                    system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
    assert response.status_code == 200, response.content
    gavel = events(response)[-2][1]["gavel"] if stream else response.json()["gavel"]
    assert dropped(gavel) == {"thinking": "not_taken_by_route", "output_config.effort": "not_taken_by_route",
                              "context_management": "not_sent", "cache_control": "not_sent"}
    assert gavel["checks"][0] == {"check": "request", "result": "dropped", "field": "cache_control",
                                  "reason": "not_sent"}
    body = sent(provider_server)
    assert "thinking" not in body and "reasoning_effort" not in body and "context_management" not in body
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_thinking_and_effort_reach_a_route_that_takes_them(client, provider_server, provider):
    provider.route = "hosted_vllm"  # litellm sends thinking and reasoning_effort on this route
    provider.save()
    # litellm sends the route's equivalent: this route's reasoning_effort.
    response = post(client, thinking={"type": "enabled", "budget_tokens": 1024})
    assert response.status_code == 200, response.content
    assert dropped(response.json()["gavel"]) == {}
    assert sent(provider_server)["reasoning_effort"] == "low"
    response = post(client, stream=True, thinking={"type": "adaptive"}, output_config={"effort": "high"})
    assert dropped(events(response)[-2][1]["gavel"]) == {}
    assert sent(provider_server)["reasoning_effort"] == "high"


@pytest.mark.parametrize(("member", "param"), [
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools[0].type"),
    ({"mcp_servers": [{"type": "url", "url": "https://example.invalid", "name": "x"}]}, "mcp_servers"),
    ({"container": "container_1"}, "container"),
    ({"messages": [{"role": "user", "content": [{"type": "search_result", "source": "x"}]}]},
     "messages[0].content[0].type"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}]}]},
     "messages[0].content[0].content[0]"),
])
def test_what_gavel_cannot_screen_is_refused_naming_it(client, provider_server, member, param):
    refused(post(client, **member), param)
    assert provider_server.chat_requests == []


@pytest.mark.parametrize(("member", "param"), [
    ({"max_tokens": None}, "max_tokens"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"temperature": 1.5}, "temperature"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].role"),
    ({"system": [{"type": "image"}]}, "system[0]"),
    ({"gavel": {"colour": "red"}}, "gavel.colour"),
    ({"tool_choice": {"type": "tool"}, "tools": [SEARCH_TOOL]}, "tool_choice"),
    ({"messages": [USER[0], {"role": "user", "content": "a\u0000b"}]}, "messages[1]"),
])
def test_bad_input_is_anthropic_s_invalid_request_error_naming_the_field(client, provider_server, member, param):
    body = {"model": "newsroom", "messages": USER, "max_tokens": 100, **member}
    body = {key: value for key, value in body.items() if value is not None}
    refused(client.post("/anthropic/v1/messages", body, format="json"), param, code="invalid")
    assert provider_server.chat_requests == []


def test_errors_use_anthropic_s_body_and_statuses(client, provider_server):
    anonymous = APIClient().post("/v1/messages", {"model": "newsroom", "messages": USER, "max_tokens": 5},
                                 format="json")
    assert anonymous.status_code == 401 and anonymous.json()["error"]["type"] == "authentication_error"
    bad_key = APIClient(HTTP_X_API_KEY="nope").post("/v1/messages", {}, format="json")
    assert bad_key.status_code == 401 and bad_key.json()["type"] == "error"
    unknown = post(client, model="elsewhere")
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "not_found_error"
    for path in ("/anthropic/v1/no-such-endpoint", "/anthropic/elsewhere"):
        missing = client.get(path)
        assert missing.status_code == 404 and missing.json()["type"] == "error", path
        assert missing.json()["error"]["type"] == "not_found_error"
    wrong_method = client.get("/v1/messages")
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["type"] == "invalid_request_error"
    # The OpenAI gateway's paths keep OpenAI's body.
    assert "type" not in client.get("/v1/no-such-endpoint").json()


# --- content blocks become the provider's messages ---
def test_content_blocks_become_chat_messages(client, provider_server):
    messages = [
        {"role": "user", "content": [
            {"type": "text", "text": "Describe this."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "url", "url": "https://img.example/p.png"}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Notes."}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Hmm.", "signature": "sig"},
            {"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "harbour"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "Six."}]},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "Down.", "is_error": True},
            {"type": "text", "text": "Thanks."}]},
    ]
    assert post(client, messages=messages, tools=[SEARCH_TOOL]).status_code == 200
    history = sent(provider_server)["messages"]
    assert history[0]["content"] == [
        {"type": "text", "text": "Describe this."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image_url", "image_url": {"url": "https://img.example/p.png"}},
        {"type": "text", "text": "Notes."}]
    assert history[1]["content"] == "Searching." and "Hmm." not in json.dumps(history)
    assert history[1]["tool_calls"] == [{"id": "toolu_1", "type": "function",
                                         "function": {"name": "search", "arguments": '{"q": "harbour"}'}}]
    assert history[2] == {"role": "tool", "tool_call_id": "toolu_1", "content": "Six."}
    assert history[3] == {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: Down."}
    assert history[4] == {"role": "user", "content": "Thanks."}


# --- answers and streams ---
def test_a_live_stream_is_anthropic_s_event_sequence(client, provider_server):
    provider_server.script([{"text": "The harbour opens.", "usage": {"prompt_tokens": 4, "completion_tokens": 3}}])
    response = post(client, stream=True)
    assert response["Content-Type"] == "text/event-stream"
    steps = events(response)
    names = [name for name, _data in steps]
    assert names[:2] == ["message_start", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert all(name == "content_block_delta" for name in names[2:-3]) and len(names[2:-3]) == 3
    assert all(data["type"] == name for name, data in steps)
    assert "".join(data["delta"]["text"] for name, data in steps if name == "content_block_delta") == \
        "The harbour opens."
    delta = steps[-2][1]
    assert delta["delta"]["stop_reason"] == "end_turn" and delta["usage"] == {"input_tokens": 4, "output_tokens": 3}
    assert delta["gavel"]["outcome"] == "allowed"


def test_a_streamed_tool_use_is_an_input_json_delta(client, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_9", "name": "search", "arguments": {"q": "x"}}]}])
    steps = events(post(client, stream=True, tools=[SEARCH_TOOL]))
    start = next(data for name, data in steps if name == "content_block_start")
    assert start["content_block"] == {"type": "tool_use", "id": "call_9", "name": "search", "input": {}}
    delta = next(data for name, data in steps if name == "content_block_delta")
    assert delta["delta"] == {"type": "input_json_delta", "partial_json": '{"q": "x"}'}
    assert steps[-2][1]["delta"]["stop_reason"] == "tool_use"


@pytest.mark.parametrize("stream", [False, True])
def test_a_block_is_a_refusal_with_no_blocked_byte_and_one_governance_event(client, provider_server, brand_words,
                                                                           stream):
    provider_server.script([{"text": FORBIDDEN_ANSWER}])
    response = post(client, stream=stream)
    raw = b"".join(response.streaming_content) if stream else response.content
    assert b"Kunde," not in raw and b"woke early" not in raw
    assert response["X-Gavel-Outcome"] == "blocked"  # a held stream's verdict is known before it starts
    if stream:
        steps = events_of(raw)
        text = "".join(data["delta"]["text"] for name, data in steps if name == "content_block_delta")
        stop = steps[-2][1]["delta"]["stop_reason"]
    else:
        message = response.json()
        text, stop = message["content"][0]["text"], message["stop_reason"]
        assert message["gavel"]["block"]["message"] == text
    assert stop == "refusal" and "Say customer." in text
    event = GovernanceEvent.objects.get(correlation_id=response["X-Request-ID"], check_name="term_list")
    assert event.decision == "blocked"


def test_a_forbidden_term_in_tool_arguments_returns_no_tool_use(client, provider_server, brand_words):
    provider_server.script([{"tool_calls": [{"id": "c1", "name": "save", "arguments": {"body": "Dear Kunde"}}]}])
    response = post(client, tools=[{"name": "save", "input_schema": {"type": "object"}}])
    message = response.json()
    assert message["stop_reason"] == "refusal"
    assert [block["type"] for block in message["content"]] == ["text"]
    assert b"Dear Kunde" not in response.content


def test_a_provider_failing_mid_stream_is_anthropic_s_error_event(client, provider_server):
    provider_server.script([{"text": "one two three four five six", "error_after": 2}])
    steps = events(post(client, stream=True))
    names = [name for name, _data in steps]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    error = next(data for name, data in steps if name == "error")
    assert error["error"]["type"] == "api_error" and error["error"]["code"] == "provider_error"
    # The text sent before the failure was not checked whole: said in the gavel member's hints.
    gavel = steps[-2][1]["gavel"]
    assert gavel["outcome"] == "allowed_with_hints" and gavel["hints"][0]["type"] == "not_checked"
