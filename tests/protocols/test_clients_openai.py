"""The Responses API (SPEC §11.6) through the official `openai` Python SDK against a live Gavel
(pytest-django's live_server): `responses.create` plain and streamed, a function-tool loop that
appends the SDK's own output items, a block, a refused parameter. The provider behind Gavel is
tests/provider_server.py; what is tested is the SDK's own parsing of Gavel's answers.
"""
import json

import openai
import pytest

from termlists.models import TermList

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def client(live_server, configuration, make_consumer):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    with openai.OpenAI(base_url=f"{live_server.url}/openai/v1", api_key=token, max_retries=0, timeout=30) as sdk:
        yield sdk


@pytest.fixture
def brand_words(configuration):
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.")
    term_list.configurations.set([configuration])
    return term_list


def test_responses_create_answers_with_output_text_and_a_gavel_member(client, provider_server):
    provider_server.script([{"text": "The harbour woke early.", "usage": {"prompt_tokens": 9, "completion_tokens": 5}}])
    raw = client.responses.with_raw_response.create(model="newsroom", instructions="Be brief.",
                                                    input="Write about the harbour.", max_output_tokens=50)
    response = raw.parse()
    assert response.status == "completed" and response.object == "response" and response.model == "newsroom"
    assert response.output_text == "The harbour woke early."
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (9, 5, 14)
    assert response.gavel["outcome"] == "allowed" and response.gavel["block"] is None
    assert raw.headers["X-Request-ID"] == response.gavel["id"] and response.id == f"resp_{response.gavel['id']}"
    [sent] = provider_server.chat_requests
    assert sent.body["messages"] == [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "Write about the harbour."}]
    assert sent.body["max_tokens"] == 50 and sent.body["model"] == "test-model"


def test_a_block_is_an_incomplete_response_with_a_refusal_part(client, provider_server, brand_words):
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    response = client.responses.create(model="newsroom", input="Write about the harbour.")
    assert response.status == "incomplete" and response.incomplete_details.reason == "content_filter"
    [message] = response.output
    [part] = message.content
    assert part.type == "refusal" and "Say customer." in part.refusal
    assert response.output_text == ""
    assert response.gavel["outcome"] == "blocked" and response.gavel["block"]["message"] == part.refusal
    assert "harbour woke" not in response.model_dump_json()


def test_a_streamed_response_sends_typed_events_and_ends_completed(client, provider_server):
    provider_server.script([{"text": "The harbour woke early today."}])
    with client.responses.stream(model="newsroom", input="Write about the harbour.") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") > 1  # no term list, report mode: live
    assert final.output_text == "The harbour woke early today."
    assert final.gavel["outcome"] == "allowed"


def test_a_held_stream_that_is_blocked_ends_incomplete_without_the_text(client, provider_server, brand_words):
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    stream = client.responses.create(model="newsroom", input="Write about the harbour.", stream=True)
    events = list(stream)
    assert [e.type for e in events if e.type.startswith("response.output_text")] == []
    assert events[-1].type == "response.incomplete"
    final = events[-1].response
    assert final.incomplete_details.reason == "content_filter"
    assert "Say customer." in final.output[0].content[0].refusal
    assert not any("harbour woke" in e.model_dump_json() for e in events)


def test_the_function_tool_loop_appends_the_sdk_s_own_output_items(client, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Kiel"}}]},
        {"text": "It is sunny in Kiel."},
    ])
    conversation = [{"role": "user", "content": "What is the weather in Kiel?"}]
    first = client.responses.create(model="newsroom", input=conversation, tools=[WEATHER], tool_choice="auto")
    [call] = [item for item in first.output if item.type == "function_call"]
    assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Kiel"})
    conversation += first.output  # the SDK's own objects, as its documentation's loop does
    conversation.append({"type": "function_call_output", "call_id": call.call_id, "output": "Sunny, 21 °C."})
    second = client.responses.create(model="newsroom", input=conversation, tools=[WEATHER])
    assert second.output_text == "It is sunny in Kiel."
    sent = provider_server.chat_requests[1].body
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER["parameters"]}}]
    assert sent["messages"][1]["role"] == "assistant"
    assert sent["messages"][1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": call.arguments}
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": call.call_id, "content": "Sunny, 21 °C."}


def test_json_schema_output_and_sampling_reach_the_provider(client, provider_server):
    provider_server.script([{"text": '{"headline": "Harbour wakes"}'}])
    schema = {"type": "object", "properties": {"headline": {"type": "string"}}, "required": ["headline"],
              "additionalProperties": False}
    response = client.responses.create(
        model="newsroom", input="A headline.", temperature=0.3, top_p=0.9, metadata={"app": "desk"},
        text={"format": {"type": "json_schema", "name": "headline", "schema": schema, "strict": True}})
    assert json.loads(response.output_text) == {"headline": "Harbour wakes"}
    assert response.metadata == {"app": "desk"}
    sent = provider_server.chat_requests[0].body
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "headline", "schema": schema, "strict": True}}
    assert (sent["temperature"], sent["top_p"]) == (0.3, 0.9)


@pytest.mark.parametrize("extra, param", [
    ({"previous_response_id": "resp_earlier"}, "previous_response_id"),
    ({"extra_body": {"frobnicate": True}}, "frobnicate"),
])
def test_what_gavel_cannot_honour_is_a_400_naming_it(client, provider_server, extra, param):
    body = extra.pop("extra_body", None)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="newsroom", input="Hello.", extra_body=body, **extra)
    assert caught.value.code == "unsupported_parameter"
    assert caught.value.param == param
    assert param in caught.value.message
    assert provider_server.chat_requests == []


def test_a_hosted_tool_and_a_reasoning_summary_are_dropped_and_said_in_checks(client, provider_server):
    provider_server.script([{"text": "Hello."}])
    response = client.responses.create(model="newsroom", input="Hello.", tools=[WEATHER, {"type": "web_search"}],
                                       reasoning={"summary": "auto"})
    assert response.output_text == "Hello."
    assert sorted((c["field"], c["reason"]) for c in response.gavel["checks"] if c.get("result") == "dropped") == [
        ("reasoning.summary", "no_reasoning_summaries"), ("tools[1]", "hosted_tool")]
    assert [tool["function"]["name"] for tool in provider_server.chat_requests[0].body["tools"]] == ["get_weather"]


def test_get_final_response_returns_a_block_shown_as_a_message(client, provider_server, brand_words):
    consumer = brand_words.configurations.get().consumers.get()
    consumer.blocks_as = "message"
    consumer.save()
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    with client.responses.stream(model="newsroom", input="Write about the harbour.") as stream:
        final = stream.get_final_response()
    assert final.status == "completed" and final.gavel["outcome"] == "blocked"
    assert final.output_text == final.gavel["block"]["message"] and "Say customer." in final.output_text


def test_a_refusal_block_s_stream_ends_incomplete_whose_response_the_docs_say_to_read(client, provider_server,
                                                                                      brand_words):
    """docs/openai.md: with blocks shown as a refusal, the stream's last event is response.incomplete
    (get_final_response raises, as it does for OpenAI's own incomplete responses): read that event."""
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    with client.responses.stream(model="newsroom", input="Write about the harbour.") as stream:
        last = None
        for event in stream:
            last = event
        with pytest.raises(RuntimeError):
            stream.get_final_response()
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details.reason == "content_filter"
    assert "Say customer." in last.response.output[0].content[0].refusal
