"""Streamed completions (SPEC §8.1): Server-Sent Events, live and held streams, errors and fallbacks."""
import json

import pytest

from governance.models import Configuration, Provider
from governance.screening.redaction import redact

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "Write about the harbour."}]
EVENT_NAMES = {"delta", "hints", "blocked", "error", "done"}
OPENAI_KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
FORTY_WORDS = " ".join(f"word{i}" for i in range(40))


@pytest.fixture
def rules(db, provider, configuration):
    """`newsroom` with a two-rule set and a chat judge on the same provider server."""
    from governance.models import set_links
    from snippets.models import Snippet

    Snippet.objects.create(identifier="house_style", name="House style", tags=["style"],
                           body="Headlines carry no exclamation mark.\nNever promise a delivery date.")
    Configuration.objects.create(identifier="style-judge", provider=provider, model="judge-model")
    configuration.rule_tags = ["style"]
    configuration.save()
    set_links(configuration, "rule_judges", ["style-judge"])
    return configuration


def stream(api, **body):
    body.setdefault("configuration", "newsroom")
    body.setdefault("messages", USER)
    return api.post("/api/v1/completions", {**body, "stream": True}, format="json")


def events_of(response) -> list[tuple[str, dict]]:
    """Parse the wire format strictly: `event: NAME`, one `data:` line of JSON, a blank line."""
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    assert response.streaming
    raw = b"".join(response.streaming_content).decode("utf-8")
    assert raw.endswith("\n\n")
    events = []
    for block in raw[:-2].split("\n\n"):
        name_line, data_line = block.split("\n")
        assert name_line.startswith("event: ") and data_line.startswith("data: "), block
        name = name_line[len("event: "):]
        assert name in EVENT_NAMES
        events.append((name, json.loads(data_line[len("data: "):])))
    names = [name for name, _ in events]
    assert names.count("done") == 1 and names[-1] == "done", names
    return events


def done_of(events) -> dict:
    """`done` carries the §11.1 response but `text`; a blocked one, like §11.1, no tool calls either."""
    done = events[-1][1]
    assert {"id", "outcome", "checks", "verification", "completion"} <= set(done)
    assert "text" not in done
    assert ("tool_calls" in done) == (done["outcome"] != "blocked")
    return done


def deltas(events) -> list[str]:
    return [data["text"] for name, data in events if name == "delta"]


def test_a_live_stream_sends_deltas_in_order_then_done(api, provider_server):
    chunks = ["The harbour", " woke", " early", " and the", " gulls", " followed."]
    provider_server.script([{"stream_chunks": chunks}])
    response = stream(api)
    assert response["X-Gavel-Policy-Version"]
    events = events_of(response)
    sent = deltas(events)
    assert "".join(sent) == "".join(chunks)
    assert len(sent) > 1  # live: not collected into one piece
    assert [name for name, _ in events] == ["delta"] * len(sent) + ["done"]
    done = done_of(events)
    assert done["id"] == response["X-Request-ID"]
    assert done["outcome"] == "allowed"
    assert done["completion"]["provider"] == "local-test"
    assert done["completion"]["usage"]["total_tokens"] > 0
    assert [c["check"] for c in done["checks"]] == [
        "secret_redaction", "term_list", "pattern_rules", "citations", "rules_judge"]
    assert provider_server.chat_requests[0].stream


def test_a_clean_live_stream_is_byte_identical(api, provider_server):
    chunks = ["Ünïcode ", "ßtraße  \n", "with  odd ", "spacing, a hash 9f86d081884c7d659a2feaa0c55ad015", "a3bf4f1b2b0b",
              " a path /usr/local/bin/x", " and an id 123e4567-e89b-12d3-a456-426614174000.", "\n"]
    provider_server.script([{"stream_chunks": chunks}])
    events = events_of(stream(api))
    assert "".join(deltas(events)) == "".join(chunks)
    assert {"check": "secret_redaction", "result": "passed"} in done_of(events)["checks"]


def test_a_key_split_across_chunks_is_masked_on_a_live_stream(api, provider_server):
    chunks = ["Deploy with sk-pr", "oj-A1b2C3d4", "E5f6G7h8I9j0K1l2M3", "n4 today, then rest."]
    provider_server.script([{"stream_chunks": chunks}])
    events = events_of(stream(api))
    sent = "".join(deltas(events))
    whole = "".join(chunks)
    assert sent == redact(whole).text
    for fragment in ("A1b2C3d4", "E5f6G7h8I9j0K1l2M3", "M3n4"):
        assert fragment not in sent
        assert all(fragment not in piece for piece in deltas(events))
    assert sent.startswith("Deploy with ") and sent.endswith(" today, then rest.")
    assert {"check": "secret_redaction", "result": "redacted"} in done_of(events)["checks"]


def test_a_held_stream_sends_one_delta_then_done(api, provider_server, configuration):
    configuration.rule_mode = "block"
    configuration.save()
    provider_server.script([{"stream_chunks": ["Short ", "and ", "held."]}])
    events = events_of(stream(api))
    assert [name for name, _ in events] == ["delta", "done"]
    assert events[0][1] == {"text": "Short and held."}
    done = done_of(events)
    assert done["outcome"] == "allowed"
    assert {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"} in done["checks"]


def test_block_mode_without_rules_in_scope_delivers_a_finished_text_in_one_delta(api, provider_server,
                                                                                configuration):
    configuration.rule_mode = "block"
    configuration.save()
    provider_server.script([{"text": FORTY_WORDS}])
    events = events_of(stream(api))
    assert [name for name, _ in events] == ["delta", "done"]
    assert events[0][1]["text"] == FORTY_WORDS
    assert {"check": "rules_judge", "result": "skipped", "reason": "no_rules"} in done_of(events)["checks"]


def test_a_held_stream_the_judge_allows_is_sent_whole(api, provider_server, rules):
    rules.rule_mode = "block"
    rules.save()
    provider_server.script([{"text": FORTY_WORDS, "for_model": "test-model"},
                            {"text": '{"violations": []}', "for_model": "judge-model"}])
    events = events_of(stream(api))
    assert [name for name, _ in events] == ["delta", "done"]
    assert events[0][1]["text"] == FORTY_WORDS
    done = done_of(events)
    assert done["outcome"] == "allowed"
    assert {"check": "rules_judge", "result": "passed"} in done["checks"]
    assert [r.model for r in provider_server.chat_requests] == ["test-model", "judge-model"]


def test_a_held_stream_that_cannot_be_judged_is_blocked_without_any_text(api, provider_server, rules):
    # Block mode fails closed (SPEC §4): a judge that cannot answer has not let the text pass.
    rules.rule_mode = "block"
    rules.save()
    provider_server.script([{"text": FORTY_WORDS, "for_model": "test-model"},
                            {"status": 503, "for_model": "judge-model"}])
    events = events_of(stream(api))
    assert [name for name, _ in events] == ["blocked", "done"]
    assert "word1" not in json.dumps(events)
    assert events[0][1]["block"]["check"] == "rules_judge"
    done = done_of(events)
    assert done["outcome"] == "blocked"
    assert done["block"] == events[0][1]["block"]
    assert {"check": "rules_judge", "result": "blocked", "reason": "error"} in done["checks"]


def test_a_held_stream_the_judge_denies_is_blocked_naming_the_rule(api, provider_server, rules):
    rules.rule_mode = "block"
    rules.save()
    text = FORTY_WORDS + " Delivery is promised for Friday."
    verdict = {"violations": [{"rule": 2, "passage": "Delivery is promised for Friday"}]}
    provider_server.script([{"text": text, "for_model": "test-model"},
                            {"text": json.dumps(verdict), "for_model": "judge-model"}])
    events = events_of(stream(api))
    assert [name for name, _ in events] == ["blocked", "done"]
    block = events[0][1]["block"]
    assert "Never promise a delivery date." in block["message"]
    assert "Delivery is promised for Friday" not in block["stored_message"]
    assert "word1" not in json.dumps(events)


def test_report_mode_streams_live_and_sends_hints_before_done(api, provider_server, rules):
    rules.rule_mode = "report"
    rules.save()
    provider_server.script([{"text": FORTY_WORDS, "for_model": "test-model"},
                            {"status": 503, "for_model": "judge-model"}])
    events = events_of(stream(api))
    names = [name for name, _ in events]
    assert names[-2:] == ["hints", "done"]
    assert set(names[:-2]) == {"delta"} and len(names) > 3
    assert "".join(deltas(events)) == FORTY_WORDS
    [hint] = events[-2][1]["hints"]
    assert (hint["check"], hint["type"], hint["reason"]) == ("rules_judge", "not_checked", "error")
    done = done_of(events)
    assert done["outcome"] == "allowed_with_hints"
    assert done["hints"] == [hint]


def test_a_stream_is_held_while_a_term_list_applies(api, provider_server, configuration):
    from termlists.models import TermList

    TermList.objects.create(name="Brand words", forbidden="Kunde").configurations.set([configuration])
    provider_server.script([{"stream_chunks": ["Dear ", "reader, ", "welcome."]},
                            {"stream_chunks": ["Dear ", "Kunde, ", "welcome."]}])
    clean = events_of(stream(api))
    assert [name for name, _ in clean] == ["delta", "done"]
    assert clean[0][1]["text"] == "Dear reader, welcome."

    stopped = events_of(stream(api))
    assert [name for name, _ in stopped] == ["blocked", "done"]
    assert stopped[0][1]["block"]["check"] == "term_list"
    assert "welcome" not in json.dumps(stopped)


def test_an_error_before_the_first_chunk_is_an_ordinary_json_error(api, provider_server, backup):
    provider_server.script([{"status": 503}, {"status": 503}])
    response = stream(api)
    assert response.status_code == 502
    assert not response.streaming
    assert response["Content-Type"] == "application/json"
    assert set(response.json()["error"]) == {"code", "message", "fields"}
    assert response.json()["error"]["code"] == "provider_error"
    assert len(provider_server.chat_requests) == 2


def test_a_client_error_before_the_first_chunk_does_not_fall_back(api, provider_server, backup):
    provider_server.script([{"status": 400}])
    response = stream(api)
    assert response.status_code == 502
    assert len(provider_server.chat_requests) == 1


def test_a_stream_falls_back_before_its_first_chunk(api, provider_server, backup):
    provider_server.script([
        {"status": 503, "for_model": "test-model"},
        {"stream_chunks": ["From ", "the ", "backup."], "for_model": "backup-model"},
    ])
    events = events_of(stream(api))
    assert "".join(deltas(events)) == "From the backup."
    assert done_of(events)["completion"]["provider"] == "fallback-test"
    assert [r.model for r in provider_server.chat_requests] == ["test-model", "backup-model"]


def test_an_error_after_the_first_chunk_ends_the_stream_without_fallback(api, provider_server, backup):
    provider_server.script([{"stream_chunks": ["One ", "two ", "three ", "four."], "fail_after": 2,
                             "for_model": "test-model"}])
    events = events_of(stream(api))
    names = [name for name, _ in events]
    assert names[-2:] == ["error", "done"]
    assert set(names[:-2]) == {"delta"}
    assert "".join(deltas(events)) == "One two "
    error = events[-2][1]
    assert set(error) == {"error"} and set(error["error"]) == {"code", "message", "fields"}
    assert error["error"]["code"] == "provider_error"
    done = done_of(events)
    assert done["completion"]["provider"] == "local-test"
    # No fallback after the first chunk: the backup was never asked.
    assert [r.model for r in provider_server.chat_requests] == ["test-model"]


def test_a_streamed_tool_call_comes_back_in_done(api, provider_server):
    tools = [{"type": "function", "function": {"name": "save_article", "parameters": {"type": "object"}}}]
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "save_article",
                                              "arguments": {"body": "Deploy with " + OPENAI_KEY}}]}])
    events = events_of(stream(api, tools=tools))
    [call] = done_of(events)["tool_calls"]
    assert call["name"] == "save_article"
    assert OPENAI_KEY not in json.dumps(events)


def test_a_live_stream_that_breaks_off_ends_with_a_not_checked_hint(api, provider_server, backup):
    provider_server.script([{"stream_chunks": ["One ", "two ", "three."], "fail_after": 1, "for_model": "test-model"}])
    done = done_of(events_of(stream(api)))
    assert done["outcome"] == "allowed_with_hints"
    assert done["block"] is None
    [hint] = done["hints"]
    assert hint["type"] == "not_checked" and hint["reason"] == "stream_error"
    # Every step is listed once, and none claims to have passed what it never saw.
    assert [c["check"] for c in done["checks"]] == [
        "secret_redaction", "term_list", "pattern_rules", "citations", "rules_judge"]
    assert all(c["result"] == "not_checked" for c in done["checks"][1:])


def test_a_held_stream_that_breaks_off_is_blocked_with_a_reason_and_no_text(api, provider_server, configuration, backup):
    configuration.rule_mode = "block"
    configuration.save()
    provider_server.script([{"stream_chunks": ["One ", "two ", "three."], "fail_after": 1, "for_model": "test-model"}])
    events = events_of(stream(api))
    assert "delta" not in [name for name, _ in events]
    done = done_of(events)
    assert done["outcome"] == "blocked"
    assert done["block"]["check"] == "stream" and done["block"]["stored_message"]
    assert "tool_calls" not in done and "text" not in done


def test_a_stream_asked_for_with_accept_event_stream_is_served(api, provider_server):
    # SSE client libraries send `Accept: text/event-stream`; SPEC §8.1: served the same way, never refused.
    provider_server.script([{"stream_chunks": ["Calm", " seas."]}])
    response = api.post("/api/v1/completions", {"configuration": "newsroom", "messages": USER, "stream": True},
                        format="json", HTTP_ACCEPT="text/event-stream")
    assert "".join(deltas(events_of(response))) == "Calm seas."
