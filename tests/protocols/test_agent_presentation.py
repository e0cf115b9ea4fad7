"""What agent clients send and how a consumer's answers are shown (SPEC §11.9), on the Responses API and
Chat Completions, through Django's test client: Codex CLI's request members taken (dropped ones said in
`checks`), namespaced function tools offered and mapped back, hosted tools not offered; a block as a
normal finished answer for a consumer with blocks_as=message; report-mode hints as a note."""
import json

import pytest

from termlists.models import TermList
from tests.protocols.test_openai_responses import typed_events

pytestmark = pytest.mark.django_db

EXEC = {"type": "function", "name": "exec_command", "description": "Runs a command.", "strict": False,
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}
NAMESPACE = {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.", "tools": [
    {"type": "function", "name": "close_agent", "strict": False,
     "parameters": {"type": "object", "properties": {"target": {"type": "string"}}}}]}
# The members Codex CLI 0.171.0 sends on every request (captured from the real CLI, issue 39).
CODEX = {
    "model": "newsroom", "tools": [EXEC, NAMESPACE, {"type": "web_search", "external_web_access": False}],
    "tool_choice": "auto", "parallel_tool_calls": True, "reasoning": {"summary": "auto"}, "store": False,
    "include": ["reasoning.encrypted_content"], "prompt_cache_key": "01a2-session",
    "client_metadata": {"thread_id": "01a2", "x-codex-turn-metadata": "{\"sandbox\": \"seccomp\"}"},
    "input": [
        {"type": "message", "id": "msg_1", "role": "developer",
         "content": [{"type": "input_text", "text": "You are a coding agent."}]},
        {"type": "message", "id": "msg_2", "role": "user", "content": [{"type": "input_text", "text": "Say hello"}]},
    ],
}
CODEX_HEADERS = {"originator": "codex_exec", "x-codex-beta-features": "remote_compaction_v2",
                 "session-id": "01a2", "x-client-request-id": "01a2", "Accept": "text/event-stream"}
DROPPED = [("client_metadata", "not_sent_to_model"), ("include", "no_reasoning_returned"),
           ("prompt_cache_key", "not_sent_to_model"), ("reasoning.summary", "no_reasoning_summaries"),
           ("tools[2]", "hosted_tool")]


def post(api, path="/openai/v1/responses", **body):
    return api.post(path, body, format="json", headers=CODEX_HEADERS)


def dropped(checks) -> list:
    return sorted((c["field"], c["reason"]) for c in checks if c.get("result") == "dropped")


@pytest.mark.parametrize("stream", [False, True])
def test_codex_s_request_is_answered_and_what_was_dropped_is_said_in_checks(api, provider_server, stream):
    provider_server.script([{"text": "Hello."}])
    response = post(api, **CODEX, stream=stream)
    assert response.status_code == 200, response.content
    final = typed_events(response)[-1]["response"] if stream else response.json()
    assert final["status"] == "completed" and final["output"][0]["content"][0]["text"] == "Hello."
    assert dropped(final["gavel"]["checks"]) == DROPPED
    assert [c for c in final["gavel"]["checks"] if c.get("field") == "tools[2]"][0]["tool"] == "web_search"
    [request] = provider_server.chat_requests
    sent = request.body
    # The namespace's function is a function tool of its own; the hosted web search is not offered.
    assert [t["function"]["name"] for t in sent["tools"]] == ["exec_command", "multi_agent_v1__close_agent"]
    assert sent["tool_choice"] == "auto" and sent["parallel_tool_calls"] is True
    assert not set(sent) & {"client_metadata", "prompt_cache_key", "include", "reasoning", "store", "metadata"}
    assert "web_search" not in json.dumps(sent) and "01a2" not in json.dumps(sent)
    assert sent["messages"] == [{"role": "system", "content": "You are a coding agent."},
                                {"role": "user", "content": "Say hello"}]


def test_a_call_to_a_namespaced_function_comes_back_under_the_names_the_client_declared(api, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "multi_agent_v1__close_agent", "arguments": {"target": "a1"}}]},
        {"tool_calls": [{"id": "call_2", "name": "multi_agent_v1__close_agent", "arguments": {"target": "a2"}}]},
        {"text": "Closed."},
    ])
    [call] = post(api, **CODEX).json()["output"]
    assert (call["type"], call["namespace"], call["name"]) == ("function_call", "multi_agent_v1", "close_agent")
    streamed = typed_events(post(api, **CODEX, stream=True))
    [done] = [e["item"] for e in streamed if e["type"] == "response.output_item.done"]
    assert (done["namespace"], done["name"], json.loads(done["arguments"])) == (
        "multi_agent_v1", "close_agent", {"target": "a2"})
    # Sent back as history (as Codex does), the call reaches the provider under the offered name.
    history = [*CODEX["input"], call, {"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}]
    assert post(api, **{**CODEX, "input": history}).status_code == 200
    assert provider_server.chat_requests[2].body["messages"][2]["tool_calls"][0]["function"]["name"] == \
        "multi_agent_v1__close_agent"


def test_a_namespaced_call_s_arguments_are_screened_like_any_tool_call(api, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "multi_agent_v1__close_agent", "arguments": {"target": "Kunde"}}]}])
    body = post(api, **CODEX).json()
    assert body["gavel"]["outcome"] == "blocked" and "not proposed" in body["gavel"]["block"]["message"]
    assert [item["type"] for item in body["output"]] == ["message"]


def blocks_as_message(consumer, hints_as="member"):
    consumer.blocks_as, consumer.hints_as = "message", hints_as
    consumer.save()


@pytest.fixture
def brand_words(configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])


@pytest.fixture
def reported(configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.",
                            mode="report").configurations.set([configuration])


def test_a_block_shown_as_a_message_is_a_completed_response_with_gavel_s_message(api, provider_server, brand_words):
    blocks_as_message(api.consumer)
    provider_server.script([{"text": "Dear Kunde, hello."}, {"text": "Dear Kunde, hello."}])
    response = post(api, model="newsroom", input="Hi.")
    body = response.json()
    assert response["X-Gavel-Outcome"] == "blocked" and body["gavel"]["outcome"] == "blocked"
    assert body["status"] == "completed" and body["incomplete_details"] is None
    [message] = body["output"]
    assert message["status"] == "completed"
    assert message["content"] == [{"type": "output_text", "text": body["gavel"]["block"]["message"],
                                   "annotations": [], "logprobs": []}]
    assert "Say customer." in message["content"][0]["text"] and "Dear Kunde" not in json.dumps(body)

    streamed = post(api, model="newsroom", input="Hi.", stream=True)
    assert streamed["X-Gavel-Outcome"] == "blocked"
    events = typed_events(streamed)
    assert events[-1]["type"] == "response.completed" and "response.incomplete" not in [e["type"] for e in events]
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    final = events[-1]["response"]
    assert deltas == [final["gavel"]["block"]["message"]] == [final["output"][0]["content"][0]["text"]]
    assert "Dear Kunde" not in json.dumps(events)


def test_a_block_stays_a_refusal_for_a_consumer_that_did_not_ask(api, provider_server, brand_words):
    provider_server.script([{"text": "Dear Kunde, hello."}])
    body = post(api, model="newsroom", input="Hi.").json()
    assert body["status"] == "incomplete" and body["output"][0]["content"][0]["type"] == "refusal"


def test_report_mode_hints_are_a_note_after_the_text_for_a_consumer_that_asked(api, provider_server, reported):
    blocks_as_message(api.consumer, hints_as="note")
    provider_server.script([{"text": "Dear Kunde, hello."}, {"text": "Dear Kunde, hello."}])
    body = post(api, model="newsroom", input="Hi.").json()
    text = body["output"][0]["content"][0]["text"]
    assert body["gavel"]["outcome"] == "allowed_with_hints"
    hint = body["gavel"]["hints"][0]["message"]
    assert text == f"Dear Kunde, hello.\n\n---\nGavel: {hint}"
    events = typed_events(post(api, model="newsroom", input="Hi.", stream=True))
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == text == events[-1]["response"]["output"][0]["content"][0]["text"]


def test_without_the_note_the_text_is_the_model_s_alone(api, provider_server, reported):
    provider_server.script([{"text": "Dear Kunde, hello."}])
    body = post(api, model="newsroom", input="Hi.").json()
    assert body["output"][0]["content"][0]["text"] == "Dear Kunde, hello." and body["gavel"]["hints"]


def chunks(response) -> list[dict]:
    raw = b"".join(response.streaming_content).decode()
    lines = [line[len("data: "):] for line in raw.split("\n\n") if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_chat_completions_show_a_block_as_a_message_and_hints_as_a_note(api, provider_server, configuration):
    blocks_as_message(api.consumer, hints_as="note")
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    TermList.objects.create(name="Style", forbidden="Mandant", message="Say client.",
                            mode="report").configurations.set([configuration])
    provider_server.script([{"text": "Dear Kunde."}, {"text": "Dear Kunde."},
                            {"text": "Dear Mandant."}, {"text": "Dear Mandant."}])
    chat = {"model": "newsroom", "messages": [{"role": "user", "content": "Hi."}]}
    response = post(api, "/openai/v1/chat/completions", **chat)
    [choice] = response.json()["choices"]
    block = response.json()["gavel"]["block"]["message"]
    assert response["X-Gavel-Outcome"] == "blocked" and choice["finish_reason"] == "stop"
    assert choice["message"]["content"] == block and choice["message"]["refusal"] is None
    streamed = chunks(post(api, "/openai/v1/chat/completions", **chat, stream=True))
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in streamed) == block
    assert streamed[-1]["choices"][0]["finish_reason"] == "stop" and streamed[-1]["gavel"]["outcome"] == "blocked"

    noted = post(api, "/openai/v1/chat/completions", **chat).json()
    hint = noted["gavel"]["hints"][0]["message"]
    assert noted["choices"][0]["message"]["content"] == f"Dear Mandant.\n\n---\nGavel: {hint}"
    streamed = chunks(post(api, "/openai/v1/chat/completions", **chat, stream=True))
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in streamed) == \
        noted["choices"][0]["message"]["content"]


def test_a_live_stream_s_hint_note_follows_the_provider_s_deltas(api, provider_server, configuration):
    """Report mode and no term list: the stream is live; the judge's hint comes at the end, and its note is
    the last text delta (Responses) or content chunk (Chat Completions)."""
    from tests.protocols.test_conformance import CLEAN, deny, judged

    judged("report")(configuration)
    blocks_as_message(api.consumer, hints_as="note")
    provider_server.script([{"for_model": "test-model", "text": CLEAN}, deny(2, "first ferries left on time")] * 2)
    events = typed_events(post(api, model="newsroom", input="Write about the harbour.", stream=True))
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    final = events[-1]["response"]
    [hint] = final["gavel"]["hints"]
    assert len(deltas) > 2 and "".join(deltas[:-1]) == CLEAN  # live: the provider's deltas as they came
    assert deltas[-1] == f"\n\n---\nGavel: {hint['message']}"
    assert final["output"][0]["content"][0]["text"] == CLEAN + deltas[-1]
    streamed = chunks(post(api, "/openai/v1/chat/completions", model="newsroom", stream=True,
                           messages=[{"role": "user", "content": "Write about the harbour."}]))
    contents = [c["choices"][0]["delta"].get("content") for c in streamed if c["choices"][0]["delta"].get("content")]
    assert len(contents) > 2 and "".join(contents) == CLEAN + f"\n\n---\nGavel: {hint['message']}"
