"""Node clients against a live Gavel (SPEC §11.5, §11.6, §11.9): the `openai` npm package's responses.create and
chat.completions.runTools (its Chat Completions tool helper), `@anthropic-ai/sdk`'s messages.countTokens, and
Vercel's AI SDK in its default mode (`createOpenAI({baseURL})(model)`: the Responses API). The
scripts are tests/protocols/node/*.mjs; their packages are installed from the npm registry into
tests/protocols/node/node_modules by .ci/run (`npm ci --prefix tests/protocols/node`). Skipped only
when node itself is missing."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from termlists.models import TermList

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]
NODE = Path(__file__).resolve().parent / "node"
WEATHER_CALL = {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Kiel"}}]}
BLOCKED = {"text": "Dear Kunde, the harbour woke early."}


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def run_node(live_server, configuration, make_consumer):
    assert (NODE / "node_modules").is_dir(), "run `npm ci --prefix tests/protocols/node` (.ci/run does)"
    _consumer, token = make_consumer("newsroom-app", [configuration])
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])

    def run(script: str) -> dict:
        env = {**os.environ, "GAVEL_BASE_URL": f"{live_server.url}/openai/v1", "GAVEL_TOKEN": token,
               "GAVEL_ANTHROPIC_URL": f"{live_server.url}/anthropic"}
        done = subprocess.run(["node", script], cwd=NODE, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run


def test_the_openai_npm_package_responses_create(run_node, provider_server):
    provider_server.script([{"text": "The harbour woke early."}, {"text": "The harbour woke early."}, WEATHER_CALL,
                            {"text": "It is sunny in Kiel."}, BLOCKED])
    seen = run_node("openai_responses.mjs")
    assert seen["plain"] == {"text": "The harbour woke early.", "status": "completed", "outcome": "allowed"}
    assert seen["stream"] == {"first": "response.created", "last": "response.completed",
                              "deltas": "The harbour woke early.", "outcome": "allowed"}
    assert seen["tools"] == {"name": "get_weather", "arguments": {"city": "Kiel"}, "answer": "It is sunny in Kiel."}
    assert seen["blocked"]["status"] == "incomplete" and seen["blocked"]["reason"] == "content_filter"
    assert "Say customer." in seen["blocked"]["refusal"] and seen["blocked"]["text"] == ""
    tool_turn = provider_server.chat_requests[3].body["messages"]
    assert tool_turn[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 °C."}


def test_the_ai_sdk_default_model_generates_and_streams_with_a_tool(run_node, provider_server):
    provider_server.script([WEATHER_CALL, {"text": "It is sunny in Kiel."}, {"text": "Rain tomorrow."},
                            WEATHER_CALL, {"text": "It is sunny in Kiel."}, BLOCKED, BLOCKED])
    seen = run_node("ai_sdk.mjs")
    assert seen["generate"] == {"text": "It is sunny in Kiel.", "steps": 2,
                                "toolCalls": [["get_weather", {"city": "Kiel"}]]}
    assert seen["stream"]["text"] == "It is sunny in Kiel." and seen["stream"]["steps"] == 2
    assert all(request.path.endswith("/chat/completions") for request in provider_server.chat_requests)
    assert provider_server.chat_requests[1].body["messages"][-1]["content"] == "Sunny in Kiel, 21 °C."
    # The follow-up's earlier answer came as an item reference (the SDK's default) and reached the provider.
    assert seen["followUp"]["text"] == "Rain tomorrow."
    assert "item_reference" in seen["followUp"]["inputTypes"], seen["followUp"]
    assert {"role": "assistant", "content": "It is sunny in Kiel."} in provider_server.chat_requests[2].body["messages"]
    # The AI SDK reads the refusal part as the text, and the block as its content-filter finish reason.
    blocked = seen["blocked"]
    assert blocked["finishReason"] == "content-filter"
    assert "Say customer." in blocked["text"] and "harbour woke" not in json.dumps(blocked)
    assert seen["blockedStream"]["finishReason"] == "content-filter"
    assert "Say customer." in seen["blockedStream"]["text"] and "harbour woke" not in seen["blockedStream"]["text"]


def test_the_openai_npm_package_run_tools_calls_the_function_through_gavel(run_node, provider_server):
    provider_server.script([WEATHER_CALL, {"text": "It is sunny in Kiel."}, WEATHER_CALL,
                            {"text": "It is sunny in Kiel."}, BLOCKED, BLOCKED])
    seen = run_node("openai_run_tools.mjs")
    assert seen["plain"] == {"answer": "It is sunny in Kiel.", "calls": ["Kiel"], "turns": 2, "outcome": "allowed"}
    assert seen["stream"] == {"answer": "It is sunny in Kiel.", "deltas": "It is sunny in Kiel.", "calls": ["Kiel"]}
    assert all(request.path.endswith("/chat/completions") for request in provider_server.chat_requests)
    # The helper appended the assistant's tool call and its function's result; both reached the provider.
    for turn in (1, 3):
        messages = provider_server.chat_requests[turn].body["messages"]
        assert messages[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "Sunny in Kiel, 21 °C."}
        assert messages[-2]["tool_calls"][0]["function"]["name"] == "get_weather"
    # A block ends the loop with the helper's ContentFilterFinishReasonError (no text in it, no event of that
    # turn); the message is in the body the app kept through the client's `fetch` option. No call, no text.
    for blocked in (seen["blocked"], seen["blockedStream"]):
        assert blocked["error"] == "ContentFilterFinishReasonError"
        assert "Say customer." in blocked["refusal"] and "Say customer." in blocked["gavel"]
        assert "harbour woke" not in json.dumps(blocked)
    assert seen["blocked"]["finishReason"] == "content_filter" and seen["blocked"]["content"] is None
    assert seen["blockedStream"]["events"] == "" and seen["blockedStream"]["content"] == ""


def test_the_anthropic_npm_package_counts_tokens(run_node, provider_server):
    provider_server.script([{"text": "The harbour woke early."}])
    seen = run_node("anthropic_count_tokens.mjs")
    assert 0 < seen["plain"] < seen["withTools"]
    assert seen["beta"] > seen["plain"]
    assert seen["created"] == {"text": "The harbour woke early.", "stop": "end_turn"}
    assert len(provider_server.chat_requests) == 1  # counting asked no provider
