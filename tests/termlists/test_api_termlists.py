"""Term lists through the REST API (SPEC §5.1, §5.3, §5.4, §8.1, §8.2): what a caller of
POST /api/v1/screenings and POST /api/v1/completions sees, and what the governance log keeps.
"""
import json

import pytest
from django.db import connection
from django.db.utils import OperationalError, ProgrammingError
from rest_framework.test import APIClient

from governance.models import Configuration, GovernanceEvent
from termlists import services
from termlists.models import TermList

# Thirty-five words, none of them a term below; "zebracorn" marks the text so a test can tell
# whether any of it leaked into a message or an event.
FILLER = (
    "zebracorn quietly walks across the wide green meadow while seven small birds sing about "
    "weather rivers mountains bread cheese lanterns windows doors gardens tables chairs books "
    "letters stamps clocks candles ribbons buttons pebbles shells acorns"
)
assert len(FILLER.split()) == 35


def long_text(*extra: str) -> str:
    return " ".join([FILLER, *extra])


@pytest.fixture
def make_list(db, configuration):
    def make(name="Brand", forbidden="", required="", configurations=None, **fields):
        term_list = TermList(name=name, forbidden=forbidden, required=required, **fields)
        term_list.full_clean(exclude=["configurations"])
        term_list.save()
        term_list.configurations.set(configurations if configurations is not None else [configuration])
        return term_list

    return make


@pytest.fixture
def second(db, provider):
    return Configuration.objects.create(identifier="shop", provider=provider, model="test-model")


@pytest.fixture
def api_both(db, configuration, second, make_consumer):
    """A client granted `newsroom` and `shop`."""
    consumer, token = make_consumer("both-app", [configuration, second])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def screen(client, text, **body):
    body = {"text": text, "configuration": "newsroom", **body}
    if body["configuration"] is None:
        del body["configuration"]
    headers = {"HTTP_ACCEPT_LANGUAGE": body.pop("accept_language")} if "accept_language" in body else {}
    response = client.post("/api/v1/screenings", body, format="json", **headers)
    assert response.status_code == 200, response.content
    return response.json()


def check_result(body, name="term_list"):
    return next(entry for entry in body["checks"] if entry["check"] == name)


def term_events():
    return list(GovernanceEvent.objects.filter(check_name="term_list").order_by("id"))


# --- scope (SPEC §5.1) ---
def test_a_list_blocks_a_forbidden_term_on_its_configuration(api, make_list):
    make_list(forbidden="Kunde")
    body = screen(api, "Der Kunde zahlt.")
    assert body["outcome"] == "blocked"
    assert "text" not in body
    assert body["block"]["check"] == "term_list"
    assert check_result(body) == {"check": "term_list", "result": "blocked"}


def test_a_list_on_another_configuration_does_not_apply(api, make_list, second):
    make_list(forbidden="Kunde", configurations=[second])
    body = screen(api, "Der Kunde zahlt.")
    assert body["outcome"] == "allowed"
    assert check_result(body) == {"check": "term_list", "result": "skipped", "reason": "no_list"}


def test_a_list_on_a_configuration_named_in_also_applies(api_both, make_list, second):
    make_list(forbidden="Kunde", configurations=[second])
    assert screen(api_both, "Der Kunde zahlt.", also=["shop"])["outcome"] == "blocked"
    assert screen(api_both, "Der Kunde zahlt.")["outcome"] == "allowed"


def test_lists_of_the_configuration_and_of_also_all_apply(api_both, make_list, second):
    make_list(name="Newsroom list", forbidden="Kunde")
    make_list(name="Shop list", forbidden="Rabatt", configurations=[second])
    body = screen(api_both, "Kunde und Rabatt", also=["shop"])
    assert "Newsroom list" in body["block"]["message"]
    assert "Shop list" in body["block"]["message"]


def test_no_configuration_on_a_call_means_no_list(api, make_list):
    make_list(forbidden="Kunde")
    body = screen(api, "Der Kunde zahlt.", configuration=None)
    assert body["outcome"] == "allowed"
    assert check_result(body)["reason"] == "no_list"


def test_an_inactive_list_does_not_apply(api, make_list):
    make_list(forbidden="Kunde", is_active=False)
    assert screen(api, "Der Kunde zahlt.")["outcome"] == "allowed"


@pytest.mark.parametrize(
    ("call_site", "forbidden_applies", "required_applies"),
    [
        ("blog", True, True),  # the list's own site: the whole list
        ("shop", False, False),  # another site: the list does not apply at all
        ("", True, False),  # no site stated: forbidden terms only
        ("Blog", False, False),  # a slug compared exactly
    ],
)
def test_site_narrows_a_list(api, make_list, call_site, forbidden_applies, required_applies):
    make_list(forbidden="Kunde", required="Impressum", site="blog")
    body = screen(api, long_text("Kunde"), site=call_site)
    assert (body["outcome"] == "blocked") is forbidden_applies
    body = screen(api, long_text(), site=call_site)  # no forbidden term, the required one missing
    assert (body["outcome"] == "blocked") is required_applies


@pytest.mark.parametrize(
    ("list_language", "call_language", "forbidden_applies", "required_applies"),
    [
        ("de", "de", True, True),
        ("de", "de-AT", True, True),  # a regional form of the list's language
        ("de", "DE-at", True, True),  # case aside
        ("de", "de_CH", True, True),
        ("DE", "de", True, True),
        # Another language: the forbidden terms still apply, the required ones do not (issue 41: a stated
        # language never switches a list off; docs/termlists.md, Scope).
        ("de", "en", True, False),
        ("de", "den", True, False),  # a prefix is not a regional form
        ("de-AT", "de", True, False),  # a narrower list does not widen to the plain language
        ("de-AT", "de-CH", True, False),
        ("de", "", True, False),  # no language stated: forbidden terms only
    ],
)
def test_language_decides_a_lists_required_terms(api, make_list, list_language, call_language, forbidden_applies, required_applies):
    make_list(forbidden="Kunde", required="Impressum", language=list_language)
    body = screen(api, long_text("Kunde"), language=call_language)
    assert (body["outcome"] == "blocked") is forbidden_applies
    body = screen(api, long_text(), language=call_language)
    assert (body["outcome"] == "blocked") is required_applies


def test_site_and_language_together_need_both_stated_for_required_terms(api, make_list):
    make_list(required="Impressum", site="blog", language="de")
    assert screen(api, long_text(), site="blog", language="de-AT")["outcome"] == "blocked"
    assert screen(api, long_text(), site="blog")["outcome"] == "allowed"
    assert screen(api, long_text(), language="de")["outcome"] == "allowed"
    assert screen(api, long_text(), site="shop", language="de")["outcome"] == "allowed"


# --- where it looks (SPEC §5.3) ---
def test_markup_does_not_hide_a_forbidden_term(api, make_list):
    make_list(forbidden="Kunde")
    assert screen(api, "Der <b>Kun</b>de&shy; zahlt.")["outcome"] == "blocked"


def test_a_json_answer_is_searched_as_delivered_and_decoded(api, make_list):
    make_list(forbidden="Kunde")
    escaped = '{"title": "Der \\u004bunde zahlt"}'
    assert "Kunde" not in escaped
    assert screen(api, escaped, format="json")["outcome"] == "blocked"
    assert screen(api, '{"Kunde": "key, not value"}', format="json")["outcome"] == "blocked"  # as delivered


def test_a_json_key_is_searched_decoded(api, make_list):
    make_list(forbidden="Kunde")
    body = screen(api, '{"\\u004bunde": 1}', format="json")
    assert body["outcome"] == "blocked"
    assert "Kunde" in body["block"]["message"]


def test_every_value_of_a_duplicate_json_key_is_searched(api, make_list):
    make_list(forbidden="Kunde")
    assert screen(api, '{"a": "Der \\u004bunde", "a": "fine"}', format="json")["outcome"] == "blocked"


def test_required_terms_only_in_finished_text(api, make_list):
    make_list(required="Impressum")
    words_29 = " ".join(FILLER.split()[:29])
    words_30 = " ".join(FILLER.split()[:30])
    assert screen(api, words_29)["outcome"] == "allowed"
    body = screen(api, words_30)
    assert body["outcome"] == "blocked"
    assert "Impressum" in body["block"]["message"]
    assert screen(api, long_text("Impressum"))["outcome"] == "allowed"


def test_words_are_counted_after_markup_removal(api, make_list):
    make_list(required="Impressum")
    words_29 = " ".join(f"<p>{word}</p>" for word in FILLER.split()[:29])
    assert screen(api, words_29)["outcome"] == "allowed"


def test_a_required_term_is_found_behind_markup(api, make_list):
    make_list(required="Impressum")
    assert screen(api, long_text("Impres<i>sum</i>"))["outcome"] == "allowed"


def test_a_json_answer_is_not_asked_for_required_terms(api, make_list):
    make_list(required="Impressum")
    document = json.dumps({"body": long_text()})
    assert screen(api, document, format="json")["outcome"] == "allowed"


@pytest.mark.parametrize("kind", ["image_description", "internal"])
def test_image_descriptions_and_internal_outputs_get_forbidden_terms_only(granted_api, make_list, kind):
    make_list(forbidden="Kunde", required="Impressum")
    assert screen(granted_api, long_text(), kind=kind)["outcome"] == "allowed"
    assert screen(granted_api, long_text("Kunde"), kind=kind)["outcome"] == "blocked"


@pytest.mark.parametrize("kind", ["completion", "queued_task", "field_fill"])
def test_finished_text_of_other_kinds_is_asked_for_required_terms(api, make_list, kind):
    make_list(required="Impressum")
    assert screen(api, long_text(), kind=kind)["outcome"] == "blocked"


def test_tool_call_arguments_are_searched(api, make_list):
    make_list(forbidden="Kunde")
    calls = [{"id": "c1", "name": "save_page", "arguments": {"page": {"title": "Ok", "body": ["x", "Der Kunde"]}}}]
    body = screen(api, "Done.", tool_calls=calls)
    assert body["outcome"] == "blocked"
    assert "tool_calls" not in body


def test_tool_call_arguments_as_a_json_string_are_searched(api, make_list):
    make_list(forbidden="Kunde")
    calls = [{"name": "save_page", "arguments": json.dumps({"body": "Der \u004bunde"})}]
    assert screen(api, "Done.", tool_calls=calls)["outcome"] == "blocked"


def test_tool_call_argument_keys_are_searched_decoded(api, make_list):
    make_list(forbidden="Kunde")
    escaped_key = '{"page": {"\\u004bunde": "x"}}'
    assert screen(api, "Done.", tool_calls=[{"name": "save_page", "arguments": escaped_key}])["outcome"] == "blocked"
    assert screen(api, "Done.", tool_calls=[{"name": "save_page", "arguments": {"Kunde": "x"}}])["outcome"] == "blocked"
    duplicate = '{"body": "Der \\u004bunde", "body": "fine"}'
    assert screen(api, "Done.", tool_calls=[{"name": "save_page", "arguments": duplicate}])["outcome"] == "blocked"


def test_report_hint_on_a_tool_argument_key_names_its_member(api, make_list):
    make_list(forbidden="Kunde", mode="report")
    calls = [{"name": "save_page", "arguments": '{"page": {"\\u004bunde": "x"}}'}]
    (hint,) = screen(api, "Saved.", tool_calls=calls)["hints"]
    assert (hint["tool_call"], hint["argument"], hint["passage"]) == (0, "page.Kunde", "Kunde")


def test_a_search_for_a_forbidden_term_is_stopped_too(api, make_list):
    make_list(forbidden="Kunde")
    calls = [{"name": "search", "arguments": {"query": "Kunde"}}]
    assert screen(api, "Looking.", tool_calls=calls)["outcome"] == "blocked"


# --- runs that offer tools (SPEC §8.2) ---
def test_in_a_tool_run_the_answer_is_searched_for_forbidden_terms(api, make_list):
    # Formerly a tool run's answer was not searched at all: a dummy tool switched the list off.
    make_list(forbidden="Kunde")
    assert screen(api, long_text("Kunde"))["outcome"] == "blocked"
    body = screen(api, long_text("Kunde"), offers_tools=True)
    assert body["outcome"] == "blocked"
    assert "text" not in body and body["block"]["check"] == "term_list"


def test_in_a_tool_run_an_answer_proposing_a_call_is_not_asked_for_required_terms(api, make_list):
    # Not finished text (SPEC §3, §8.2): an answer that proposes a tool call is searched, never asked to
    # carry a term.
    make_list(required="Impressum")
    assert screen(api, long_text("Hallo"))["outcome"] == "blocked"
    calls = [{"id": "w", "name": "save_page", "arguments": {"body": "Draft."}}]
    body = screen(api, long_text("Hallo"), offers_tools=True, tool_calls=calls)
    assert body["outcome"] == "allowed"
    assert body["text"] == long_text("Hallo")


def test_in_a_tool_run_a_text_answer_with_no_call_must_hold_the_required_terms(api, make_list):
    # SPEC §8.2 (amended): offering tools does not switch required terms off; a text answer is finished text.
    make_list(required="Impressum")
    body = screen(api, long_text("Hallo"), offers_tools=True)
    assert body["outcome"] == "blocked" and "Impressum" in body["block"]["message"]
    assert screen(api, long_text("Impressum"), offers_tools=True)["outcome"] == "allowed"


def test_in_a_tool_run_write_arguments_are_searched_and_a_block_returns_no_tool_call(api, make_list):
    make_list(forbidden="Kunde", message="Say client.")
    calls = [
        {"id": "r", "name": "read_page", "arguments": {"id": "1"}},
        {"id": "w", "name": "save_page", "arguments": {"body": "Der Kunde"}},
    ]
    body = screen(api, "I saved the page.", tool_calls=calls, offers_tools=True, read_tools=["read_page"])
    assert body["outcome"] == "blocked"
    assert "tool_calls" not in body and "text" not in body
    message = body["block"]["message"]
    assert message.startswith("The term list “Brand” does not allow: Kunde. Say client.")
    assert message.endswith("The change was not proposed.")


def test_in_a_tool_run_a_declared_read_tool_is_exempt(api, make_list):
    make_list(forbidden="Kunde")
    declare_reads("search")
    calls = [{"name": "search", "arguments": {"query": "Kunde"}}]
    body = screen(api, "Searching.", tool_calls=calls, offers_tools=True, read_tools=["search"])
    assert body["outcome"] == "allowed"
    assert body["tool_calls"] == calls


def test_in_a_tool_run_an_undeclared_tool_is_screened(api, make_list):
    make_list(forbidden="Kunde")
    calls = [{"name": "search", "arguments": {"query": "Kunde"}}]
    body = screen(api, "Searching.", tool_calls=calls, offers_tools=True, read_tools=["read_page"])
    assert body["outcome"] == "blocked"


def test_in_a_tool_run_required_terms_are_not_demanded(api, make_list):
    make_list(required="Impressum")
    calls = [{"name": "save_page", "arguments": {"body": long_text()}}]
    assert screen(api, long_text(), tool_calls=calls, offers_tools=True)["outcome"] == "allowed"


# --- the block (SPEC §5.4) ---
def test_the_block_names_list_and_terms_and_never_the_text(api, make_list):
    make_list(forbidden="Kunde\nRabatt*\nPreis", message="Write “client” instead.")
    body = screen(api, "Hallo KUNDE zebracorn, die Rabattaktion läuft.")
    block = body["block"]
    assert block["message"] == "The term list “Brand” does not allow: Kunde, Rabatt*. Write “client” instead."
    assert block["stored_message"] == block["message"]
    assert "zebracorn" not in json.dumps(body)
    assert "KUNDE" not in json.dumps(body)
    assert body["hints"] == []


def test_the_block_names_required_terms_missing(api, make_list):
    make_list(required="Impressum\nDatenschutz", forbidden="Kunde")
    body = screen(api, long_text("Datenschutz"))
    assert body["block"]["message"] == "The term list “Brand” requires: Impressum."
    body = screen(api, long_text("Kunde"))
    assert body["block"]["message"] == (
        "The term list “Brand” does not allow: Kunde. The term list “Brand” requires: Impressum, Datenschutz."
    )


def test_several_lists_hit_each_is_named(api, make_list):
    make_list(name="Alpha", forbidden="Kunde", message="Alpha says.")
    make_list(name="Beta", forbidden="Rabatt")
    make_list(name="Gamma", forbidden="Preis")
    body = screen(api, "Kunde und Rabatt")
    assert body["block"]["message"] == (
        "The term list “Alpha” does not allow: Kunde. Alpha says. The term list “Beta” does not allow: Rabatt."
    )
    events = term_events()
    assert [(e.decision, e.detail["list"]) for e in events] == [("blocked", "Alpha"), ("blocked", "Beta")]


def test_the_block_is_written_in_the_readers_language(api, make_list):
    make_list(forbidden="Kunde", required="Impressum", message="Bitte „Klient“ schreiben.")
    body = screen(api, long_text("Kunde"), accept_language="de")
    assert body["block"]["message"] == (
        "Die Begriffsliste „Brand“ erlaubt nicht: Kunde. Die Begriffsliste „Brand“ verlangt: Impressum. "
        "Bitte „Klient“ schreiben."
    )
    calls = [{"name": "save_page", "arguments": {"body": "Kunde"}}]
    body = screen(api, "ok", tool_calls=calls, offers_tools=True, accept_language="de-AT")
    assert body["block"]["message"].endswith("Die Änderung wurde nicht vorgeschlagen.")


def test_a_block_is_recorded_with_list_and_terms_only(api, make_list):
    make_list(forbidden="Kunde\nRabatt", required="Impressum")
    screen(api, long_text("Kunde"))
    (event,) = term_events()
    assert event.decision == "blocked"
    assert event.mode == "block"
    assert event.configuration == "newsroom"
    assert event.detail == {"list": "Brand", "terms": ["Kunde"], "missing": ["Impressum"]}


def test_the_event_names_the_configuration_through_which_the_list_applies(api_both, make_list, second):
    make_list(forbidden="Kunde", configurations=[second])
    screen(api_both, "Kunde", also=["shop"])
    assert term_events()[0].configuration == "shop"


def test_governance_events_hold_no_generated_text(api, make_list):
    make_list(name="Blocker", forbidden="Kunde")
    make_list(name="Shadow", forbidden="Rabatt", required="Impressum", mode="report")
    calls = [{"name": "save_page", "arguments": {"body": "zebracorn Rabatt quokkaflux"}}]
    screen(api, long_text("Kunde quokkaflux"), tool_calls=calls)
    screen(api, long_text("Rabatt quokkaflux"))
    events = list(GovernanceEvent.objects.all())
    assert {e.decision for e in events} >= {"blocked", "reported"}
    stored = json.dumps([[e.detail, e.actor, e.model, e.provider, e.configuration] for e in events])
    for word in {"zebracorn", "quokkaflux", "meadow", "lanterns"}:
        assert word not in stored


# --- report mode (a shadow mode) ---
def test_report_mode_delivers_with_hints_and_records_reported(api, make_list):
    make_list(forbidden="Kunde", required="Impressum", mode="report", message="Say client.")
    text = long_text("Der Kunde")
    body = screen(api, text)
    assert body["outcome"] == "allowed_with_hints"
    assert body["text"] == text
    assert body["block"] is None
    assert check_result(body) == {"check": "term_list", "result": "reported"}
    # One hint per list (SPEC §11.1): the forbidden terms found, and the required ones missing with them.
    (hint,) = body["hints"]
    start = text.index("Kunde")
    assert hint == {
        "check": "term_list", "type": "forbidden", "configuration": "newsroom", "list": "Brand",
        "terms": ["Kunde"], "missing": ["Impressum"], "passage": "Kunde", "start": start, "end": start + 5,
        "message": "The term list “Brand” does not allow: Kunde. The term list “Brand” requires: Impressum. "
                   "Say client. (report mode: the text was delivered)",
    }
    (event,) = term_events()
    assert (event.decision, event.mode) == ("reported", "report")
    assert event.detail == {"list": "Brand", "terms": ["Kunde"], "missing": ["Impressum"]}


def test_report_mode_with_only_required_terms_missing(api, make_list):
    make_list(forbidden="Kunde", required="Impressum", mode="report")
    (hint,) = screen(api, long_text())["hints"]
    assert hint == {
        "check": "term_list", "type": "missing_required", "configuration": "newsroom", "list": "Brand",
        "terms": ["Impressum"], "passage": None, "start": None, "end": None,
        "message": "The term list “Brand” requires: Impressum. (report mode: the text was delivered)",
    }


def test_report_hint_passage_is_the_occurrence_as_written_in_the_text(api, make_list):
    make_list(forbidden="rabatt*", mode="report")
    text = "Unsere RABATTAKTION\nläuft"
    hint = screen(api, text)["hints"][0]
    assert hint["passage"] == "RABATTAKTION"
    assert text[hint["start"]:hint["end"]] == "RABATTAKTION"


@pytest.mark.parametrize(
    ("term", "text", "passage", "start"),
    [
        # A combining mark belongs to its word: the first `Kunde` is `Kundé`, the hit is the second.
        ("Kunde", "Kunde\u0301 und Kunde", "Kunde", 11),
        # A trailing `*` takes marks and letters alike: the whole word is quoted.
        ("cafe*", "cafe\u0301x", "cafe\u0301x", 0),
    ],
)
def test_report_hint_points_at_the_hit_the_matcher_counts(api, make_list, term, text, passage, start):
    make_list(forbidden=term, mode="report")
    (hint,) = screen(api, text)["hints"]
    assert (hint["passage"], hint["start"], hint["end"]) == (passage, start, start + len(passage))


def test_report_hint_offsets_are_null_when_the_passage_is_not_verbatim_in_the_text(api, make_list):
    make_list(forbidden="Kunde", mode="report")
    hint = screen(api, "Der Kun<b>de</b> zahlt")["hints"][0]
    assert hint["passage"] == "Kunde"
    assert hint["start"] is None and hint["end"] is None


def test_report_hint_on_a_tool_argument_names_the_call_and_argument(api, make_list):
    make_list(forbidden="Kunde", mode="report")
    calls = [
        {"name": "save_page", "arguments": {"title": "fine"}},
        {"name": "save_page", "arguments": {"page": {"blocks": ["ok", "Der Kunde"]}}},
    ]
    body = screen(api, "Saved.", tool_calls=calls, offers_tools=True)
    assert body["outcome"] == "allowed_with_hints"
    assert body["tool_calls"] == calls
    (hint,) = body["hints"]
    assert hint["tool_call"] == 1
    assert hint["argument"] == "page.blocks[1]"
    assert hint["passage"] == "Kunde"


def test_a_report_list_and_a_blocking_list_together(api, make_list):
    make_list(name="Blocker", forbidden="Kunde")
    make_list(name="Shadow", forbidden="Kunde", mode="report")
    body = screen(api, "Der Kunde")
    assert body["outcome"] == "blocked"
    assert "Blocker" in body["block"]["message"] and "Shadow" not in body["block"]["message"]
    assert sorted(e.decision for e in term_events()) == ["blocked", "reported"]


def test_a_clean_text_passes(api, make_list):
    make_list(forbidden="Kunde", required="Impressum")
    body = screen(api, long_text("Impressum Kundenkonto"))
    assert body["outcome"] == "allowed"
    assert check_result(body) == {"check": "term_list", "result": "passed"}
    assert term_events() == []


# --- fail closed, and the one exception (SPEC §4) ---
def test_lists_that_cannot_be_read_block(api, make_list, monkeypatch):
    make_list(forbidden="Kunde")

    def broken(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(services, "_scope_rows", broken)
    body = screen(api, "a harmless zebracorn text")
    assert body["outcome"] == "blocked"
    assert body["block"]["message"] == "The term lists could not be checked, so the text was stopped."
    assert check_result(body) == {"check": "term_list", "result": "blocked", "reason": "check_failed"}
    (event,) = term_events()
    assert (event.decision, event.detail) == ("blocked", {"reason": "check_failed"})


def test_a_matcher_that_gives_up_blocks(api, make_list, monkeypatch):
    make_list(forbidden="Kunde")

    def gives_up(self, text):
        raise RecursionError("matcher gave up")

    monkeypatch.setattr("termlists.matcher.TermMatcher.find", gives_up)
    monkeypatch.setattr("termlists.matcher.TermMatchers.find", gives_up)  # the lists in scope, searched together
    calls = [{"name": "save_page", "arguments": {"body": "fine"}}]
    body = screen(api, "fine", tool_calls=calls)
    assert body["outcome"] == "blocked"
    assert "tool_calls" not in body
    assert body["block"]["message"] == (
        "The term lists could not be checked, so the text was stopped. The change was not proposed."
    )


def test_a_stored_term_the_contract_refuses_blocks(api, make_list):
    term_list = make_list(forbidden="Kunde")
    TermList.objects.filter(pk=term_list.pk).update(forbidden="Kun*de")  # bypasses validation
    term_list.refresh_from_db()
    term_list.save()  # a new version, so the matcher is compiled again
    body = screen(api, "fine")
    assert check_result(body)["reason"] == "check_failed"


@pytest.mark.parametrize(
    "error",
    [
        ProgrammingError('relation "termlists_termlist" does not exist'),
        ProgrammingError('relation "termlists_termlist_configurations" does not exist'),
        OperationalError("no such table: termlists_termlist_configurations"),
    ],
)
def test_a_missing_table_passes_with_a_warning(api, monkeypatch, caplog, error):
    def missing(*args, **kwargs):
        raise error

    monkeypatch.setattr(services, "_scope_rows", missing)
    with caplog.at_level("WARNING", logger="gavel.termlists"):
        body = screen(api, "Der Kunde zahlt.")
    assert body["outcome"] == "allowed"
    assert check_result(body) == {"check": "term_list", "result": "skipped", "reason": "table_missing"}
    assert any("does not exist yet" in record.getMessage() for record in caplog.records)
    assert term_events() == []


def test_another_missing_table_is_not_that_exception(api, monkeypatch):
    def missing(*args, **kwargs):
        raise ProgrammingError('relation "governance_configuration" does not exist')

    monkeypatch.setattr(services, "_scope_rows", missing)
    assert screen(api, "Der Kunde zahlt.")["outcome"] == "blocked"


def test_a_missing_column_blocks(api, make_list):
    # The table holds a list, but a column the code reads is missing (a migration not run): the list
    # exists and cannot be read, so the text is stopped, not waved through as "no table yet".
    make_list(forbidden="Kunde")
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:  # undone with the test's transaction
        cursor.execute(f"ALTER TABLE {quote('termlists_termlist')} RENAME COLUMN {quote('mode')} TO {quote('mode_gone')}")
    body = screen(api, "Guten Tag.")
    assert body["outcome"] == "blocked"
    assert check_result(body) == {"check": "term_list", "result": "blocked", "reason": "check_failed"}
    assert body["block"]["message"] == "The term lists could not be checked, so the text was stopped."


# --- caching, invalidated by an edit (SPEC §5.5) ---
def test_an_edit_is_seen_by_the_next_screening(api, make_list):
    term_list = make_list(forbidden="Kunde")
    assert screen(api, "Der Rabatt")["outcome"] == "allowed"
    term_list.forbidden = "Kunde\nRabatt"
    term_list.save()
    assert screen(api, "Der Rabatt")["outcome"] == "blocked"
    term_list.forbidden = "Kunde"
    term_list.save()
    assert screen(api, "Der Rabatt")["outcome"] == "allowed"


def test_a_scope_change_is_seen_by_the_next_screening(api, make_list, second):
    term_list = make_list(forbidden="Kunde")
    assert screen(api, "Kunde")["outcome"] == "blocked"
    term_list.configurations.set([second])
    assert screen(api, "Kunde")["outcome"] == "allowed"
    term_list.configurations.add(Configuration.objects.get(identifier="newsroom"))
    assert screen(api, "Kunde")["outcome"] == "blocked"


def test_a_list_is_compiled_once_per_version(api, make_list, monkeypatch):
    term_list = make_list(forbidden="Kunde")
    compiled = []
    real = services.TermMatcher

    def counting(terms):
        compiled.append(terms)
        return real(terms)

    monkeypatch.setattr(services, "TermMatcher", counting)
    for _ in range(3):
        screen(api, "Der Kunde")
    assert len(compiled) == 2  # forbidden and required, once
    term_list.message = "edited"
    term_list.save()
    screen(api, "Der Kunde")
    assert len(compiled) == 4


# --- completions and streams (SPEC §8.1, §8.2) ---
@pytest.fixture
def provider_key(monkeypatch):
    # The test provider reads its key from this variable; the fake server accepts any key.
    monkeypatch.setenv("PROVIDER_TEST_API_KEY", "test-key")


def complete(client, **body):
    body = {"configuration": "newsroom", "messages": [{"role": "user", "content": "Write."}], **body}
    return client.post("/api/v1/completions", body, format="json")


def sse_events(response) -> list[tuple[str, dict]]:
    assert response["Content-Type"].startswith("text/event-stream")
    raw = b"".join(response.streaming_content).decode()
    events = []
    for block in raw.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_a_completion_with_a_forbidden_term_is_blocked(api, make_list, provider_server, provider_key):
    make_list(forbidden="Kunde")
    provider_server.script([{"text": "Der Kunde zebracorn zahlt."}])
    response = complete(api)
    assert response.status_code == 200
    body = response.json()
    assert body["outcome"] == "blocked"
    assert "text" not in body
    assert "zebracorn" not in json.dumps(body)
    assert body["completion"]["provider"] == "local-test"


def test_a_completion_proposing_a_forbidden_write_returns_no_tool_call(api, make_list, provider_server, provider_key):
    make_list(forbidden="Kunde")
    provider_server.script([{"text": "Saving.", "tool_calls": [{"name": "save_page", "arguments": {"body": "Kunde"}}]}])
    tools = [{"type": "function", "function": {"name": "save_page", "parameters": {"type": "object"}}}]
    body = complete(api, tools=tools).json()
    assert body["outcome"] == "blocked"
    assert "tool_calls" not in body
    assert body["block"]["message"].endswith("The change was not proposed.")


def test_a_stream_a_list_applies_to_is_held_and_sent_whole(api, make_list, provider_server, provider_key):
    make_list(forbidden="Kunde")
    chunks = ["Der ", "Kun", "denstamm ", "wächst ", "zebracorn."]
    provider_server.script([{"stream_chunks": chunks}])
    events = sse_events(complete(api, stream=True))
    assert [name for name, _ in events] == ["delta", "done"]
    assert events[0][1] == {"text": "".join(chunks)}
    assert events[1][1]["outcome"] == "allowed"
    assert "text" not in events[1][1]


def test_a_blocked_held_stream_sends_blocked_and_nothing_of_the_text(api, make_list, provider_server, provider_key):
    make_list(forbidden="Kunde")
    provider_server.script([{"stream_chunks": ["zebracorn ", "meets ", "the ", "Kun", "de."]}])
    response = complete(api, stream=True)
    events = sse_events(response)
    assert [name for name, _ in events] == ["blocked", "done"]
    assert events[0][1]["block"]["message"] == "The term list “Brand” does not allow: Kunde."
    assert events[1][1]["outcome"] == "blocked"
    assert "zebracorn" not in json.dumps(events)
    assert "meets" not in json.dumps(events)


def test_a_stream_no_list_applies_to_is_live(api, make_list, second, provider_server, provider_key):
    make_list(forbidden="Kunde", configurations=[second])
    chunks = ["Der ", "Kunde ", "zahlt."]
    provider_server.script([{"stream_chunks": chunks}])
    events = sse_events(complete(api, stream=True))
    deltas = [data["text"] for name, data in events if name == "delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "".join(chunks)


def test_a_stream_is_held_for_a_list_bound_to_a_site_the_call_does_not_state(
    api, make_list, provider_server, provider_key
):
    make_list(forbidden="Kunde", site="blog")
    provider_server.script([{"stream_chunks": ["a ", "b ", "c"]}])
    assert [name for name, _ in sse_events(complete(api, stream=True))] == ["delta", "done"]
    provider_server.script([{"stream_chunks": ["a ", "b ", "c"]}])
    events = sse_events(complete(api, stream=True, site="shop"))
    assert len([name for name, _ in events if name == "delta"]) > 1


def test_a_tool_run_stream_is_held_and_its_answer_searched(api, make_list, provider_server, provider_key):
    # Formerly a tool run streamed live and its answer went unsearched; now it is held and blocked.
    make_list(forbidden="Kunde")
    chunks = ["Der ", "Kunde ", "fragt."]
    provider_server.script([{"stream_chunks": chunks}])
    tools = [{"type": "function", "function": {"name": "save_page", "parameters": {"type": "object"}}}]
    events = sse_events(complete(api, stream=True, tools=tools))
    assert [name for name, _ in events] == ["blocked", "done"]
    assert events[-1][1]["outcome"] == "blocked" and "Kunde " not in json.dumps(events[-1][1].get("text", ""))
    provider_server.script([{"stream_chunks": ["Die ", "Leserin ", "fragt."]}])
    events = sse_events(complete(api, stream=True, tools=tools))
    assert [name for name, _ in events] == ["delta", "done"]
    assert events[0][1]["text"] == "Die Leserin fragt." and events[-1][1]["outcome"] == "allowed"


def test_a_tool_run_stream_proposing_a_forbidden_write_ends_blocked_without_text_or_tool_calls(
    api, make_list, provider_server, provider_key
):
    make_list(forbidden="Kunde")
    provider_server.script([{
        "stream_chunks": ["Saving ", "the ", "page."],
        "tool_calls": [{"id": "call_1", "name": "read_page", "arguments": {"path": "home"}},
                       {"id": "call_2", "name": "save_page", "arguments": {"body": "Der Kunde zebracorn"}}],
    }])
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
             for name in ("read_page", "save_page")]
    events = sse_events(complete(api, stream=True, tools=tools, read_tools=["read_page"]))
    names = [name for name, _ in events]
    # Held (SPEC §8.2): a block withholds the text and the calls alike.
    assert names == ["blocked", "done"]
    block = events[-2][1]["block"]
    assert block["check"] == "term_list"
    assert block["message"] == "The term list “Brand” does not allow: Kunde. The change was not proposed."
    done = events[-1][1]
    assert done["outcome"] == "blocked"
    assert "tool_calls" not in done and "text" not in done
    assert "zebracorn" not in json.dumps(events) and "Saving" not in json.dumps(events)


def test_a_held_stream_reads_the_lists_in_scope_once(api, make_list, provider_server, provider_key, monkeypatch):
    make_list(forbidden="Kunde")
    reads = []
    real = services._scope_rows

    def counting(configuration_ids):
        reads.append(configuration_ids)
        return real(configuration_ids)

    monkeypatch.setattr(services, "_scope_rows", counting)
    provider_server.script([{"stream_chunks": ["Der ", "Kunde ", "zahlt."]}])
    events = sse_events(complete(api, stream=True))
    # One read decides the hold and serves the screening that then blocks.
    assert [name for name, _ in events] == ["blocked", "done"]
    assert len(reads) == 1


def declare_reads(*names):
    """The configurations' owner declares these tools reads (SPEC §8.2: a caller can only narrow the list)."""
    from governance.models import Configuration

    for config in Configuration.objects.all():
        config.read_tools = list(names)
        config.save()
