"""Chat Completions without gaps (SPEC §11.5, §11.8): every listed parameter reaches the provider
(tests/provider_server.py records each body) or is refused with 400 naming it; legacy function calling
is translated both ways; the openai SDK's helper message objects (`.parse()`, `.stream()`) are accepted
back as history, appended the way its docs do.
"""
import json

import openai
import pydantic
import pytest
from rest_framework.test import APIClient

USER = [{"role": "user", "content": "Write about the harbour."}]
SEARCH_TOOL = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
LEGACY_SEARCH = {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}

# Each §11.5 parameter a client may send (besides model and messages), with the value sent, and what
# the provider must be sent (None: accepted, not sent on, because it does not change the answer).
REACHES = {
    "temperature": (0.4, 0.4),
    "top_p": (0.9, 0.9),
    "max_tokens": (120, 120),
    "stop": (["END"], ["END"]),
    "seed": (3, 3),
    "presence_penalty": (0.5, 0.5),
    "frequency_penalty": (-0.5, -0.5),
    "logit_bias": ({"1734": -100}, {"1734": -100}),
    "response_format": ({"type": "json_object"}, {"type": "json_object"}),
    "user": ("desk-7", "desk-7"),
    "reasoning_effort": ("low", "low"),
    "service_tier": ("flex", "flex"),
    "prediction": ({"type": "content", "content": "The harbour"}, {"type": "content", "content": "The harbour"}),
    "logprobs": (False, None),
    "top_logprobs": (0, None),
    "modalities": (["text"], None),
    "metadata": ({"desk": "harbour"}, None),
    "store": (True, None),
    "stream_options": ({"include_usage": True}, None),
    "n": (1, None),
}
WITH_TOOLS = {"tool_choice": ("required", "required"), "parallel_tool_calls": (False, False)}
REFUSED = {
    "n": 2,
    "logprobs": True,
    "top_logprobs": 3,
    "modalities": ["text", "audio"],
    "audio": {"voice": "alloy", "format": "wav"},
    "verbosity": "low",  # the OpenAI route of litellm 1.110.2 does not send it: refused, never dropped
}


@pytest.fixture
def api(db, configuration, make_consumer):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def chat(api, **body):
    body.setdefault("model", "newsroom")
    body.setdefault("messages", USER)
    return api.post("/openai/v1/chat/completions", body, format="json")


@pytest.mark.parametrize("name", sorted(REACHES))
def test_each_parameter_reaches_the_provider_or_is_kept_by_gavel(api, provider_server, name):
    value, expected = REACHES[name]
    response = chat(api, **{name: value})
    assert response.status_code == 200, response.content
    sent = provider_server.chat_requests[-1].body
    if expected is None:
        assert name not in sent or name == "n" and sent[name] == 1
    else:
        assert sent[name] == expected


@pytest.mark.parametrize("name", sorted(WITH_TOOLS))
def test_each_tool_parameter_reaches_the_provider_with_the_tools(api, provider_server, name):
    value, expected = WITH_TOOLS[name]
    assert chat(api, tools=[SEARCH_TOOL], **{name: value}).status_code == 200
    assert provider_server.chat_requests[-1].body[name] == expected


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("stream", [False, True])
def test_each_parameter_gavel_cannot_honour_is_refused_naming_it(api, provider_server, name, stream):
    response = chat(api, stream=stream, **{name: REFUSED[name]})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["param"] == name and error["code"] == "unsupported_parameter" and name in error["message"]
    assert provider_server.chat_requests == []


# --- legacy function calling ---
def test_legacy_functions_are_tools_and_the_call_comes_back_as_function_call(api, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "search", "arguments": {"q": "harbour"}}]}])
    response = chat(api, functions=[LEGACY_SEARCH], function_call={"name": "search"})
    assert response.status_code == 200, response.content
    sent = provider_server.chat_requests[-1].body
    assert sent["tools"] == [{"type": "function", "function": LEGACY_SEARCH}]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "search"}}
    assert sent["parallel_tool_calls"] is False and "functions" not in sent and "function_call" not in sent
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "function_call" and "tool_calls" not in choice["message"]
    assert choice["message"]["function_call"] == {"name": "search", "arguments": '{"q": "harbour"}'}


def test_a_streamed_legacy_call_is_a_function_call_delta(api, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "search", "arguments": {"q": "x"}}]}])
    response = chat(api, functions=[LEGACY_SEARCH], function_call="auto", stream=True)
    lines = [line[len("data: "):] for line in b"".join(response.streaming_content).decode().split("\n\n")
             if line.startswith("data: {")]
    chunks = [json.loads(line) for line in lines]
    deltas = [chunk["choices"][0]["delta"] for chunk in chunks]
    assert {"name": "search", "arguments": '{"q": "x"}'} in [d.get("function_call") for d in deltas]
    assert not any("tool_calls" in d for d in deltas)
    assert chunks[-1]["choices"][0]["finish_reason"] == "function_call"
    assert provider_server.chat_requests[-1].body["tool_choice"] == "auto"


def test_a_forbidden_term_in_a_legacy_call_s_arguments_is_screened(api, provider_server, configuration):
    from termlists.models import TermList

    TermList.objects.create(name="Brand", forbidden="Kunde", message="Say customer.").configurations.set([configuration])
    provider_server.script([{"tool_calls": [{"id": "c", "name": "search", "arguments": {"q": "Kunde"}}]}])
    response = chat(api, functions=[LEGACY_SEARCH])
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "content_filter" and "function_call" not in choice["message"]
    # The block's message names the term; the proposed call's arguments appear nowhere.
    assert b'\\"q\\"' not in response.content and b'"q":' not in response.content


@pytest.mark.parametrize(("body", "param"), [
    ({"functions": [LEGACY_SEARCH], "tools": [SEARCH_TOOL]}, "functions"),
    ({"function_call": "auto"}, "functions"),
    ({"functions": [{"description": "no name"}]}, "functions[0]"),
    ({"functions": [LEGACY_SEARCH], "function_call": 3}, "function_call"),
])
def test_bad_legacy_functions_are_refused_naming_them(api, provider_server, body, param):
    response = chat(api, **body)
    assert response.status_code == 400 and response.json()["error"]["param"] == param
    assert provider_server.chat_requests == []


# --- the SDK helpers' message objects, appended as history (real client, live Gavel) ---
class Headline(pydantic.BaseModel):
    headline: str


class Search(pydantic.BaseModel):
    q: str


@pytest.fixture
def sdk(live_server, configuration, make_consumer):
    from judging.llm.loader import _litellm

    _litellm()  # imported before the client's timeout starts
    _consumer, token = make_consumer("sdk-app", [configuration])
    with openai.OpenAI(base_url=f"{live_server.url}/openai/v1", api_key=token, max_retries=0, timeout=30) as client:
        yield client


@pytest.mark.django_db(transaction=True)
def test_the_message_of_parse_is_accepted_back_as_history(sdk, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "Search", "arguments": {"q": "harbour"}}]},
        {"text": '{"headline": "Harbour opens"}'},
        {"text": "Done."},
    ])
    messages = list(USER)
    first = sdk.chat.completions.parse(model="newsroom", messages=messages, tools=[openai.pydantic_function_tool(Search)])
    message = first.choices[0].message
    assert message.tool_calls[0].function.parsed_arguments == Search(q="harbour")
    messages.append(message)  # the SDK's own ParsedChatCompletionMessage, as its docs do
    messages.append({"role": "tool", "tool_call_id": "call_1", "content": "Opens at six."})
    second = sdk.chat.completions.parse(model="newsroom", messages=messages, response_format=Headline)
    assert second.choices[0].message.parsed == Headline(headline="Harbour opens")
    messages.append(second.choices[0].message)  # carries `parsed`
    messages.append({"role": "user", "content": "Thanks."})
    third = sdk.chat.completions.create(model="newsroom", messages=messages)
    assert third.choices[0].message.content == "Done."
    history = provider_server.chat_requests[-1].body["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant", "user"]
    assert history[1]["tool_calls"][0]["function"] == {"name": "Search", "arguments": '{"q": "harbour"}'}
    assert history[3]["content"] == '{"headline": "Harbour opens"}'
    assert "parsed" not in json.dumps(history)  # the helpers' members never reach the model


@pytest.mark.django_db(transaction=True)
def test_the_message_of_the_stream_helper_is_accepted_back_as_history(sdk, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "Search", "arguments": {"q": "harbour"}}]},
        {"text": "The harbour opens at six."},
    ])
    messages = list(USER)
    with sdk.chat.completions.stream(model="newsroom", messages=messages,
                                     tools=[openai.pydantic_function_tool(Search)]) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.tool_calls[0].function.parsed_arguments == Search(q="harbour")
    assert message.tool_calls[0].index == 0
    messages.append(message)  # carries tool_calls[].index and function.parsed_arguments
    messages.append({"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "Opens at six."})
    with sdk.chat.completions.stream(model="newsroom", messages=messages) as stream:
        text = "".join(event.delta for event in stream if event.type == "content.delta")
    assert text == "The harbour opens at six."
    history = provider_server.chat_requests[-1].body["messages"]
    assert history[1]["tool_calls"] == [{"id": "call_1", "type": "function",
                                         "function": {"name": "Search", "arguments": '{"q": "harbour"}'}}]
