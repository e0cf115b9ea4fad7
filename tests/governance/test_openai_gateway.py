"""The OpenAI-compatible gateway (SPEC §11.5) through real clients against a live Gavel.

The official `openai` SDK (sync, async, streaming) and `litellm.completion` talk to Gavel over HTTP
(pytest-django's live_server); the provider behind Gavel is tests/provider_server.py. No Django test
client here: what is tested is the clients' own parsing of Gavel's answers.
"""
import asyncio
import json
import os
import time

import httpx
import openai
import pytest

from governance.models import Configuration, UsageDay

pytestmark = pytest.mark.django_db(transaction=True)

USER = [{"role": "user", "content": "Write about the harbour."}]
FORTY_WORDS = " ".join(f"word{i}" for i in range(40))
SAVE_TOOL = {"type": "function", "function": {"name": "save_article", "parameters": {"type": "object"}}}
SEARCH_TOOL = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def gavel(live_server, configuration, make_consumer):
    """The live server's addresses and a token granted `newsroom`."""
    _consumer, token = make_consumer("newsroom-app", [configuration])

    class Gavel:
        url = live_server.url
        base_url = f"{live_server.url}/openai/v1"

    Gavel.token = token
    return Gavel


@pytest.fixture
def client(gavel):
    with openai.OpenAI(base_url=gavel.base_url, api_key=gavel.token, max_retries=0, timeout=30) as sdk:
        yield sdk


@pytest.fixture
def rules(provider, configuration):
    """`newsroom` checks a two-rule set with a chat judge (model `judge-model`) on the same provider server."""
    from governance.models import set_links
    from snippets.models import Snippet

    Snippet.objects.create(identifier="house_style", name="House style", tags=["style"],
                           body="Headlines carry no exclamation mark.\nNever promise a delivery date.")
    Configuration.objects.create(identifier="style-judge", provider=provider, model="judge-model")
    configuration.rule_tags = ["style"]
    configuration.rule_mode = "report"
    configuration.save()
    set_links(configuration, "rule_judges", ["style-judge"])
    return configuration


@pytest.fixture
def brand_words(configuration):
    from termlists.models import TermList

    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.")
    term_list.configurations.set([configuration])
    return term_list


def deny(rule: int, passage: str) -> dict:
    return {"for_model": "judge-model", "text": json.dumps({"violations": [{"rule": rule, "passage": passage}]})}


ALLOW = {"for_model": "judge-model", "text": '{"violations": []}'}


def ask(client, **kwargs):
    kwargs.setdefault("model", "newsroom")
    kwargs.setdefault("messages", USER)
    return client.chat.completions.create(**kwargs)


# --- models ---
def test_models_are_the_configurations_granted_to_the_token(client, configuration, provider):
    Configuration.objects.create(identifier="not-granted", provider=provider, model="m")
    assert [m.id for m in client.models.list()] == ["newsroom"]
    assert client.models.retrieve("newsroom").id == "newsroom"
    with pytest.raises(openai.PermissionDeniedError):
        client.models.retrieve("not-granted")
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-thing")


# --- plain answers ---
def test_an_allowed_answer_is_a_chat_completion_with_a_gavel_member(client, provider_server):
    provider_server.script([{"text": "The harbour woke early.", "usage": {"prompt_tokens": 9, "completion_tokens": 5}}])
    raw = client.chat.completions.with_raw_response.create(model="newsroom", messages=USER)
    answer = raw.parse()
    assert answer.object == "chat.completion"
    assert answer.model == "newsroom"
    [choice] = answer.choices
    assert (choice.message.role, choice.message.content) == ("assistant", "The harbour woke early.")
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens, answer.usage.total_tokens) == (9, 5, 14)
    gavel = answer.gavel
    assert gavel["outcome"] == "allowed" and gavel["block"] is None and gavel["hints"] == []
    assert gavel["completion"]["provider"] == "local-test" and gavel["completion"]["model"] == "test-model"
    assert [c["check"] for c in gavel["checks"]] == [
        "secret_redaction", "term_list", "pattern_rules", "citations", "rules_judge"]
    assert raw.headers["X-Request-ID"] == gavel["id"] and answer.id == f"chatcmpl-{gavel['id']}"
    assert raw.headers["X-Gavel-Policy-Version"] == str(gavel["policy_version"])
    # The configuration's model is always used, whatever the client names.
    assert provider_server.chat_requests[0].model == "test-model"


def test_the_configuration_replaces_the_clients_temperature_and_caps_its_max_tokens(client, provider_server,
                                                                                     configuration):
    ask(client, temperature=1.5, max_tokens=500)
    configuration.temperature, configuration.max_tokens = 0.2, 50
    configuration.save()
    ask(client, temperature=1.5, max_tokens=500)
    ask(client, temperature=1.5, max_tokens=20)
    sent = [(r.body.get("temperature"), r.body.get("max_tokens")) for r in provider_server.chat_requests]
    assert sent == [(1.5, 500), (0.2, 50), (0.2, 20)]


def test_every_answer_changing_parameter_reaches_the_provider(client, provider_server):
    """SPEC §11.5: what changes the answer is passed on (formerly `seed`, `stop` and the penalties were
    accepted and dropped)."""
    provider_server.script([{"text": '{"headline": "Harbour"}'}])
    sent_parameters = {
        "response_format": {"type": "json_object"}, "user": "desk-7", "presence_penalty": 0.5,
        "frequency_penalty": -0.5, "seed": 3, "stop": ["END", "STOP"], "top_p": 0.9,
        "logit_bias": {"1734": -100},
    }
    answer = ask(client, **sent_parameters)
    assert answer.choices[0].message.content == '{"headline": "Harbour"}'
    sent = provider_server.chat_requests[-1].body
    for name, value in sent_parameters.items():
        assert sent[name] == value, name


def test_hints_are_read_from_the_gavel_member(client, provider_server, rules):
    text = f"Your order arrives on Monday. {FORTY_WORDS}"
    provider_server.script([{"text": text}, deny(2, "arrives on Monday")])
    answer = ask(client)
    assert answer.choices[0].message.content == text and answer.choices[0].finish_reason == "stop"
    assert answer.gavel["outcome"] == "allowed_with_hints"
    [hint] = answer.gavel["hints"]
    assert (hint["check"], hint["type"], hint["rule"]["number"], hint["passage"]) == (
        "rules_judge", "violation", 2, "arrives on Monday")
    assert text[hint["start"]:hint["end"]] == "arrives on Monday"


def test_a_blocked_answer_is_content_filter_with_no_content(client, provider_server, brand_words):
    provider_server.script([{"text": "Dear Kunde, welcome aboard."}])
    answer = ask(client)
    [choice] = answer.choices
    assert choice.finish_reason == "content_filter"
    assert choice.message.content is None and not choice.message.tool_calls
    block = answer.gavel["block"]
    assert answer.gavel["outcome"] == "blocked" and block["check"] == "term_list"
    assert "Brand words" in block["message"] and "Kunde" in block["message"] and "Say customer." in block["message"]
    assert choice.message.refusal == block["message"]


def test_the_gavel_member_of_a_block_carries_the_facts_of_the_completions_api(client, gavel, provider_server,
                                                                               brand_words):
    answer_text = "Dear Kunde, welcome aboard."
    provider_server.script([{"text": answer_text, "usage": {"prompt_tokens": 7, "completion_tokens": 4}}] * 2)
    native = httpx.post(f"{gavel.url}/api/v1/completions", json={"configuration": "newsroom", "messages": USER},
                        headers={"Authorization": f"Bearer {gavel.token}"}, timeout=15).json()
    member = ask(client).gavel
    assert native["outcome"] == "blocked"
    assert set(member) == set(native) - {"text", "tool_calls"} and "text" not in native
    for key in ("policy_version", "outcome", "hints", "block", "verification", "checks", "completion"):
        assert member[key] == native[key], key
    assert member["id"] != native["id"]  # two calls, two correlation ids


# --- tool calls (SPEC §8.2) ---
def test_a_tool_call_comes_back_in_openai_shape(client, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_7", "name": "save_article",
                                             "arguments": {"title": "Harbour", "body": "The gulls followed."}}]}])
    answer = ask(client, tools=[SAVE_TOOL], tool_choice="auto")
    [choice] = answer.choices
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls
    assert (call.id, call.type, call.function.name) == ("call_7", "function", "save_article")
    assert json.loads(call.function.arguments) == {"title": "Harbour", "body": "The gulls followed."}
    assert answer.gavel["outcome"] == "allowed"
    sent = provider_server.chat_requests[0].body
    assert sent["tools"] == [SAVE_TOOL] and sent["tool_choice"] == "auto"


def test_a_forbidden_term_in_tool_arguments_returns_no_tool_call(client, provider_server, brand_words):
    provider_server.script([{"text": "Saving.", "tool_calls": [
        {"name": "search", "arguments": {"q": "harbour"}},
        {"name": "save_article", "arguments": {"body": "Dear Kunde"}}]}])
    answer = ask(client, tools=[SAVE_TOOL, SEARCH_TOOL])
    [choice] = answer.choices
    assert choice.finish_reason == "content_filter"
    assert choice.message.content is None and not choice.message.tool_calls
    assert answer.gavel["block"]["check"] == "term_list"


def test_a_read_tool_declared_in_the_gavel_extension_is_not_screened(client, provider_server, brand_words):
    declare_reads("search")
    provider_server.script([{"tool_calls": [{"name": "search", "arguments": {"q": "Kunde"}}]}])
    answer = ask(client, tools=[SEARCH_TOOL], extra_body={"gavel": {"read_tools": ["search"]}})
    assert answer.choices[0].finish_reason == "tool_calls"
    assert json.loads(answer.choices[0].message.tool_calls[0].function.arguments) == {"q": "Kunde"}


# --- errors: OpenAI's body, §11.1's statuses, the SDK's classes ---
def error_of(exc_info) -> dict:
    body = exc_info.value.body
    assert set(body) == {"message", "type", "param", "code"}, body
    return body


def test_a_bad_key_is_an_authentication_error(gavel):
    with openai.OpenAI(base_url=gavel.base_url, api_key="not-a-token", max_retries=0) as sdk:
        with pytest.raises(openai.AuthenticationError) as caught:
            ask(sdk)
    assert caught.value.status_code == 401
    assert error_of(caught)["type"] == "authentication_error"


def test_an_unknown_model_or_path_is_not_found(client):
    with pytest.raises(openai.NotFoundError) as caught:
        ask(client, model="no-such-configuration")
    error = error_of(caught)
    assert (error["type"], error["code"], error["param"]) == ("not_found_error", "unknown_configuration", "model")
    with pytest.raises(openai.NotFoundError) as caught:
        client.embeddings.create(model="newsroom", input="harbour")
    assert error_of(caught)["type"] == "not_found_error"


def test_a_model_not_granted_is_permission_denied(client, provider, provider_server):
    Configuration.objects.create(identifier="finance", provider=provider, model="m")
    with pytest.raises(openai.PermissionDeniedError) as caught:
        ask(client, model="finance")
    assert (error_of(caught)["type"], error_of(caught)["code"]) == ("permission_error", "not_granted")
    with pytest.raises(openai.PermissionDeniedError):
        ask(client, extra_body={"gavel": {"also": ["finance"]}})
    assert provider_server.chat_requests == []


def test_over_budget_or_throttled_is_a_rate_limit_error(client, gavel, provider_server, configuration, make_consumer):
    from django.utils import timezone

    configuration.budget_daily_requests = 1
    configuration.save()
    UsageDay.objects.create(configuration=configuration, day=timezone.localdate(), requests=1)
    for stream in (False, True):
        with pytest.raises(openai.RateLimitError) as caught:
            ask(client, stream=stream)
        assert (error_of(caught)["type"], error_of(caught)["code"]) == ("rate_limit_error", "budget_exceeded")
        assert caught.value.response.headers["x-should-retry"] == "false"
    assert provider_server.chat_requests == []
    _consumer, token = make_consumer("slow-app", [configuration], throttle_rate="1/min")
    with openai.OpenAI(base_url=gavel.base_url, api_key=token, max_retries=0) as sdk:
        with pytest.raises(openai.RateLimitError):
            ask(sdk)  # over budget, and counted by the throttle
        with pytest.raises(openai.RateLimitError) as caught:
            ask(sdk)
    assert error_of(caught)["code"] == "throttled"


def test_bad_input_is_a_bad_request_naming_the_field_and_too_large_a_status_error(client, provider_server, settings):
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, messages=[{"role": "wizard", "content": "hi"}])
    error = error_of(caught)
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", "invalid", "messages[0].role")
    assert "messages[0].role" in error["message"]
    for extra, param in (({"temperature": 7}, "temperature"),
                         ({"extra_body": {"gavel": {"colour": 1}}}, "gavel.colour"),
                         ({"extra_body": {"gavel": {"also": "finance"}}}, "gavel.also")):
        with pytest.raises(openai.BadRequestError) as caught:
            ask(client, **extra)
        assert error_of(caught)["param"] == param
    settings.GAVEL_MAX_TEXT_BYTES = 2000
    with pytest.raises(openai.APIStatusError) as caught:
        ask(client, messages=[{"role": "user", "content": "x" * 3000}])
    assert caught.value.status_code == 413 and error_of(caught)["code"] == "too_large"
    assert provider_server.chat_requests == []


def test_a_failing_provider_is_a_server_error(client, provider_server):
    provider_server.script([{"status": 503}])
    with pytest.raises(openai.InternalServerError) as caught:
        ask(client)
    assert caught.value.status_code == 502
    assert (error_of(caught)["type"], error_of(caught)["code"]) == ("api_error", "provider_error")


# --- streams (SPEC §8.1 mapped onto chunks) ---
def raw_stream(gavel, accept="text/event-stream", **body):
    """The chunk lines exactly as sent, read with a plain HTTP client."""
    body = {"model": "newsroom", "messages": USER, "stream": True, **body}
    with httpx.stream("POST", f"{gavel.base_url}/chat/completions", json=body, timeout=15,
                      headers={"Authorization": f"Bearer {gavel.token}", "Accept": accept}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["X-Gavel-Policy-Version"]
        text = response.read().decode()
    assert text.endswith("\n\n")
    lines = text[:-2].split("\n\n")
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"
    return [json.loads(line[len("data: "):]) for line in lines[:-1]]


def test_a_live_stream_through_the_sdk_ends_with_the_gavel_chunk(client, provider_server):
    pieces = ["The harbour", " woke", " early", " and the", " gulls", " followed."]
    provider_server.script([{"stream_chunks": pieces}])
    chunks = list(ask(client, stream=True))
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(texts) == "".join(pieces) and len(texts) == len(pieces)
    assert all(c.object == "chat.completion.chunk" and c.model == "newsroom" for c in chunks)
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop" and last.gavel["outcome"] == "allowed"
    assert all(getattr(c, "gavel", None) is None for c in chunks[:-1])
    assert last.usage.total_tokens > 0


def test_a_stream_is_served_whatever_accept_says(gavel, provider_server):
    for accept in ("text/event-stream", "application/json", "*/*"):
        provider_server.script([{"stream_chunks": ["Calm", " seas."]}])
        chunks = raw_stream(gavel, accept=accept)
        assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "Calm seas.", accept
        assert "gavel" in chunks[-1] and all("gavel" not in c for c in chunks[:-1])


def test_report_mode_sends_the_first_chunk_before_the_judge_is_called(client, provider_server, rules):
    pieces = [f"word{i} " for i in range(40)]
    provider_server.script([{"stream_chunks": pieces, "chunk_delay": 0.02}, deny(1, "word3")])
    received = []
    for chunk in ask(client, stream=True):
        received.append((time.time(), chunk))
    first_text_at = next(at for at, c in received if c.choices and c.choices[0].delta.content)
    [judged] = [r for r in provider_server.chat_requests if r.model == "judge-model"]
    assert first_text_at < judged.at
    last = received[-1][1]
    assert last.gavel["outcome"] == "allowed_with_hints"
    assert [h["rule"]["number"] for h in last.gavel["hints"]] == [1]


def test_block_mode_sends_no_text_before_the_verdict(client, provider_server, rules):
    rules.rule_mode = "block"
    rules.save()
    pieces = [f"word{i} " for i in range(40)]
    provider_server.script([{"stream_chunks": pieces, "chunk_delay": 0.01}, ALLOW])
    received = [(time.time(), chunk) for chunk in ask(client, stream=True)]
    [judged] = [r for r in provider_server.chat_requests if r.model == "judge-model"]
    texts = [(at, c.choices[0].delta.content) for at, c in received if c.choices and c.choices[0].delta.content]
    assert [text for _, text in texts] == ["".join(pieces)]  # held: the whole answer in one chunk
    assert texts[0][0] > judged.at
    assert received[-1][1].gavel["outcome"] == "allowed" and received[-1][1].choices[0].finish_reason == "stop"


def test_a_blocked_held_stream_sends_one_content_filter_chunk_and_no_text(gavel, client, provider_server, rules):
    rules.rule_mode = "block"
    rules.save()
    text = f"Your order arrives on Monday. {FORTY_WORDS}"
    provider_server.script([{"stream_chunks": [text[:20], text[20:]]}, deny(2, "arrives on Monday")] * 2)
    chunks = list(ask(client, stream=True))
    assert not any(c.choices[0].delta.content for c in chunks)
    [last] = chunks
    assert last.choices[0].finish_reason == "content_filter"
    assert last.gavel["outcome"] == "blocked" and last.gavel["block"]["check"] == "rules_judge"
    raw = raw_stream(gavel)
    assert len(raw) == 1 and raw[0]["choices"][0]["delta"]["content"] is None


def test_a_streamed_tool_call_arrives_screened_before_the_gavel_chunk(client, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "save_article", "arguments": {"body": "Calm."}}]}])
    chunks = list(ask(client, stream=True, tools=[SAVE_TOOL]))
    [call] = [d for c in chunks for d in (c.choices[0].delta.tool_calls or [])]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == ("call_1", "save_article",
                                                                                 {"body": "Calm."})
    assert chunks[-1].choices[0].finish_reason == "tool_calls" and chunks[-1].gavel["outcome"] == "allowed"


# --- the async client ---
def test_the_async_sdk_plain_and_streamed(gavel, provider_server, brand_words):
    provider_server.script([{"text": "Calm seas."}, {"stream_chunks": ["Dear", " Kunde."]}])

    async def both():
        async with openai.AsyncOpenAI(base_url=gavel.base_url, api_key=gavel.token, max_retries=0) as sdk:
            plain = await sdk.chat.completions.create(model="newsroom", messages=USER)
            stream = await sdk.chat.completions.create(model="newsroom", messages=USER, stream=True)
            return plain, [chunk async for chunk in stream]

    plain, chunks = asyncio.run(both())
    assert plain.choices[0].message.content == "Calm seas." and plain.gavel["outcome"] == "allowed"
    assert [c.choices[0].finish_reason for c in chunks] == ["content_filter"]  # held (a term list applies)
    assert chunks[-1].gavel["block"]["check"] == "term_list"


# --- litellm as a client ---
@pytest.fixture
def litellm_client():
    # The same offline settings Gavel's own litellm gets (judging/llm/loader.py), before the first import.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_OFFLINE_MODE"] = "true"
    import litellm

    return litellm


def test_litellm_plain_and_streamed(litellm_client, gavel, provider_server, brand_words):
    provider_server.script([{"text": "Calm seas."}, {"stream_chunks": ["Calm", " seas", " ahead."]},
                            {"text": "Dear Kunde."}])
    call = {"model": "openai/newsroom", "api_base": gavel.base_url, "api_key": gavel.token, "messages": USER,
            "num_retries": 0, "max_retries": 0, "timeout": 15}
    plain = litellm_client.completion(**call)
    assert plain.choices[0].message.content == "Calm seas." and plain.choices[0].finish_reason == "stop"
    chunks = list(litellm_client.completion(**call, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Calm seas ahead."
    blocked = litellm_client.completion(**call)
    assert blocked.choices[0].finish_reason == "content_filter" and blocked.choices[0].message.content is None
    assert [r.model for r in provider_server.chat_requests] == ["test-model"] * 3


def declare_reads(*names):
    """The configurations' owner declares these tools reads (SPEC §8.2: a caller can only narrow the list)."""
    from governance.models import Configuration

    for config in Configuration.objects.all():
        config.read_tools = list(names)
        config.save()
