"""judging/llm/ (the litellm door) through litellm's real HTTP path, against the fake provider.

No Django and no database: plain data in, plain data out. Every call goes to
127.0.0.1; the fake server records what it received.
"""

from __future__ import annotations

import json
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from judging import llm
from judging.llm import calls, loader
from judging.llm import ModelTarget, ProviderError
from tests.provider_fixtures import provider_server  # noqa: F401 - a fixture
from tests.provider_server import unused_port

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Say hello."},
]
DUMMY_KEY = "sk-test-dummy-key-0123456789"
JUDGE_CRITERIA = {"allow": "no violation", "deny": "the rule is violated", "pass": "cannot decide"}


def target(server, **overrides) -> ModelTarget:
    values = {
        "route": "openai",
        "model": "gavel-test-model",
        "api_base": server.base_url,
        "api_key": DUMMY_KEY,
        "timeout": 5.0,
        "price_in_per_mtok": 2.0,
        "price_out_per_mtok": 10.0,
    }
    values.update(overrides)
    return ModelTarget(**values)


def raised(call) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        call()
    return info.value


# -- completions ---------------------------------------------------------------
def test_complete_returns_text_usage_and_cost_from_the_targets_prices(provider_server):
    provider_server.script([{"text": "Hello there.", "usage": {"prompt_tokens": 1000, "completion_tokens": 200}}])

    reply = llm.complete(target(provider_server), MESSAGES, temperature=0, max_tokens=50)

    assert reply.text == "Hello there."
    assert reply.tool_calls == []
    assert reply.usage == {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    assert reply.usage_estimated is False
    assert reply.cost == pytest.approx((1000 * 2.0 + 200 * 10.0) / 1_000_000)
    assert reply.model == "gavel-test-model"
    assert reply.raw_finish_reason == "stop"
    [request] = provider_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gavel-test-model"
    assert request.body["messages"] == MESSAGES
    assert request.body["temperature"] == 0
    assert request.body["max_tokens"] == 50
    assert request.headers["authorization"] == f"Bearer {DUMMY_KEY}"


def test_cost_falls_back_to_litellms_local_price_map(provider_server):
    provider_server.script([{"text": "Hi.", "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0}}])

    priced = llm.complete(target(provider_server, model="gpt-4o", price_in_per_mtok=None, price_out_per_mtok=None),
                          MESSAGES)

    assert priced.cost > 0  # gpt-4o is in the price map shipped with litellm


def test_an_unpriced_model_costs_nothing_instead_of_failing(provider_server):
    reply = llm.complete(
        target(provider_server, model="nobody-prices-this-1", price_in_per_mtok=None, price_out_per_mtok=None),
        MESSAGES,
    )

    assert reply.text == "OK"
    assert reply.cost == 0.0


def test_response_format_reaches_the_provider(provider_server):
    schema = {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"violations": {"type": "array", "items": {"type": "object"}}},
                "required": ["violations"],
                "additionalProperties": False,
            },
        },
    }
    provider_server.script([{"text": '{"violations": []}'}])

    reply = llm.complete(target(provider_server), MESSAGES, temperature=0, response_format=schema)

    assert json.loads(reply.text) == {"violations": []}
    assert provider_server.last_request.body["response_format"] == schema


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "save_page",
            "description": "Save a page.",
            "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
        },
    }
]


def test_tool_calls_come_back_with_string_arguments(provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_a", "name": "save_page", "arguments": {"title": "Home"}}]}])

    reply = llm.complete(target(provider_server), MESSAGES, tools=TOOLS)

    assert reply.tool_calls == [{"id": "call_a", "name": "save_page", "arguments": '{"title": "Home"}'}]
    assert reply.raw_finish_reason == "tool_calls"
    assert provider_server.last_request.body["tools"] == TOOLS


# -- streams ---------------------------------------------------------------------
def test_stream_yields_deltas_in_order_then_usage_and_cost(provider_server):
    provider_server.script(
        [{"stream_chunks": ["Hel", "lo ", "there", "."], "usage": {"prompt_tokens": 40, "completion_tokens": 4}}]
    )

    handle = llm.stream(target(provider_server), MESSAGES)
    assert handle.reply is None
    deltas = list(handle)

    assert deltas == ["Hel", "lo ", "there", "."]
    assert handle.reply.text == "Hello there."
    assert handle.reply.usage == {"prompt_tokens": 40, "completion_tokens": 4, "total_tokens": 44}
    assert handle.reply.usage_estimated is False
    assert handle.reply.cost == pytest.approx((40 * 2.0 + 4 * 10.0) / 1_000_000)
    assert handle.reply.raw_finish_reason == "stop"
    request = provider_server.last_request
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}


def test_a_stream_whose_provider_sends_no_usage_still_has_usage_and_cost(provider_server):
    provider_server.script([{"text": "Counted here, not by the provider.", "omit_usage": True}])

    reply = llm.stream(target(provider_server), MESSAGES).read_all()

    assert reply.text == "Counted here, not by the provider."
    assert reply.usage["prompt_tokens"] > 0
    assert reply.usage["completion_tokens"] > 0
    assert reply.cost > 0


def test_a_stream_without_any_usage_is_counted_with_the_token_counter(provider_server):
    # litellm itself fills usage in for OpenAI-style streams; this is the net
    # under it, for routes where nothing does.
    def chunk(content=None, finish_reason=None):
        delta = SimpleNamespace(content=content, tool_calls=None)
        return SimpleNamespace(model="m", usage=None,
                               choices=[SimpleNamespace(delta=delta, finish_reason=finish_reason)])

    chunks = [chunk("Counted "), chunk("locally."), chunk(finish_reason="stop")]
    handle = llm.StreamHandle(loader._litellm(), target(provider_server), MESSAGES, iter(chunks), time.monotonic())

    reply = handle.read_all()

    assert reply.text == "Counted locally."
    assert reply.usage_estimated is True
    assert reply.usage["prompt_tokens"] > 0 and reply.usage["completion_tokens"] > 0
    assert reply.cost == pytest.approx(
        (reply.usage["prompt_tokens"] * 2.0 + reply.usage["completion_tokens"] * 10.0) / 1_000_000
    )


def test_stream_assembles_tool_calls_at_the_end(provider_server):
    provider_server.script(
        [{"text": "Saving.", "tool_calls": [{"id": "call_b", "name": "save_page", "arguments": {"title": "Über uns"}}]}]
    )

    handle = llm.stream(target(provider_server), MESSAGES, tools=TOOLS)
    deltas = list(handle)

    assert "".join(deltas) == "Saving."
    [call] = handle.reply.tool_calls
    assert call["id"] == "call_b" and call["name"] == "save_page"
    assert json.loads(call["arguments"]) == {"title": "Über uns"}


def test_an_error_before_the_stream_starts_is_raised_by_stream(provider_server):
    provider_server.script([{"status": 503}])

    error = raised(lambda: llm.stream(target(provider_server), MESSAGES))

    assert error.retryable and error.status == 503
    assert error.after_first_chunk is False


def test_a_connection_dropped_after_the_first_chunk_is_a_provider_error(provider_server):
    provider_server.script([{"stream_chunks": ["one ", "two ", "three ", "four"], "fail_after": 2}])
    handle = llm.stream(target(provider_server), MESSAGES)
    received = []

    def consume():
        for delta in handle:
            received.append(delta)

    error = raised(consume)

    assert received == ["one ", "two "]
    assert error.after_first_chunk is True
    assert error.kind == "connection"
    assert handle.reply is None


def test_an_error_event_mid_stream_is_a_provider_error(provider_server):
    provider_server.script([{"stream_chunks": ["one ", "two "], "error_after": 1}])
    handle = llm.stream(target(provider_server), MESSAGES)
    received = []

    def consume():
        for delta in handle:
            received.append(delta)

    error = raised(consume)

    assert received == ["one "]
    assert error.after_first_chunk is True
    assert "after the first chunk" in error.reason


# -- failures and their classification -------------------------------------------
def test_a_timeout_is_honoured_once_without_retries(provider_server):
    provider_server.script([{"delay": 3.0, "text": "too late"}])
    loader._litellm()  # imported before the clock starts: run alone, the import is seconds of it
    started = time.monotonic()

    error = raised(lambda: llm.complete(target(provider_server, timeout=1.0), MESSAGES))

    elapsed = time.monotonic() - started
    assert error.timeout is True
    assert error.retryable is True
    assert error.kind == "timeout"
    assert elapsed < 2.5, f"took {elapsed:.2f}s: a retry or a longer timeout happened"
    assert len(provider_server.chat_requests) == 1


def test_calls_with_the_time_their_chain_has_left_share_one_client_and_never_wait_longer(provider_server):
    """A judge's timeout is what its chain has left: a new float each call. litellm keeps a client
    (and a connection pool) per timeout, so each such call used to open a client and a connection of
    its own. Rounded down to the second, they share one, and none waits longer than it was given."""
    litellm = loader._litellm()
    litellm.in_memory_llm_clients_cache.flush_cache()
    provider_server.script([{"text": "Fine."}] * 6)

    for left in (19.93, 19.71, 19.4, 19.18, 19.02, 19.0):
        assert llm.complete(target(provider_server, timeout=left), MESSAGES).text == "Fine."

    assert len(litellm.in_memory_llm_clients_cache.cache_dict) == 1
    assert [calls._client_timeout(s) for s in (19.99, 2.0, 1.99, 0.35)] == [19.0, 2.0, 1.99, 0.35]


@pytest.mark.parametrize(
    ("status", "retryable", "kind"),
    [
        (503, True, "server_error"),
        (500, True, "server_error"),
        (502, True, "server_error"),
        (429, True, "rate_limited"),
        (400, False, "bad_request"),
        (401, False, "unauthorized"),
        (403, False, "forbidden"),
        (404, False, "not_found"),
        (422, False, "unprocessable"),
    ],
)
def test_http_errors_are_classified(provider_server, status, retryable, kind):
    provider_server.script([{"status": status}])

    error = raised(lambda: llm.complete(target(provider_server), MESSAGES))

    assert error.status == status
    assert error.retryable is retryable
    assert error.kind == kind
    assert error.timeout is False
    assert len(provider_server.chat_requests) == 1  # max_retries=0: asked exactly once


def test_connection_refused_is_retryable():
    closed = ModelTarget("openai", "gavel-test-model", f"http://127.0.0.1:{unused_port()}/v1", DUMMY_KEY, 5.0,
                         None, None)

    error = raised(lambda: llm.complete(closed, MESSAGES))

    assert error.retryable is True
    assert error.kind == "connection"
    assert error.status is None
    assert error.timeout is False


def test_a_connection_closed_without_an_answer_is_retryable(provider_server):
    provider_server.script([{"drop": True}])

    error = raised(lambda: llm.complete(target(provider_server), MESSAGES))

    assert error.retryable is True and error.kind == "connection"


def test_errors_hold_no_credentials_and_survive_pickling(provider_server):
    leaked = {"error": {"message": f"Incorrect API key provided: {DUMMY_KEY}", "type": "invalid_request_error"}}
    provider_server.script([{"status": 401, "body": leaked}])

    error = raised(lambda: llm.complete(target(provider_server), MESSAGES))

    assert DUMMY_KEY not in error.reason
    assert DUMMY_KEY not in error.detail
    assert DUMMY_KEY not in str(error)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.kind, copy.status, copy.retryable, copy.reason) == (error.kind, 401, False, error.reason)


# -- decisions (System One) ------------------------------------------------------
def decision_questions() -> dict:
    return {
        "rule_1": {"type": "choice", "instructions": "Never name a price.", "criteria": JUDGE_CRITERIA},
        "rule_2": {"type": "choice", "instructions": "Address the reader formally.", "criteria": JUDGE_CRITERIA},
    }


def test_decide_sends_the_system_one_shape_and_returns_the_answers(provider_server):
    provider_server.script(
        [
            {
                "decision": {
                    "answers": {
                        "rule_1": {"type": "choice", "choice": "deny", "confidence": 0.96,
                                   "probabilities": {"allow": 0.03, "deny": 0.96, "pass": 0.01}},
                        "rule_2": {"type": "choice", "choice": "allow", "confidence": 0.91,
                                   "probabilities": {"allow": 0.91, "deny": 0.04, "pass": 0.05}},
                    }
                },
                "usage": {"input_tokens": 120, "output_tokens": 2},
            }
        ]
    )
    judge = target(provider_server, route="hosted_vllm", model="decider-1")

    reply = llm.decide(judge, decision_questions(), {"text": "Only 5 EUR today!"})

    assert reply.answers["rule_1"]["choice"] == "deny"
    assert reply.answers["rule_1"]["confidence"] == 0.96
    assert reply.answers["rule_1"]["probabilities"] == {"allow": 0.03, "deny": 0.96, "pass": 0.01}
    assert reply.answers["rule_2"]["choice"] == "allow"
    assert reply.usage == {"prompt_tokens": 120, "completion_tokens": 2, "total_tokens": 122}
    assert reply.cost == pytest.approx((120 * 2.0 + 2 * 10.0) / 1_000_000)
    [request] = provider_server.requests
    assert request.path == "/v1/systemone"
    assert request.body["model"] == "decider-1"
    assert request.body["state"] == {"text": "Only 5 EUR today!"}
    assert request.body["questions"]["rule_1"] == {
        "type": "choice",
        "instructions": "Never name a price.",
        "criteria": JUDGE_CRITERIA,
    }


@pytest.fixture
def connections(monkeypatch):
    """Every address looked up or connected to during the test, as (host, port)."""
    seen = []
    original_connect = socket.socket.connect
    original_lookup = socket.getaddrinfo

    def connect(sock, address):
        seen.append(tuple(address[:2]))
        return original_connect(sock, address)

    def lookup(host, port, *args, **kwargs):
        seen.append((host, port))
        return original_lookup(host, port, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return seen


def test_decide_on_an_ollama_route_contacts_only_its_api_base(provider_server, connections):
    judge = target(provider_server, route="ollama", model="local-decider", price_in_per_mtok=None,
                   price_out_per_mtok=None)

    reply = llm.decide(judge, decision_questions(), "text under review")

    assert set(reply.answers) == {"rule_1", "rule_2"}
    assert reply.cost == 0.0
    # Left alone, litellm asks Ollama's default host (localhost:11434) about an
    # unmapped model while pricing the answer.
    assert set(connections) <= {("127.0.0.1", provider_server.port)}
    assert [request.path for request in provider_server.requests] == ["/v1/systemone"]


def test_calls_contact_nothing_but_the_api_base(provider_server, connections):
    chat = target(provider_server, model="meta-llama/Llama-3-8b-instruct", price_in_per_mtok=None,
                  price_out_per_mtok=None)
    provider_server.script([{"text": "streamed without usage", "omit_usage": True}])

    llm.complete(chat, MESSAGES)
    llm.stream(chat, MESSAGES).read_all()  # counts tokens locally: no tokenizer download
    llm.token_count("meta-llama/Llama-3-8b-instruct", MESSAGES)

    # A stray destination is always a new connection (a pooled one is to the
    # server), so it shows up here; pooled requests show up at the server.
    assert set(connections) <= {("127.0.0.1", provider_server.port)}
    assert len(provider_server.chat_requests) == 2


def test_an_answer_litellm_cannot_parse_is_unusable_not_retryable(provider_server):
    provider_server.script(
        [{"decision": {"answers": {"rule_1": {"type": "choice", "choice": "allow", "probabilities": {"allow": 1.0}}}}}]
    )
    judge = target(provider_server, route="hosted_vllm", model="decider-1")

    error = raised(lambda: llm.decide(judge, decision_questions(), "text"))

    assert error.kind == "unusable_response"
    assert error.retryable is False


def test_a_decision_timeout_is_honoured_once(provider_server):
    provider_server.script([{"delay": 3.0, "decision": {"choice": "allow", "confidence": 0.99}}])
    judge = target(provider_server, route="hosted_vllm", model="decider-1", timeout=1.0)
    loader._litellm()  # imported before the clock starts: run alone, the import is seconds of it
    started = time.monotonic()

    error = raised(lambda: llm.decide(judge, decision_questions(), "text"))

    assert error.timeout is True and error.retryable is True
    assert time.monotonic() - started < 2.5
    assert len(provider_server.decision_requests) == 1


def test_a_failing_decision_provider_is_retryable(provider_server):
    provider_server.script([{"status": 503}])
    judge = target(provider_server, route="hosted_vllm", model="decider-1")

    error = raised(lambda: llm.decide(judge, decision_questions(), "text"))

    assert error.retryable is True and error.status == 503


# -- the rest --------------------------------------------------------------------
def test_token_count_counts_with_litellm():
    few = llm.token_count("openai/gpt-4o", [{"role": "user", "content": "hello"}])
    many = llm.token_count("openai/gpt-4o", [{"role": "user", "content": "hello " * 200}])

    assert 0 < few < many


def test_count_tokens_counts_messages_and_tools_for_the_target_s_model_locally(provider_server, connections):
    tool = {"type": "function", "function": {"name": "search", "description": "Search the archive.",
                                             "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
    for route, model in (("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-5"), ("hosted_vllm", "some/local-model")):
        chat = target(provider_server, route=route, model=model)
        plain = llm.count_tokens(chat, MESSAGES)
        assert 0 < plain < llm.count_tokens(chat, MESSAGES, [tool])
    assert set(connections) <= {("127.0.0.1", provider_server.port)}
    assert provider_server.requests == []


def test_importing_the_module_does_not_import_litellm():
    code = "import judging.llm, sys; assert 'litellm' not in sys.modules; assert 'django' not in sys.modules"

    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr


def test_litellm_always_reads_its_local_price_map_whatever_the_environment_says():
    # An inherited LITELLM_LOCAL_MODEL_COST_MAP=False would make the import fetch the map over the
    # network (about 5 s, and no outside host may be reached); Gavel sets it, it does not default it.
    code = (
        "import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'False'; os.environ['LITELLM_OFFLINE_MODE'] = ''\n"
        "from judging.llm import loader; loader._litellm()\n"
        "print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'], os.environ['LITELLM_OFFLINE_MODE'])"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "true"]


@pytest.fixture
def litellm_pricings(monkeypatch):
    """The models litellm's own price calculator ran for (loader keeps it behind its skip)."""
    loader._litellm()
    priced = []
    original = loader._litellm_calculator
    assert original is not None, "litellm's Logging.response_cost_calculator was not found: nothing is skipped"

    def counting(self, *args, **kwargs):
        priced.append(kwargs.get("litellm_model_name") or getattr(self, "model", None))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(loader, "_litellm_calculator", counting)
    return priced


def test_litellm_does_not_price_an_answer_gavel_prices_itself_or_knows_to_be_unpriced(provider_server,
                                                                                      litellm_pricings):
    from litellm.litellm_core_utils.litellm_logging import Logging

    assert getattr(Logging.response_cost_calculator, "gavel_skips_unread", False)
    provider_server.script([{"text": "Hi.", "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0}}] * 3)

    own_prices = llm.complete(target(provider_server), MESSAGES)
    unpriced = llm.complete(target(provider_server, model="nobody-prices-this-2", price_in_per_mtok=None,
                                   price_out_per_mtok=None), MESSAGES)
    assert litellm_pricings == []  # neither price would be read
    assert own_prices.cost == pytest.approx(2.0) and unpriced.cost == 0.0

    mapped = llm.complete(target(provider_server, model="gpt-4o", price_in_per_mtok=None, price_out_per_mtok=None),
                          MESSAGES)
    assert len(litellm_pricings) == 1 and mapped.cost > 0  # the map's price is read: litellm still prices it


def test_a_call_made_outside_gavels_is_still_priced_by_litellm(provider_server, litellm_pricings):
    provider_server.script([{"text": "Hi.", "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0}}] * 2)
    llm.complete(target(provider_server, model="gpt-4o-mini"), MESSAGES)  # own prices: skipped
    assert litellm_pricings == []

    response = loader._litellm().completion(model="openai/gpt-4o-mini", messages=MESSAGES, api_key=DUMMY_KEY,
                                            api_base=provider_server.base_url, timeout=5.0, max_retries=0)
    assert len(litellm_pricings) == 1
    assert response._hidden_params["response_cost"] > 0


def test_a_failed_call_leaves_no_skip_behind(provider_server, litellm_pricings):
    provider_server.script([{"status": 500, "body": {"error": {"message": "down"}}}])
    with pytest.raises(ProviderError):
        llm.complete(target(provider_server), MESSAGES)
    assert loader._price_unread.get() is False


def test_gavels_calls_skip_litellms_success_logging_job_and_keep_their_price(provider_server, monkeypatch):
    """Gavel installs no litellm callbacks, so its calls run in litellm's context for calls logged
    elsewhere (loader.unlogged): no job goes to litellm's logging pool. A bare call still sends one,
    which shows the pool is the one litellm uses (the test fails if a litellm version moves it)."""
    import litellm.utils

    submitted = []
    original = litellm.utils.executor.submit
    monkeypatch.setattr(litellm.utils.executor, "submit",
                        lambda *args, **kwargs: submitted.append(args) or original(*args, **kwargs))
    provider_server.script([{"text": "Hello.", "usage": {"prompt_tokens": 40, "completion_tokens": 4}}] * 2)

    reply = llm.complete(target(provider_server), MESSAGES)
    assert reply.text == "Hello." and submitted == []
    assert reply.cost == pytest.approx((40 * 2.0 + 4 * 10.0) / 1_000_000)

    loader._litellm().completion(model="openai/gavel-test-model", messages=MESSAGES, api_key=DUMMY_KEY,
                                 api_base=provider_server.base_url, timeout=5.0, max_retries=0)
    assert len(submitted) == 1
