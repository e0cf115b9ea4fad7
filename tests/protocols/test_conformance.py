"""One verdict on every protocol (SPEC §11.8): one table of cases, each run through every protocol
adapter of tests/protocols/adapters/, plain and streamed (held and live).

Every run asserts the same outcome, hints, block message and governance events, and that no blocked
text and no tool argument of a blocked answer appears in any byte sent to the client. The provider
behind Gavel is tests/provider_server.py; the client is Django's test client speaking the adapter's
wire format (the real SDKs are tried in tests/protocols/test_clients_*.py).
"""
from __future__ import annotations

import json
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

import pytest

import governance.protocols
from governance.models import Configuration, EvidenceRecord, GovernanceEvent, set_links
from snippets.models import Snippet
from termlists.models import TermList
from tests.protocols.adapters import ADAPTERS, Ask, Outcome, Tool, sse_events

pytestmark = pytest.mark.django_db

# Thirty-odd words: finished text (SPEC §3), so required terms and rule sets apply to it.
CLEAN = ("The harbour woke early this morning, and the first ferries left on time while the fish market opened "
         "its doors to a crowd of cooks, tourists and neighbours who came for the catch of the night before.")
FORBIDDEN = "Dear Kunde, " + CLEAN
KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"
WITH_KEY = CLEAN + " The key is " + KEY + " for the archive."
SAVE = Tool("save_article", "Save the article.", {"type": "object", "properties": {"body": {"type": "string"}}})
SECRET_ARGUMENT = "Kunde harbour draft 7731"
# A JSON answer (SPEC §11.8): its forbidden term written as a JSON escape, which every parser decodes.
CITY = {"type": "object", "properties": {"city": {"type": "string"}, "street": {"type": "string"}},
        "required": ["city", "street"]}
ESCAPED_JSON = '{"city": "\\u0052abatt", "street": "Holstenstrasse 12"}'
CLEAN_JSON = '{"city": "\\u004biel", "street": "Holstenstrasse 12"}'
GITHUB_KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def deny(rule: int, passage: str) -> dict:
    return {"for_model": "judge-model", "text": json.dumps({"violations": [{"rule": rule, "passage": passage}]})}


# --- the policies a case sets up on `newsroom` ---
def brand_words(configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])


def masthead(configuration):
    TermList.objects.create(name="Masthead", required="Harbour Gazette",
                            message="Name the paper.").configurations.set([configuration])


def discount_words(configuration):
    TermList.objects.create(name="Discounts", forbidden="Rabatt", message="No discounts.").configurations.set(
        [configuration])


def judged(mode: str):
    def setup(configuration):
        Snippet.objects.create(identifier="house_style", name="House style", tags=["style"],
                               body="Headlines carry no exclamation mark.\nNever promise a delivery date.")
        Configuration.objects.create(identifier="style-judge", provider=configuration.provider, model="judge-model")
        configuration.rule_tags = ["style"]
        configuration.rule_mode = mode
        configuration.save()
        set_links(configuration, "rule_judges", ["style-judge"])
    return setup


def unrelated_list(configuration):
    """A term list that applies and matches nothing: the stream is held (SPEC §8.1)."""
    TermList.objects.create(name="Unrelated", forbidden="Zzyzxq").configurations.set([configuration])


@dataclass(frozen=True)
class Case:
    name: str
    ask: Ask
    script: list  # what the provider answers (tests/provider_server.py entries)
    setup: Callable | None = None
    deliveries: tuple = ("plain", "held", "live")  # held needs a list or block mode; live neither
    status: int = 200
    outcome: str | None = None
    text: str | None = None  # the text the client receives
    tool_calls: list = field(default_factory=list)
    hints: frozenset = frozenset()  # {(check, type)}
    message: str | None = None  # a part of the block message
    events: frozenset = frozenset()  # {(decision, check)} logged for the request
    # strings no byte sent to the client may contain (the block message names a forbidden term itself)
    never_sent: tuple = ()
    unsupported_param: bool = False


CASES = (
    Case("allowed", Ask("Write about the harbour."), [{"text": CLEAN}], outcome="allowed", text=CLEAN),
    Case("report_hints", Ask("Write about the harbour."),
         [{"for_model": "test-model", "text": CLEAN}, deny(2, "first ferries left on time")], setup=judged("report"),
         outcome="allowed_with_hints", text=CLEAN, hints=frozenset({("rules_judge", "violation")}),
         events=frozenset({("reported", "rules_judge")})),
    Case("term_list_block", Ask("Write about the harbour."), [{"text": FORBIDDEN}], setup=brand_words,
         deliveries=("plain", "held"), outcome="blocked", text="", message="Say customer.",
         events=frozenset({("blocked", "term_list")}), never_sent=("Dear Kunde", "fish market")),
    # A character a reader never sees inside the term hides nothing (issue 41; termlists/invisible.py).
    *(Case(f"term_list_block_hidden_by_u{ord(char):04x}", Ask("Write about the harbour."),
           [{"text": FORBIDDEN.replace("Kunde", f"Ku{char}nde")}], setup=brand_words, deliveries=("plain", "held"),
           outcome="blocked", text="", message="Say customer.", events=frozenset({("blocked", "term_list")}),
           never_sent=(f"Ku{char}nde", "fish market")) for char in ("\u034f", "\u3164", "\U000e0100")),
    Case("judge_block", Ask("Write about the harbour."),
         [{"for_model": "test-model", "text": CLEAN}, deny(2, "first ferries left on time")], setup=judged("block"),
         deliveries=("plain", "held"), outcome="blocked", text="", message="delivery date",
         events=frozenset({("blocked", "rules_judge")}), never_sent=("fish market", "tourists")),
    Case("tool_argument_block", Ask("Save an article about the harbour.", tools=(SAVE,)),
         [{"tool_calls": [{"id": "call_1", "name": "save_article", "arguments": {"body": SECRET_ARGUMENT}}]}],
         setup=brand_words, deliveries=("plain", "held"), outcome="blocked", text="", message="Say customer.",
         events=frozenset({("blocked", "term_list")}), never_sent=(SECRET_ARGUMENT, "draft 7731")),
    Case("required_term", Ask("Write about the harbour."), [{"text": CLEAN}], setup=masthead,
         deliveries=("plain", "held"), outcome="blocked", text="", message="Harbour Gazette",
         events=frozenset({("blocked", "term_list")}), never_sent=("fish market",)),
    Case("redaction", Ask("Write about the harbour."), [{"text": WITH_KEY}],
         outcome="allowed", text=WITH_KEY.replace(KEY, "sk-***"),
         events=frozenset({("redacted", "secret_redaction")}), never_sent=(KEY, KEY[3:20])),
    # An answer the client asked to be JSON is screened as JSON: its strings decoded, `\\u` escapes included.
    Case("json_escape_block", Ask("Where is the shop?", json_schema=CITY), [{"text": ESCAPED_JSON}],
         setup=discount_words, deliveries=("plain", "held"), outcome="blocked", text="", message="No discounts.",
         events=frozenset({("blocked", "term_list")}), never_sent=("u0052abatt", "Holstenstrasse")),
    Case("json_clean", Ask("Where is the shop?", json_schema=CITY), [{"text": CLEAN_JSON}], setup=discount_words,
         deliveries=("plain", "held"), outcome="allowed", text=CLEAN_JSON),
    # A tool call's name and id are redacted and screened like its arguments (SPEC §11.8, §8.2).
    Case("tool_name_key", Ask("Save an article about the harbour.", tools=(SAVE,)),
         [{"tool_calls": [{"id": "call_" + GITHUB_KEY, "name": "save_" + GITHUB_KEY,
                           "arguments": {"body": "Harbour notes."}}]}],
         outcome="allowed", text="", tool_calls=[{"name": "save_ghp_***", "arguments": {"body": "Harbour notes."}}],
         events=frozenset({("redacted", "secret_redaction")}), never_sent=(GITHUB_KEY, GITHUB_KEY[4:20])),
    Case("tool_name_block", Ask("Save an article about the harbour.", tools=(SAVE,)),
         [{"tool_calls": [{"id": "call_1", "name": "kunde-save", "arguments": {"body": "Harbour draft 7731."}}]}],
         setup=brand_words, deliveries=("plain", "held"), outcome="blocked", text="", message="Say customer.",
         events=frozenset({("blocked", "term_list")}), never_sent=("kunde-save", "draft 7731")),
    # A text answer of a run that offers tools but proposes no call is finished text (SPEC §8.2).
    *(Case(f"required_term_tools_{choice}", Ask("Write about the harbour.", tools=(SAVE,), tool_choice=choice),
           [{"text": CLEAN}], setup=masthead, deliveries=("plain", "held"), outcome="blocked", text="",
           message="Harbour Gazette", events=frozenset({("blocked", "term_list")}), never_sent=("fish market",))
      for choice in ("none", "auto")),
    Case("required_term_not_asked_of_a_tool_call", Ask("Save an article about the harbour.", tools=(SAVE,)),
         [{"tool_calls": [{"id": "call_1", "name": "save_article", "arguments": {"body": CLEAN}}]}], setup=masthead,
         deliveries=("plain", "held"), outcome="allowed", text="",
         tool_calls=[{"name": "save_article", "arguments": {"body": CLEAN}}]),
    Case("unsupported_parameter", Ask("Write about the harbour.", unsupported=True), [{"text": CLEAN}],
         status=400, unsupported_param=True),
)


def run_case(client, adapter, case: Case, *, stream: bool, token: str) -> Outcome:
    path, headers, body = adapter.build(case.ask, stream=stream, token=token)
    response = client.post(path, data=json.dumps(body), content_type="application/json", headers=headers)
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return adapter.read(response.status_code, content, stream=stream)


# Every protocol × case × delivery the case can have (a term list or block mode holds a stream).
RUNS = [pytest.param(protocol, case, delivery, id=f"{protocol}-{case.name}-{delivery}")
        for protocol in ADAPTERS for case in CASES for delivery in case.deliveries]


@pytest.mark.parametrize("protocol, case, delivery", RUNS)
def test_one_verdict_on_every_protocol(protocol, case, delivery, client, configuration, make_consumer,
                                       provider_server):
    adapter = ADAPTERS[protocol]
    _consumer, token = make_consumer("newsroom-app", [configuration])
    if case.setup:
        case.setup(configuration)
    if delivery == "held":
        unrelated_list(configuration)
    provider_server.script([dict(entry) for entry in case.script])

    got = run_case(client, adapter, case, stream=delivery != "plain", token=token)

    for secret in case.never_sent:
        assert secret.encode() not in got.raw, f"{secret!r} reached the client"
    if case.unsupported_param:
        assert got.status == 400, got.raw
        assert got.error["param"] == adapter.unsupported[0]
        assert got.error["code"] == "unsupported_parameter"
        assert adapter.unsupported[0] in got.error["message"]
        assert not provider_server.chat_requests and not GovernanceEvent.objects.exists()
        return
    assert got.status == case.status, got.raw
    assert got.error is None, got.error
    assert got.outcome == case.outcome
    assert {(hint["check"], hint["type"]) for hint in got.hints} == case.hints
    assert got.text == case.text
    if delivery == "held":
        assert got.text_chunks <= 1
    elif delivery == "live" and case.text:
        assert got.text_chunks > 1, "a live stream sends the provider's deltas as they come"
    assert got.tool_calls == case.tool_calls
    if case.message:
        assert case.message in got.message
        assert got.message == got.gavel["block"]["message"]
    else:
        assert got.message is None and got.gavel["block"] is None
    logged = GovernanceEvent.objects.filter(correlation_id=got.gavel["id"])
    assert {(event.decision, event.check_name) for event in logged} == case.events
    # A delivered text leaves one evidence record naming the protocol it left by; a held block and an
    # answer that is only tool calls (no text to record) leave none.
    evidence = EvidenceRecord.objects.filter(correlation_id=got.gavel["id"])
    if case.outcome != "blocked" and case.text:
        assert [(e.surface, e.outcome) for e in evidence] == [(adapter.name, case.outcome)]
    else:
        assert not evidence.exists()


def test_every_protocol_has_an_adapter():
    """Adding a protocol = one adapter module: the suite finds it by itself."""
    # A protocol is a package; a module beside them (presentation.py) is shared by all of them.
    # The MCP gateway (mcp) carries tool calls, not answers: tests/protocols/test_mcp_gateway.py is its suite.
    protocols = {module.name for module in pkgutil.iter_modules(governance.protocols.__path__)
                 if module.ispkg and module.name != "mcp"}
    assert protocols == {"openai_chat", "openai_responses", "anthropic"}
    assert set(ADAPTERS) == protocols
    for adapter in ADAPTERS.values():
        assert adapter.name and adapter.unsupported[0]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "held"])
def test_rest_completions_hold_a_text_answer_of_a_tool_run_to_the_required_terms(stream, client, configuration,
                                                                                  make_consumer, provider_server):
    """The fourth protocol, POST /api/v1/completions (no `tool_choice` there: the model answers with
    text although tools are offered): the text is finished text and lacks the required term (SPEC §8.2)."""
    _consumer, token = make_consumer("newsroom-app", [configuration])
    masthead(configuration)
    provider_server.script([{"text": CLEAN}])
    tools = [{"type": "function", "function": {"name": SAVE.name, "parameters": SAVE.parameters}}]
    response = client.post("/api/v1/completions", data=json.dumps({
        "configuration": "newsroom", "messages": [{"role": "user", "content": "Write about the harbour."}],
        "tools": tools, "stream": stream}), content_type="application/json",
        headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"fish market" not in raw
    if stream:
        events = [(name, json.loads(data)) for name, data in sse_events(raw)]
        assert [name for name, _data in events] == ["blocked", "done"]
        body = events[-1][1]
    else:
        body = json.loads(raw)
    assert body["outcome"] == "blocked" and "Harbour Gazette" in body["block"]["message"]
    assert response["X-Gavel-Outcome"] == "blocked"

