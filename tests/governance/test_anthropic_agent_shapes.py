"""What Claude Code sends in its default mode, on the Messages API (SPEC §11.9): mid-conversation system turns
and their tool changes, tool search results (`tool_reference`), deferred tools; and how a block and report-mode
hints read for a consumer that asked for `blocks_as: message` / `hints_as: note`, plain and streamed.
The request shapes are those Claude Code 2.1.332 was seen to send (tests/agents/test_claude_code.py runs it).
"""
import pytest
from rest_framework.test import APIClient

from governance.models import GovernanceEvent
from snippets.models import PatternRule
from termlists.models import TermList
from tests.governance.test_anthropic_messages import SEARCH_TOOL, USER, events_of, post, refused, sent

FORBIDDEN_ANSWER = "Dear Kunde, the harbour woke early."
# Thirty-odd words (finished text, SPEC §3) that break the pattern rule below once.
HINTED_ANSWER = ("Click here for the timetable. The council met on Tuesday to discuss the new bus timetable, the "
                 "repairs to the old bridge, the library's opening hours and a small park beside the river.")
NOTEBOOK = {"name": "NotebookEdit", "input_schema": {"type": "object"}, "defer_loading": True}
FETCH = {"name": "WebFetch", "input_schema": {"type": "object"}, "defer_loading": True}


@pytest.fixture
def agent(db, configuration, make_consumer):
    """A client whose consumer asked for blocks as a message and hints as a note (what docs/anthropic.md's
    Claude Code recipe creates)."""
    consumer, token = make_consumer("claude-code", [configuration])
    consumer.blocks_as, consumer.hints_as = "message", "note"
    consumer.save()
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token, HTTP_ANTHROPIC_VERSION="2023-06-01",
                       HTTP_ANTHROPIC_BETA="claude-code-20250219,mid-conversation-tool-changes-2026-07-01")
    return client


@pytest.fixture
def client(agent, configuration, make_consumer):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token)
    return client


@pytest.fixture
def brand_words(configuration):
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.")
    term_list.configurations.set([configuration])
    return term_list


@pytest.fixture
def click_rule(configuration):
    PatternRule.objects.create(identifier="style.no-click-here", statement='Link text never says "click here".',
                               tags=["house-style"], violation_pattern=r"(?i)\bclick here\b",
                               wrong_samples=["For details, click here."], correct_samples=["Read the report."])
    configuration.rule_mode, configuration.rule_tags = "report", ["house-style"]
    configuration.save()


def tool_names(provider_server) -> list[str]:
    return [tool["function"]["name"] for tool in sent(provider_server).get("tools") or []]


# --- the request shapes ---
def test_a_mid_conversation_system_turn_reaches_the_model_as_system_text_where_it_stands(agent, provider_server):
    messages = [{"role": "user", "content": [{"type": "text", "text": "Say hello"}]},
                {"role": "system", "content": [{"type": "text", "text": "# Environment\nPlatform: linux",
                                                "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": "Hello."},
                {"role": "system", "content": "Today's date is 2026-12-04."},
                {"role": "user", "content": "Again."}]
    response = agent.post("/anthropic/v1/messages?beta=true", {"model": "newsroom", "max_tokens": 32000,
                                                               "messages": messages}, format="json")
    assert response.status_code == 200, response.content
    assert sent(provider_server)["messages"] == [
        {"role": "user", "content": "Say hello"}, {"role": "system", "content": "# Environment\nPlatform: linux"},
        {"role": "assistant", "content": "Hello."}, {"role": "system", "content": "Today's date is 2026-12-04."},
        {"role": "user", "content": "Again."}]


def test_deferred_tools_are_offered_once_a_tool_search_or_a_tool_addition_loads_them(agent, provider_server):
    search = {"name": "ToolSearch", "input_schema": {"type": "object"}}
    placeholder = {"name": "DeferredToolPlaceholder", "input_schema": {"type": "object"}, "defer_loading": True}
    tools = [SEARCH_TOOL, search, NOTEBOOK, FETCH, placeholder]
    assert post(agent, tools=tools).status_code == 200
    assert tool_names(provider_server) == ["search", "ToolSearch"]  # deferred: not shown until loaded
    messages = [*USER,
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "ToolSearch",
                                                   "input": {"query": "select:NotebookEdit"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": [
                    {"type": "tool_reference", "tool_name": "NotebookEdit"}], "cache_control": {"type": "ephemeral"}}]}]
    response = post(agent, tools=tools, messages=messages)
    assert response.status_code == 200, response.content
    assert tool_names(provider_server) == ["search", "ToolSearch", "NotebookEdit"]
    assert sent(provider_server)["messages"][-1] == {"role": "tool", "tool_call_id": "toolu_01",
                                                     "content": "Tool loaded: NotebookEdit"}
    # A system turn adds one by reference, another by definition, and removes one.
    changes = {"role": "system", "content": [
        {"type": "text", "text": "Tools changed."},
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "WebFetch"}},
        {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": {
            "name": "Monitor", "description": "Watch a job.", "input_schema": {"type": "object"}}}},
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "search"}}]}
    response = post(agent, tools=tools, messages=[*messages, {"role": "assistant", "content": "Loaded."}, changes,
                                                  {"role": "user", "content": "Go on."}])
    assert response.status_code == 200, response.content
    assert tool_names(provider_server) == ["ToolSearch", "NotebookEdit", "WebFetch", "Monitor"]
    assert {"role": "system", "content": "Tools changed."} in sent(provider_server)["messages"]


def test_a_system_turn_may_also_come_first(agent, provider_server):
    # The schema allows a system turn anywhere (the fuzz found the server refusing one first): its text goes to
    # the model as system text where it stands, as a later one does.
    response = post(agent, messages=[{"role": "system", "content": "First."}, *USER])
    assert response.status_code == 200, response.content
    assert {"role": "system", "content": "First."} in sent(provider_server)["messages"]


@pytest.mark.parametrize(("messages", "param", "code"), [
    ([*USER, {"role": "tool", "content": "x"}], "messages[1].role", "invalid"),
    ([*USER, {"role": "system", "content": [{"type": "image", "source": {}}]}], "messages[1].content[0].type",
     "unsupported_parameter"),
    ([*USER, {"role": "system", "content": [{"type": "tool_addition", "tool": {"type": "x"}}]}],
     "messages[1].content[0].tool", "invalid"),
])
def test_what_a_system_turn_may_not_hold_is_refused_naming_it(agent, provider_server, messages, param, code):
    refused(post(agent, messages=messages), param, code=code)
    assert provider_server.chat_requests == []


# --- blocks and hints, as the consumer asked ---
@pytest.mark.parametrize("stream", [False, True])
def test_a_block_reads_as_a_finished_answer_for_a_consumer_that_asked(agent, provider_server, brand_words, stream):
    provider_server.script([{"text": FORBIDDEN_ANSWER}])
    response = post(agent, stream=stream)
    raw = b"".join(response.streaming_content) if stream else response.content
    assert b"Kunde," not in raw and b"woke early" not in raw
    assert response["X-Gavel-Outcome"] == "blocked"
    if stream:
        steps = events_of(raw)
        text = "".join(data["delta"]["text"] for name, data in steps if name == "content_block_delta")
        stop, gavel = steps[-2][1]["delta"]["stop_reason"], steps[-2][1]["gavel"]
    else:
        message = response.json()
        assert [block["type"] for block in message["content"]] == ["text"]
        text, stop, gavel = message["content"][0]["text"], message["stop_reason"], message["gavel"]
    assert stop == "end_turn" and text == gavel["block"]["message"] and "Say customer." in text
    assert gavel["outcome"] == "blocked"
    assert GovernanceEvent.objects.filter(correlation_id=response["X-Request-ID"], decision="blocked").count() == 1
    assert len(provider_server.chat_requests) == 1


def test_another_consumer_still_gets_the_refusal(client, provider_server, brand_words):
    provider_server.script([{"text": FORBIDDEN_ANSWER}])
    message = post(client).json()
    assert message["stop_reason"] == "refusal"


@pytest.mark.parametrize("stream", [False, True])
def test_a_report_mode_hint_is_a_note_after_the_text(agent, client, provider_server, click_rule, stream):
    provider_server.script([{"text": HINTED_ANSWER}, {"text": HINTED_ANSWER}])
    response = post(agent, stream=stream)
    if stream:
        steps = events_of(b"".join(response.streaming_content))
        deltas = [data["delta"]["text"] for name, data in steps if name == "content_block_delta"]
        assert len(deltas) > 2  # live: word by word, the note last
        names = [name for name, _data in steps]
        assert names[-4:] == ["content_block_delta", "content_block_stop", "message_delta", "message_stop"]
        text, gavel = "".join(deltas), steps[-2][1]["gavel"]
        assert deltas[-1].startswith("\n\n---\nGavel: ")
    else:
        message = response.json()
        text, gavel = message["content"][0]["text"], message["gavel"]
    assert gavel["outcome"] == "allowed_with_hints"
    assert text.startswith(HINTED_ANSWER)
    note = text[len(HINTED_ANSWER):]
    assert note.startswith("\n\n---\nGavel: ") and "click here" in note
    assert note.count("\nGavel: ") == len(gavel["hints"]) == 1
    # A consumer that did not ask gets the hints in `gavel` only.
    other = post(client, stream=stream)
    if stream:
        steps = events_of(b"".join(other.streaming_content))
        other_text = "".join(data["delta"]["text"] for name, data in steps if name == "content_block_delta")
    else:
        other_text = other.json()["content"][0]["text"]
    assert other_text == HINTED_ANSWER


def test_claude_code_s_defaults_on_the_demo_model_are_dropped_and_said(db, make_consumer):
    """The demo of `make run` (litellm's mock_response): thinking was a provider 400, so a 502 for every prompt."""
    from governance.models import Configuration, Provider

    demo = Provider.objects.create(name="demo-model", route="demo", trust_zone="local")
    configuration = Configuration.objects.create(identifier="demo", provider=demo, model="echo")
    _consumer, token = make_consumer("claude-code", [configuration])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token)
    response = post(client, model="demo", thinking={"type": "adaptive", "display": "omitted"},
                    output_config={"effort": "high"}, messages=[{"role": "user", "content": "Hello, harbour."}])
    assert response.status_code == 200, response.content
    message = response.json()
    assert message["content"][0]["text"] == "Hello, harbour."
    assert {"check": "request", "result": "dropped", "field": "thinking",
            "reason": "not_taken_by_route"} in message["gavel"]["checks"]


def test_the_evidence_record_names_what_was_not_sent_on(agent, provider_server, configuration):
    from governance.models import EvidenceRecord

    configuration.model = "gpt-4o"  # takes no thinking on the OpenAI route
    configuration.save()
    response = post(agent, thinking={"type": "adaptive"}, context_management={"edits": []})
    record = EvidenceRecord.objects.get(correlation_id=response["X-Request-ID"])
    assert {"check": "request", "result": "dropped", "field": "thinking", "reason": "not_taken_by_route"} in record.checks
    assert {"check": "request", "result": "dropped", "field": "context_management", "reason": "not_sent"} \
        in record.checks
