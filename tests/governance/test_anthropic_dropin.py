"""The Anthropic Messages API (SPEC §11.7) through the official `anthropic` Python SDK against a live Gavel
(pytest-django's live_server). The provider behind Gavel is tests/provider_server.py (an OpenAI-route
provider: litellm translates), which records every request body. No Django test client here: what is
tested is the SDK's own parsing of Gavel's answers.
"""
import json

import anthropic
import httpx
import pytest

from termlists.models import TermList

pytestmark = pytest.mark.django_db(transaction=True)

USER = [{"role": "user", "content": "Write about the harbour."}]
SEARCH_TOOL = {"name": "search", "description": "Search the archive.",
               "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}}
FORBIDDEN_ANSWER = "Dear Kunde, the harbour woke early."


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def gavel(live_server, configuration, make_consumer):
    _consumer, token = make_consumer("newsroom-app", [configuration])

    class Gavel:
        url = live_server.url
        base_url = f"{live_server.url}/anthropic"

    Gavel.token = token
    return Gavel


@pytest.fixture
def client(gavel):
    with anthropic.Anthropic(base_url=gavel.base_url, api_key=gavel.token, max_retries=0, timeout=30) as sdk:
        yield sdk


@pytest.fixture
def brand_words(configuration):
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.")
    term_list.configurations.set([configuration])
    return term_list


def ask(client, **kwargs):
    kwargs.setdefault("model", "newsroom")
    kwargs.setdefault("messages", USER)
    kwargs.setdefault("max_tokens", 200)
    return client.messages.create(**kwargs)


def test_plain_message_with_system_and_the_gavel_member(client, provider_server):
    provider_server.script([{"text": "The harbour opens at six.", "usage": {"prompt_tokens": 7,
                                                                            "completion_tokens": 6}}])
    # The SDK of 2026 has no keyword for temperature and top_p (newer models take none); older clients send them.
    message = ask(client, system="Answer in one line.", stop_sequences=["END"], metadata={"user_id": "reader-7"},
                  extra_body={"temperature": 0.5, "top_p": 0.9})
    assert message.type == "message" and message.role == "assistant" and message.model == "newsroom"
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == "The harbour opens at six."
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 6)
    assert message.gavel["outcome"] == "allowed" and message.gavel["block"] is None
    sent = provider_server.chat_requests[-1].body
    assert sent["messages"] == [{"role": "system", "content": "Answer in one line."}, USER[0]]
    assert sent["max_tokens"] == 200 and sent["temperature"] == 0.5 and sent["top_p"] == 0.9
    assert sent["stop"] == ["END"] and sent["user"] == "reader-7"


def test_the_v1_messages_path_and_bearer_auth_work_too(gavel, provider_server):
    with anthropic.Anthropic(base_url=gavel.url, auth_token=gavel.token, max_retries=0, timeout=30) as sdk:
        message = ask(sdk)
    assert message.content[0].text == "OK"


def test_the_stream_helper_gets_text_events_and_the_final_message(client, provider_server):
    provider_server.script([{"text": "The harbour opens at six.", "usage": {"prompt_tokens": 7,
                                                                            "completion_tokens": 6}}])
    with client.messages.stream(model="newsroom", max_tokens=200, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == "The harbour opens at six." and len(pieces) > 1  # live: word by word
    assert final.content[0].text == "The harbour opens at six." and final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 6
    assert provider_server.chat_requests[-1].body["stream"] is True


def test_a_tool_loop_appends_the_sdk_s_own_content_blocks(client, provider_server):
    provider_server.script([
        {"text": "Let me look.", "tool_calls": [{"id": "call_1", "name": "search", "arguments": {"q": "harbour"}}]},
        {"text": "The harbour opens at six."},
    ])
    messages = list(USER)
    first = ask(client, messages=messages, tools=[SEARCH_TOOL], tool_choice={"type": "auto"})
    assert first.stop_reason == "tool_use"
    use = next(block for block in first.content if block.type == "tool_use")
    assert (use.id, use.name, use.input) == ("call_1", "search", {"q": "harbour"})
    messages.append({"role": "assistant", "content": first.content})  # the SDK's own blocks, as its docs do
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": use.id, "content": "Opens at six."}]})
    second = ask(client, messages=messages, tools=[SEARCH_TOOL])
    assert second.content[0].text == "The harbour opens at six." and second.stop_reason == "end_turn"
    sent = provider_server.chat_requests[-1].body
    assert sent["tools"][0]["function"]["name"] == "search"
    assert sent["tools"][0]["function"]["parameters"] == SEARCH_TOOL["input_schema"]
    history = sent["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[1]["content"] == "Let me look."
    assert history[1]["tool_calls"][0]["id"] == "call_1"
    assert json.loads(history[1]["tool_calls"][0]["function"]["arguments"]) == {"q": "harbour"}
    assert history[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Opens at six."}


def test_a_streamed_tool_use_arrives_through_the_stream_helper(client, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "search", "arguments": {"q": "harbour"}}]}])
    with client.messages.stream(model="newsroom", max_tokens=200, messages=USER, tools=[SEARCH_TOOL]) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert [(b.type, b.name, b.input) for b in final.content] == [("tool_use", "search", {"q": "harbour"})]


def test_a_blocked_answer_is_a_refusal_whose_message_the_app_reads(client, provider_server, brand_words):
    provider_server.script([{"text": FORBIDDEN_ANSWER}])
    message = ask(client)
    assert message.stop_reason == "refusal"
    assert message.content[0].text == message.gavel["block"]["message"]
    assert "Say customer." in message.content[0].text
    assert message.gavel["outcome"] == "blocked"
    assert "Dear Kunde" not in message.model_dump_json()


def test_a_blocked_held_stream_sends_only_the_refusal(gavel, client, provider_server, brand_words):
    provider_server.script([{"text": FORBIDDEN_ANSWER}])
    with client.messages.stream(model="newsroom", max_tokens=200, messages=USER) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "refusal" and "Say customer." in final.content[0].text
    provider_server.script([{"text": FORBIDDEN_ANSWER}])
    raw = httpx.post(f"{gavel.url}/v1/messages", headers={"x-api-key": gavel.token, "anthropic-version": "2023-06-01"},
                     json={"model": "newsroom", "max_tokens": 50, "messages": USER, "stream": True}, timeout=30)
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/event-stream")
    assert "Kunde," not in raw.text and "woke early" not in raw.text
    assert '"stop_reason": "refusal"' in raw.text and '"gavel"' in raw.text


def test_errors_are_the_sdk_s_own_exceptions(gavel, client, provider_server):
    with anthropic.Anthropic(base_url=gavel.base_url, api_key="not-a-token", max_retries=0, timeout=30) as sdk:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            ask(sdk)
    assert caught.value.body["error"]["type"] == "authentication_error"
    with pytest.raises(anthropic.NotFoundError):
        ask(client, model="no-such-configuration")
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, extra_body={"top_k": 5})  # the OpenAI route behind `newsroom` takes no top_k: refused, naming it
    assert caught.value.body["error"]["param"] == "top_k" and "top_k" in caught.value.message
    with pytest.raises(anthropic.BadRequestError) as caught:
        ask(client, tools=[{"type": "web_search_20250305", "name": "web_search"}])
    assert caught.value.body["error"]["param"] == "tools[0].type"
    assert provider_server.chat_requests == []


def test_models_lists_the_granted_configurations(client, configuration):
    models = client.models.list()
    assert [model.id for model in models.data] == ["newsroom"]
    assert client.models.retrieve("newsroom").id == "newsroom"


def test_count_tokens_counts_with_litellm_for_the_configuration_s_model(gavel, client, provider_server, configuration):
    plain = client.messages.count_tokens(model="newsroom", messages=USER)
    assert plain.input_tokens > 0
    more = client.messages.count_tokens(model="newsroom", messages=USER, system="Answer in one line.",
                                        tools=[SEARCH_TOOL])
    assert more.input_tokens > plain.input_tokens
    # Claude Code's way: the beta resource (`?beta=true`), deferred tools and a system turn taken as on messages.
    beta = client.beta.messages.count_tokens(
        model="newsroom", messages=[*USER, {"role": "assistant", "content": "Hi."}], betas=["claude-code-20250219"],
        tools=[SEARCH_TOOL, {**SEARCH_TOOL, "name": "later", "defer_loading": True}])
    assert beta.input_tokens > 0
    with anthropic.Anthropic(base_url=gavel.url, api_key=gavel.token, max_retries=0, timeout=30) as sdk:
        assert sdk.messages.count_tokens(model="newsroom", messages=USER).input_tokens == plain.input_tokens
    assert provider_server.requests == []  # counted in Gavel, no provider asked


def test_count_tokens_is_authorised_as_messages(gavel, client, make_consumer, configuration):
    with anthropic.Anthropic(base_url=gavel.base_url, api_key="not-a-token", max_retries=0, timeout=30) as sdk:
        with pytest.raises(anthropic.AuthenticationError):
            sdk.messages.count_tokens(model="newsroom", messages=USER)
    _other, token = make_consumer("elsewhere-app", [])
    with anthropic.Anthropic(base_url=gavel.base_url, api_key=token, max_retries=0, timeout=30) as sdk:
        with pytest.raises(anthropic.PermissionDeniedError):
            sdk.messages.count_tokens(model="newsroom", messages=USER)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.count_tokens(model="no-such-configuration", messages=USER)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.count_tokens(model="newsroom", messages=[])
    assert caught.value.body["error"]["param"] == "messages"
