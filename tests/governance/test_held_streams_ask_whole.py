"""A stream Gavel holds asks the provider for the whole answer, without streaming (SPEC §8.1 timing
rule kept: nothing before screening); a live stream is still streamed from the provider. The client
sees the same events on every protocol either way (governance/runs/completions.py: open_stream)."""
import json

import pytest

from governance.models import UsageDay

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "Write about the harbour."}]
PIECES = [f"word{i} " for i in range(40)]


def held(configuration):
    configuration.rule_mode = "block"
    configuration.save()


def sse_blocks(response) -> list[tuple[str, str]]:
    assert response.status_code == 200, response.content
    raw = b"".join(response.streaming_content).decode()
    blocks = []
    for block in raw.strip("\n").split("\n\n"):
        lines = block.split("\n")
        name = lines[0].removeprefix("event: ") if lines[0].startswith("event: ") else ""
        blocks.append((name, lines[-1].removeprefix("data: ")))
    return blocks


def asked_to_stream(provider_server) -> list[bool]:
    return [bool(request.body.get("stream")) for request in provider_server.chat_requests]


def gavel_sse(api):
    return api.post("/api/v1/completions", {"configuration": "newsroom", "messages": USER, "stream": True},
                    format="json")


def chat_chunks(api):
    return api.post("/openai/v1/chat/completions", {"model": "newsroom", "messages": USER, "stream": True},
                    format="json")


def responses_events(api):
    return api.post("/openai/v1/responses", {"model": "newsroom", "input": "Write.", "stream": True}, format="json")


def anthropic_events(api, make_consumer, configuration):
    from rest_framework.test import APIClient

    _consumer, token = make_consumer("anthropic-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token, HTTP_ANTHROPIC_VERSION="2023-06-01")
    return client.post("/anthropic/v1/messages", {"model": "newsroom", "messages": USER, "max_tokens": 100,
                                                  "stream": True}, format="json")


def texts(protocol: str, blocks) -> str:
    """The answer's text as the client receives it, read per protocol."""
    found = []
    for name, data in blocks:
        if data == "[DONE]":
            continue
        event = json.loads(data)
        if protocol == "gavel" and name == "delta":
            found.append(event["text"])
        elif protocol == "chat" and event.get("choices"):
            found.append(event["choices"][0]["delta"].get("content") or "")
        elif protocol == "responses" and event["type"] == "response.output_text.delta":
            found.append(event["delta"])
        elif protocol == "anthropic" and name == "content_block_delta" and event["delta"]["type"] == "text_delta":
            found.append(event["delta"]["text"])
    return "".join(found)


def delta_count(protocol: str, blocks) -> int:
    names = {"gavel": "delta", "anthropic": "content_block_delta"}
    if protocol in names:
        return sum(1 for name, _ in blocks if name == names[protocol])
    if protocol == "responses":
        return sum(1 for _, data in blocks if '"response.output_text.delta"' in data)
    return sum(1 for _, data in blocks if data != "[DONE]" and (json.loads(data).get("choices") or [{}])[0]
               .get("delta", {}).get("content"))


PROTOCOLS = ["gavel", "chat", "responses", "anthropic"]


def ask(protocol, api, make_consumer, configuration):
    if protocol == "gavel":
        return gavel_sse(api)
    if protocol == "chat":
        return chat_chunks(api)
    if protocol == "responses":
        return responses_events(api)
    return anthropic_events(api, make_consumer, configuration)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_held_stream_asks_the_provider_without_streaming_and_sends_the_one_chunk(
        protocol, api, provider_server, configuration, make_consumer):
    held(configuration)
    provider_server.script([{"stream_chunks": PIECES}])
    blocks = sse_blocks(ask(protocol, api, make_consumer, configuration))
    assert asked_to_stream(provider_server) == [False]
    assert texts(protocol, blocks) == "".join(PIECES)
    assert delta_count(protocol, blocks) == 1  # held: the whole answer in one chunk, after the verdict


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_live_stream_is_still_streamed_from_the_provider(protocol, api, provider_server, configuration,
                                                           make_consumer):
    provider_server.script([{"stream_chunks": PIECES}])
    blocks = sse_blocks(ask(protocol, api, make_consumer, configuration))
    assert asked_to_stream(provider_server) == [True]
    assert texts(protocol, blocks) == "".join(PIECES)
    assert delta_count(protocol, blocks) > 1


def test_a_held_stream_falls_back_when_its_provider_fails_before_answering(api, provider_server, configuration,
                                                                          backup):
    held(configuration)
    provider_server.script([
        {"status": 503, "for_model": "test-model"},
        {"stream_chunks": ["From ", "the ", "backup."], "for_model": "backup-model"},
    ])
    blocks = sse_blocks(gavel_sse(api))
    assert texts("gavel", blocks) == "From the backup."
    assert json.loads(blocks[-1][1])["completion"]["provider"] == "fallback-test"
    assert [(r.model, bool(r.body.get("stream"))) for r in provider_server.chat_requests] == [
        ("test-model", False), ("backup-model", False)]


def test_a_held_stream_whose_answer_broke_off_is_not_handed_to_a_fallback(api, provider_server, configuration,
                                                                         backup):
    held(configuration)
    provider_server.script([{"stream_chunks": ["One ", "two."], "fail_after": 1, "for_model": "test-model"}])
    blocks = sse_blocks(gavel_sse(api))
    assert [name for name, _ in blocks] == ["error", "done"]
    assert json.loads(blocks[0][1])["error"]["code"] == "provider_error"
    assert [r.model for r in provider_server.chat_requests] == ["test-model"]  # the backup was never asked
    usage = UsageDay.objects.get(configuration=configuration)
    assert (usage.requests, usage.failures, usage.tokens) == (1, 1, 0)


def test_a_held_stream_counts_the_usage_a_plain_call_counts(api, provider_server, configuration):
    held(configuration)
    provider_server.script([{"stream_chunks": PIECES, "usage": {"prompt_tokens": 7, "completion_tokens": 40}}])
    done = json.loads(sse_blocks(gavel_sse(api))[-1][1])
    assert done["completion"]["usage"]["total_tokens"] == 47
    usage = UsageDay.objects.get(configuration=configuration)
    assert (usage.requests, usage.tokens, usage.failures) == (1, 47, 0)
