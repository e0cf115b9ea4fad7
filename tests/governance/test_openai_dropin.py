"""Gavel as a drop-in (SPEC §3, §8.2, §11.1, §11.5), tried with the clients people use against a live
Gavel (pytest-django's live_server): the openai SDK, litellm, LangChain, and plain HTTP for the
REST API. The provider behind Gavel is tests/provider_server.py, which records every request body.
No Django test client here.
"""
import json

import httpx
import openai
import pytest

from termlists.models import TermList

pytestmark = pytest.mark.django_db(transaction=True)

USER = [{"role": "user", "content": "Write about the harbour."}]
SAVE_TOOL = {"type": "function", "function": {"name": "save_article", "parameters": {"type": "object"}}}
SEARCH_TOOL = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
FORBIDDEN_ANSWER = "Dear Kunde, the harbour woke early."


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def gavel(live_server, configuration, make_consumer):
    """The live server's addresses, a token granted `newsroom`, and one that may also state `internal`."""
    _consumer, token = make_consumer("newsroom-app", [configuration])
    _labeller, granted = make_consumer("labeller-app", [configuration], kinds=["internal", "image_description"])

    class Gavel:
        url = live_server.url
        base_url = f"{live_server.url}/openai/v1"

    Gavel.token, Gavel.granted_token = token, granted
    return Gavel


@pytest.fixture
def client(gavel):
    with openai.OpenAI(base_url=gavel.base_url, api_key=gavel.token, max_retries=0, timeout=30) as sdk:
        yield sdk


@pytest.fixture
def brand_words(configuration):
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.")
    term_list.configurations.set([configuration])
    return term_list


def ask(client, **kwargs):
    kwargs.setdefault("model", "newsroom")
    kwargs.setdefault("messages", USER)
    return client.chat.completions.create(**kwargs)


def rest(gavel, path, body, token=None):
    return httpx.post(f"{gavel.url}/api/v1/{path}", json=body, timeout=30,
                      headers={"Authorization": f"Bearer {token or gavel.token}"})


# --- every message Gavel returned is accepted back (SPEC §11.5) ---
def test_the_sdk_tool_loop_appends_the_sdk_s_own_message_objects(client, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "search", "arguments": {"q": "harbour"}}]},
        {"text": "The harbour opens at six."},
    ])
    messages = list(USER)
    first = ask(client, messages=messages, tools=[SEARCH_TOOL])
    assert first.choices[0].finish_reason == "tool_calls"
    message = first.choices[0].message
    assert message.refusal is None  # what made Gavel refuse its own message before: `"refusal": null`
    messages.append(message)  # the SDK's own object, as its documentation's loop does
    messages.append({"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "Opens at six."})
    second = ask(client, messages=messages, tools=[SEARCH_TOOL])
    assert second.choices[0].message.content == "The harbour opens at six."
    history = provider_server.chat_requests[-1].body["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[1]["tool_calls"][0]["function"] == {"name": "search", "arguments": '{"q": "harbour"}'}
    assert history[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Opens at six."}


def test_a_history_with_a_blocked_turn_is_accepted(client, provider_server, brand_words):
    provider_server.script([{"text": FORBIDDEN_ANSWER}, {"text": "Dear customer, welcome."}])
    messages = list(USER)
    blocked = ask(client, messages=messages)
    message = blocked.choices[0].message
    assert blocked.choices[0].finish_reason == "content_filter" and message.content is None and message.refusal
    messages += [message, {"role": "user", "content": "Try again."}]
    again = ask(client, messages=messages)
    assert again.choices[0].message.content == "Dear customer, welcome."
    turn = provider_server.chat_requests[-1].body["messages"][1]
    assert turn["role"] == "assistant" and turn.get("content") is None and turn["refusal"] == message.refusal
    # The blocked answer itself never went back: only the block's message, which names the term.
    assert FORBIDDEN_ANSWER not in json.dumps(provider_server.chat_requests[-1].body["messages"])


def test_text_parts_and_the_developer_and_function_roles_are_accepted(client, provider_server):
    messages = [
        {"role": "developer", "content": "Answer in one line."},
        {"role": "user", "content": [{"type": "text", "text": "Write about"}, {"type": "text", "text": " the harbour."}]},
        {"role": "assistant", "content": None, "function_call": {"name": "search", "arguments": "{}"}},
        {"role": "function", "name": "search", "content": "Opens at six."},
    ]
    assert ask(client, messages=messages).choices[0].finish_reason == "stop"
    sent = provider_server.chat_requests[-1].body["messages"]
    # litellm sends a developer message as `system` to a model it does not know to take `developer`.
    assert sent[0] == {"role": "system", "content": "Answer in one line."}
    # litellm leaves out an assistant turn's null content.
    assert sent[1:] == [messages[1], {k: v for k, v in messages[2].items() if k != "content"}, messages[3]]


def test_a_part_that_is_not_a_part_is_refused_naming_it(client, provider_server):
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, messages=[{"role": "user", "content": [{"text": "no type"}]}])
    assert caught.value.body["param"] == "messages[0].content[0]"
    assert provider_server.chat_requests == []


# --- parameters: passed on, or refused naming them ---
def test_stop_and_seed_arrive_at_the_provider_plain_and_streamed(client, provider_server):
    provider_server.script([{"text": "One."}, {"stream_chunks": ["Two", "."]}])
    ask(client, stop=["END"], seed=7)
    list(ask(client, stop="END", seed=8, stream=True, stream_options={"include_usage": True}))
    plain, streamed = provider_server.chat_requests
    assert (plain.body["stop"], plain.body["seed"]) == (["END"], 7)
    assert (streamed.body["stop"], streamed.body["seed"]) == ("END", 8)


def test_n_2_is_refused_as_unsupported_and_n_1_is_answered(client, provider_server):
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, n=2)
    body = caught.value.body
    assert (body["code"], body["param"], body["type"]) == ("unsupported_parameter", "n", "invalid_request_error")
    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, logprobs=True, top_logprobs=2)
    assert caught.value.body["code"] == "unsupported_parameter"
    assert provider_server.chat_requests == []
    assert len(ask(client, n=1, logprobs=False).choices) == 1


def test_unknown_extra_members_are_ignored(client, provider_server):
    answer = ask(client, extra_body={"metadata_of_my_app": {"x": 1}, "store": False})
    assert answer.choices[0].finish_reason == "stop"
    assert "metadata_of_my_app" not in provider_server.chat_requests[-1].body


# --- /v1/ and discovery ---
def test_the_gateway_answers_at_v1_too(gavel, provider_server):
    with openai.OpenAI(base_url=f"{gavel.url}/v1", api_key=gavel.token, max_retries=0, timeout=30) as sdk:
        assert [m.id for m in sdk.models.list()] == ["newsroom"]
        assert ask(sdk).choices[0].message.content
        with pytest.raises(openai.NotFoundError) as caught:
            sdk.embeddings.create(model="newsroom", input="x")
    assert caught.value.body["type"] == "not_found_error"


def test_litellm_model_discovery_finds_the_configurations(gavel, provider, configuration):
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    from governance.models import Configuration

    Configuration.objects.create(identifier="not-granted", provider=provider, model="m")
    # litellm asks <host>/v1/models of the api_base it is given.
    found = litellm.get_valid_models(check_provider_endpoint=True, custom_llm_provider="openai",
                                     api_base=f"{gavel.url}/openai/v1", api_key=gavel.token)
    assert found == ["newsroom"]


# --- the result in headers (SPEC §11.1) ---
def test_langchain_reads_the_outcome_from_the_headers(gavel, provider_server, brand_words):
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="newsroom", base_url=gavel.base_url, api_key=gavel.token, max_retries=0, timeout=30,
                       include_response_headers=True)
    provider_server.script([{"text": "The harbour woke early."}, {"text": FORBIDDEN_ANSWER}])
    allowed = model.invoke("Write about the harbour.")
    headers = {k.lower(): v for k, v in allowed.response_metadata["headers"].items()}
    assert allowed.content == "The harbour woke early."
    assert headers["x-gavel-outcome"] == "allowed" and headers["x-gavel-screening"]
    blocked = model.invoke("Write about the harbour.")
    headers = {k.lower(): v for k, v in blocked.response_metadata["headers"].items()}
    assert headers["x-gavel-outcome"] == "blocked"
    assert blocked.response_metadata["finish_reason"] == "content_filter"
    assert "Kunde" not in json.dumps(blocked.content)


def test_the_headers_are_on_every_answer_that_is_not_a_live_stream(gavel, client, provider_server, brand_words):
    provider_server.script([{"text": "Calm sea."}] * 3 + [{"stream_chunks": ["Calm ", "sea."]}] * 2)
    screened = rest(gavel, "screenings", {"configuration": "newsroom", "text": "Dear Kunde"})
    assert screened.headers["X-Gavel-Outcome"] == "blocked"
    assert screened.headers["X-Gavel-Screening"] == screened.json()["id"]
    completed = rest(gavel, "completions", {"configuration": "newsroom", "messages": USER})
    assert completed.headers["X-Gavel-Outcome"] == "allowed"
    assert completed.headers["X-Gavel-Screening"] == completed.json()["id"]
    raw = client.chat.completions.with_raw_response.create(model="newsroom", messages=USER)
    assert raw.headers["X-Gavel-Outcome"] == "allowed" and raw.headers["X-Gavel-Screening"] == raw.parse().gavel["id"]
    # A held stream (a term list applies) sends its verdict before the first byte: in the headers too.
    with httpx.stream("POST", f"{gavel.url}/api/v1/completions", timeout=30,
                      json={"configuration": "newsroom", "messages": USER, "stream": True},
                      headers={"Authorization": f"Bearer {gavel.token}"}) as response:
        assert response.headers["X-Gavel-Outcome"] == "allowed" and response.headers["X-Gavel-Screening"]
        response.read()
    raw = client.chat.completions.with_raw_response.create(model="newsroom", messages=USER, stream=True)
    assert raw.headers["X-Gavel-Outcome"] == "allowed"
    assert list(raw.parse())[-1].gavel["id"] == raw.headers["X-Gavel-Screening"]


# --- SPEC §8.2: offering a tool never switches screening off ---
def _stream_events(gavel, body):
    events = []
    with httpx.stream("POST", f"{gavel.url}/api/v1/completions", json={**body, "stream": True}, timeout=30,
                      headers={"Authorization": f"Bearer {gavel.token}"}) as response:
        assert response.status_code == 200
        for block in response.read().decode().strip().split("\n\n"):
            lines = dict(line.split(": ", 1) for line in block.splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
    return events


@pytest.mark.parametrize("tools", [None, [SAVE_TOOL]], ids=["no-tool", "dummy-tool"])
def test_the_same_forbidden_answer_is_blocked_with_and_without_a_tool(gavel, client, provider_server, brand_words,
                                                                       tools):
    provider_server.script([{"text": FORBIDDEN_ANSWER}] * 2 + [{"stream_chunks": ["Dear ", "Kunde, ", "hello."]}] * 2)
    extra = {"tools": tools} if tools else {}
    # /api/v1/completions, plain
    body = rest(gavel, "completions", {"configuration": "newsroom", "messages": USER, **extra}).json()
    assert body["outcome"] == "blocked" and "text" not in body and body["block"]["check"] == "term_list"
    # /openai/v1/chat/completions, plain
    answer = ask(client, **extra)
    assert answer.choices[0].finish_reason == "content_filter" and answer.choices[0].message.content is None
    # /api/v1/completions, streamed: held, so the verdict comes first and no text at all
    events = _stream_events(gavel, {"configuration": "newsroom", "messages": USER, **extra})
    assert [name for name, _ in events] == ["blocked", "done"]
    assert "Kunde," not in json.dumps(events[-1]) or events[-1][1]["block"]
    assert events[-1][1]["outcome"] == "blocked"
    # /openai/v1/chat/completions, streamed: no content chunk, the last one is content_filter
    chunks = list(ask(client, stream=True, **extra))
    assert not [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert chunks[-1].choices[0].finish_reason == "content_filter" and chunks[-1].gavel["outcome"] == "blocked"


def test_in_block_mode_a_tool_run_stream_sends_no_text_before_the_verdict(gavel, client, provider_server,
                                                                          configuration):
    configuration.rule_mode = "block"
    configuration.save()
    provider_server.script([{"stream_chunks": ["The ", "harbour ", "woke."]}] * 2)
    events = _stream_events(gavel, {"configuration": "newsroom", "messages": USER, "tools": [SAVE_TOOL]})
    # Held: one delta after the verdict, then done (formerly a tool run streamed live).
    assert [name for name, _ in events] == ["delta", "done"] and events[0][1]["text"] == "The harbour woke."
    chunks = list(ask(client, stream=True, tools=[SAVE_TOOL]))
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["The harbour woke."]


# --- SPEC §3: kinds that need a grant ---
def test_kind_internal_without_the_grant_is_refused_on_every_path(gavel, client, provider_server):
    internal = {"kind": "internal", "configuration": "newsroom"}
    for path, body in (("screenings", {**internal, "text": "label: harbour"}),
                       ("completions", {**internal, "messages": USER}),
                       ("completions", {**internal, "messages": USER, "stream": True}),
                       ("tasks", {**internal, "instruction": "Label it."})):
        response = rest(gavel, path, body)
        assert response.status_code == 403, (path, response.text)
        error = response.json()["error"]
        assert error["code"] == "kind_not_granted" and "kind" in error["fields"]
    with pytest.raises(openai.PermissionDeniedError) as caught:
        ask(client, extra_body={"gavel": {"kind": "internal"}})
    assert (caught.value.body["code"], caught.value.body["param"]) == ("kind_not_granted", "gavel.kind")
    with pytest.raises(openai.PermissionDeniedError):
        ask(client, extra_body={"gavel": {"kind": "image_description"}})
    assert provider_server.chat_requests == []


def test_kind_internal_with_the_grant_works(gavel, provider_server):
    internal = {"kind": "internal", "configuration": "newsroom"}
    screened = rest(gavel, "screenings", {**internal, "text": "label: harbour"}, token=gavel.granted_token)
    assert screened.status_code == 200 and screened.json()["outcome"] == "allowed"
    completed = rest(gavel, "completions", {**internal, "messages": USER}, token=gavel.granted_token)
    assert completed.status_code == 200 and completed.json()["outcome"] == "allowed"
    with openai.OpenAI(base_url=gavel.base_url, api_key=gavel.granted_token, max_retries=0, timeout=30) as sdk:
        answer = ask(sdk, extra_body={"gavel": {"kind": "internal"}})
    assert answer.gavel["outcome"] == "allowed"
    rules = {c["check"]: c for c in answer.gavel["checks"]}["rules_judge"]
    assert rules["result"] == "skipped"  # internal output is never judged
    # A task is a queued_task or a field_fill: with the grant, `internal` is not a task kind (400, not 403).
    task = rest(gavel, "tasks", {**internal, "instruction": "Label it."}, token=gavel.granted_token)
    assert task.status_code == 400 and "kind" in task.json()["error"]["fields"]
