"""The term-list step and its service (SPEC §5): scope, loading, caching, and the step's results,
driven without HTTP. The API's view of the same rules is in test_api_termlists.py.
"""
import json
import re
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.utils import OperationalError, ProgrammingError
from django.test.utils import CaptureQueriesContext

from governance.screening import text as textlib
from governance.models import Configuration, GovernanceEvent
from governance.screening.pipeline import CallFacts, Output, ToolCall, run_pipeline
from termlists import guardrail, matcher, services
from termlists.models import TermList

LONG = " ".join(f"word{i}" for i in range(40))


def facts(site="", language=""):
    return SimpleNamespace(site=site, language=language)


# --- scope_of: pure (SPEC §5.1) ---
@pytest.mark.parametrize(
    ("list_site", "list_language", "call_site", "call_language", "expected"),
    [
        ("", "", "", "", services.ALL_TERMS),
        ("", "", "blog", "fr", services.ALL_TERMS),  # an unbound list applies to every site and language
        ("blog", "", "blog", "", services.ALL_TERMS),
        ("blog", "", "shop", "", None),
        ("blog", "", "", "", services.FORBIDDEN_ONLY),
        ("blog", "", "BLOG", "", None),
        ("", "de", "", "de", services.ALL_TERMS),
        ("", "de", "", "de-AT", services.ALL_TERMS),
        ("", "de", "", "De-aT", services.ALL_TERMS),
        ("", "de", "", "de_AT", services.ALL_TERMS),
        ("", "de-at", "", "DE-AT", services.ALL_TERMS),
        ("", "de", "", "den", services.FORBIDDEN_ONLY),  # another language: forbidden terms still (issue 41)
        ("", "de-AT", "", "de", services.FORBIDDEN_ONLY),
        ("", "de", "", "", services.FORBIDDEN_ONLY),
        ("blog", "de", "blog", "de", services.ALL_TERMS),
        ("blog", "de", "blog", "", services.FORBIDDEN_ONLY),
        ("blog", "de", "", "de", services.FORBIDDEN_ONLY),
        ("blog", "de", "", "en", services.FORBIDDEN_ONLY),  # a stated language never excludes forbidden terms
        ("blog", "de", "shop", "de", None),  # a stated, different site does
        ("blog", "de", "shop", "", None),
    ],
)
def test_scope_of(list_site, list_language, call_site, call_language, expected):
    assert services.scope_of(list_site, list_language, facts(call_site, call_language)) == expected


# --- locate: the passage a hint quotes ---
@pytest.mark.parametrize(
    ("term", "text", "expected"),
    [
        ("Kunde", "Der KUNDE zahlt", ("KUNDE", 4)),
        ("Kunde", "Kundenkonto und Kunde", ("Kunde", 16)),
        ("Guten Tag", "Sag Guten\n  Tag!", ("Guten\n  Tag", 4)),
        ("Rabatt*", "die Rabattaktion", ("Rabattaktion", 4)),
        ("Kunde", "Der Kun<b>de</b>", ("Kunde", None)),  # only with markup removed: no offset
        ("Kunde", "nichts", (None, None)),
        ("Straße", "STRAẞE", ("STRAẞE", 0)),
        # Where the matcher finds it: a combining mark belongs to its word, a `*` takes it too.
        ("Kunde", "Kunde\u0301 und Kunde", ("Kunde", 11)),
        ("cafe*", "cafe\u0301x", ("cafe\u0301x", 0)),
        ("Kunde", "Kunde\u0301 <b>x</b>", (None, None)),
        ("i*", "xİ İy", ("İy", 3)),  # `İ` lower-cases to two code points; offsets stay in the text
        ("Rabatt*", "Rabatt_x Rabatte", ("Rabatte", 9)),
    ],
)
def test_locate(term, text, expected):
    assert services.locate(term, text) == expected


# --- markup: word counts read the text the matcher reads (SPEC §3, §5.2) ---
@pytest.mark.parametrize(
    "text",
    [
        "<b <i>x",  # the tag runs from `<b` to the first `>`: one word, not `b` and `x`
        "a<b <i>c d",
        "<p title='a<b'>x</p> y",
        "<a\nhref=x>link</a> more",
        "<<b>>z",
        "x < y > z",
        "a <3 b",
        "Kun<b>de</b> &amp; <!-- c <b -->z",
        "open <b never closed",
    ],
)
def test_word_counts_read_markup_as_the_matcher_does(text):
    reader_form = matcher._reader_form(matcher._collapse_ws(text))
    word = re.compile(r"[^\W_]+")
    assert word.findall(textlib.strip_markup(text)) == word.findall(reader_form)
    assert textlib.count_words(text) == len(word.findall(reader_form))


def test_a_tag_holding_a_lone_angle_bracket_is_one_tag():
    assert textlib.strip_markup("<b <i>x") == "x"
    assert textlib.count_words("<b <i>x") == 1


# --- what forbidden terms are searched in, decoded (SPEC §5.3) ---
def test_json_search_text_holds_keys_and_every_duplicate_value():
    document = '{"\\u004bunde": {"a": "erste", "a": "zweite"}, "list": ["x", {"k\\u00e9y": 1}]}'
    assert textlib.json_search_text(document).split("\n") == ["Kunde", "a", "erste", "a", "zweite", "list",
                                                                "x", "kéy"]
    # What a page receives is unchanged: values only, the last of duplicate keys.
    assert textlib.json_text(document).split("\n") == ["zweite", "x"]


def test_argument_strings_with_keys_for_the_forbidden_search_only():
    arguments = json.dumps({"page": {"Kunde": "x", "blocks": ["y"]}}).replace("Kunde", "\\u004bunde")
    assert textlib.argument_strings(arguments) == [("page.Kunde", "x"), ("page.blocks[0]", "y")]
    assert textlib.argument_strings(arguments, keys=True) == [
        ("page", "page"), ("page.Kunde", "Kunde"), ("page.Kunde", "x"), ("page.blocks", "blocks"),
        ("page.blocks[0]", "y"),
    ]
    assert textlib.argument_strings('{"a": "erste", "a": "zweite"}', keys=True) == [
        ("a", "a"), ("a", "erste"), ("a", "a"), ("a", "zweite")]
    assert textlib.argument_strings({"Kunde": ["x"]}, keys=True) == [("Kunde", "Kunde"), ("Kunde[0]", "x")]


# --- the missing table is recognised by its message ---
@pytest.mark.parametrize(
    ("error", "missing"),
    [
        (ProgrammingError('relation "termlists_termlist" does not exist\nLINE 1: ...'), True),
        (OperationalError("no such table: termlists_termlist"), True),
        (ProgrammingError("(1146, \"Table 'gavel.termlists_termlist' doesn't exist\")"), True),
        (OperationalError("database is locked"), False),
        (ProgrammingError('relation "governance_policyversion" does not exist'), False),
        (ProgrammingError('relation "public.termlists_termlist_configurations" does not exist'), True),
        (OperationalError("no such table: main.termlists_termlist"), True),
        # A missing column: the table and its lists exist but cannot be read, so they fail closed.
        (ProgrammingError("column termlists_termlist.mode does not exist"), False),
        (OperationalError("no such column: termlists_termlist.mode"), False),
        (ProgrammingError('column "mode" of relation "termlists_termlist" does not exist'), False),
        (OperationalError("(1054, \"Unknown column 'termlists_termlist.mode' in 'field list'\")"), False),
    ],
)
def test_is_missing_table(error, missing):
    assert services._is_missing_table(error) is missing


# --- with the database ---
@pytest.fixture
def second(db, provider):
    return Configuration.objects.create(identifier="shop", provider=provider, model="test-model")


@pytest.fixture
def make_list(db, configuration):
    def make(name="Brand", configurations=None, **fields):
        term_list = TermList.objects.create(name=name, **fields)
        term_list.configurations.set(configurations if configurations is not None else [configuration])
        return term_list

    return make


def run(text="", configuration=None, tool_calls=(), **fact_fields):
    output = Output(text=text, format=fact_fields.pop("format", "text"),
                    tool_calls=[ToolCall(**call) for call in tool_calls])
    return run_pipeline(output, CallFacts(configuration=configuration, **fact_fields))


def term_check(screening):
    (entry,) = [c for c in screening.checks if c["check"] == "term_list"]
    return entry


def test_lists_are_loaded_in_one_query_and_compiled_once(make_list, configuration, second):
    make_list(name="A", forbidden="Kunde")
    make_list(name="B", forbidden="Rabatt", configurations=[configuration, second])
    make_list(name="C", forbidden="Preis", configurations=[second])
    call = CallFacts(configuration=configuration, also=[second])
    services.lists_for(call)  # compiles
    # One query for the lists in scope and the policy version; the matchers come from memory.
    # (Inside a transaction, as here, the query also runs under a savepoint.)
    with CaptureQueriesContext(connection) as queries:
        in_scope = services.lists_for(call)
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == 1, statements
    assert [item.compiled.name for item in in_scope] == ["A", "B", "C"]
    # B names both configurations: it is reported through the call's own one.
    assert [item.configuration.identifier for item in in_scope] == ["newsroom", "newsroom", "shop"]


def test_no_configuration_reads_nothing(db, django_assert_num_queries):
    with django_assert_num_queries(0):
        assert services.lists_for(CallFacts()) == []
        assert guardrail.lists_apply(CallFacts()) is False


def test_a_compiled_list_is_replaced_not_accumulated(make_list, configuration):
    term_list = make_list(forbidden="Kunde")
    services.lists_for(CallFacts(configuration=configuration))
    first = services._compiled[term_list.pk]
    for term in ("Rabatt", "Preis", "Kunde"):
        term_list.forbidden = term
        term_list.save()
        services.lists_for(CallFacts(configuration=configuration))
    assert services._compiled[term_list.pk] is not first
    assert services._compiled[term_list.pk][1].forbidden.terms == ("Kunde",)
    assert sum(1 for key in services._compiled if key == term_list.pk) == 1


def test_a_deleted_list_is_forgotten(make_list, configuration):
    services.forget_compiled()
    kept = make_list(name="A", forbidden="Kunde")
    gone = make_list(name="B", forbidden="Rabatt")
    call = CallFacts(configuration=configuration)
    services.lists_for(call)
    gone_id = gone.pk
    assert {kept.pk, gone_id} <= set(services._compiled)
    gone.delete()
    assert [item.compiled.name for item in services.lists_for(call)] == ["A"]
    assert gone_id not in services._compiled
    assert set(services._compiled) == {kept.pk}


def test_lists_of_other_configurations_stay_compiled(make_list, configuration, second):
    """Forgetting is by policy version, not by the call's scope: no recompiling across configurations."""
    services.forget_compiled()
    first = make_list(name="A", forbidden="Kunde")
    other = make_list(name="B", forbidden="Rabatt", configurations=[second])
    services.lists_for(CallFacts(configuration=configuration))
    held = services._compiled[first.pk]
    services.lists_for(CallFacts(configuration=second))
    services.lists_for(CallFacts(configuration=configuration))
    assert services._compiled[first.pk] is held
    assert other.pk in services._compiled


def test_another_policy_edit_recompiles_too(make_list, configuration):
    term_list = make_list(forbidden="Kunde")
    services.lists_for(CallFacts(configuration=configuration))
    held = services._compiled[term_list.pk][1]
    configuration.system_prompt = "changed"
    configuration.save()  # bumps the policy version, which the cache key carries
    services.lists_for(CallFacts(configuration=configuration))
    assert services._compiled[term_list.pk][1] is not held


def test_lists_apply(make_list, configuration, second):
    make_list(forbidden="Kunde", site="blog", configurations=[second])
    assert guardrail.lists_apply(CallFacts(configuration=configuration)) is False
    assert guardrail.lists_apply(CallFacts(configuration=configuration, also=[second])) is True
    assert guardrail.lists_apply(CallFacts(configuration=second, site="blog")) is True
    assert guardrail.lists_apply(CallFacts(configuration=second)) is True  # forbidden terms still apply
    assert guardrail.lists_apply(CallFacts(configuration=second, site="shop")) is False


def test_lists_apply_holds_when_lists_cannot_be_read(make_list, configuration, monkeypatch):
    def broken(ids):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "_scope_rows", broken)
    assert guardrail.lists_apply(CallFacts(configuration=configuration)) is True


def test_lists_apply_does_not_hold_without_the_table(configuration, monkeypatch):
    def missing(ids):
        raise ProgrammingError('relation "termlists_termlist_configurations" does not exist')

    monkeypatch.setattr(services, "_scope_rows", missing)
    assert guardrail.lists_apply(CallFacts(configuration=configuration)) is False


def test_a_real_missing_table_passes(configuration):
    """Not a monkeypatch: the table is really gone (and the transaction survives it)."""
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE termlists_termlist RENAME TO termlists_termlist_gone")
    try:
        screening = run("Der Kunde", configuration)
        assert term_check(screening) == {"check": "term_list", "result": "skipped", "reason": "table_missing"}
        assert screening.outcome == "allowed"
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE termlists_termlist_gone RENAME TO termlists_termlist")


# --- the step ---
def test_the_step_reports_passed_when_lists_apply_and_find_nothing(make_list, configuration):
    make_list(forbidden="Kunde")
    assert term_check(run("Kundenkonto", configuration)) == {"check": "term_list", "result": "passed"}


def test_the_step_in_a_tool_run_with_only_read_calls_passes(make_list, configuration):
    # The read's argument is exempt; the answer is searched (formerly it was not: "Kunde" passed).
    make_list(forbidden="Kunde")
    configuration.read_tools = ["search"]
    screening = run("Kundenkonto", configuration, tool_calls=[{"name": "search", "arguments": {"q": "Kunde"}}],
                    offers_tools=True, read_tools=frozenset({"search"}))
    assert screening.outcome == "allowed"
    assert term_check(screening)["result"] == "passed"


def test_the_block_message_follows_the_reader_language(make_list, configuration):
    make_list(forbidden="Kunde")
    assert run("Kunde", configuration, reader_language="de").block.message == (
        "Die Begriffsliste „Brand“ erlaubt nicht: Kunde."
    )
    assert run("Kunde", configuration, reader_language="en").block.message == (
        "The term list “Brand” does not allow: Kunde."
    )


def test_report_mode_hint_in_german(make_list, configuration):
    make_list(forbidden="Kunde", mode="report")
    (hint,) = run("Kunde", configuration, reader_language="de").hints
    assert hint["message"] == (
        "Die Begriffsliste „Brand“ erlaubt nicht: Kunde. (Berichtsmodus: Der Text wurde ausgeliefert.)"
    )


def test_terms_are_reported_as_written_in_list_order_each_once(make_list, configuration):
    make_list(forbidden="Rabatt*\nkunde\nKUNDE\nPreis")
    screening = run('Preis? Kunde! Rabatte, KUNDE', configuration)
    assert screening.block.message == "The term list “Brand” does not allow: Rabatt*, kunde, Preis."


def test_forbidden_terms_in_answer_and_arguments_are_reported_together(make_list, configuration):
    make_list(forbidden="Kunde\nRabatt", mode="report")
    screening = run("Der Kunde", configuration, tool_calls=[{"name": "save", "arguments": {"b": "Rabatt"}}])
    (hint,) = screening.hints
    assert hint["terms"] == ["Kunde", "Rabatt"]
    assert hint["passage"] == "Kunde" and "tool_call" not in hint  # the first place found: the answer
    (event,) = GovernanceEvent.objects.filter(check_name="term_list")
    assert event.detail == {"list": "Brand", "terms": ["Kunde", "Rabatt"], "missing": []}


def test_judged_text_holds_argument_values_not_keys(configuration):
    from governance.screening.pipeline import Screening

    body = " ".join(["hey"] * 40)
    output = Output(text="", tool_calls=[ToolCall(name="save", arguments=json.dumps({"zebracorn": body}))])
    judged = Screening(output, CallFacts(configuration=configuration)).judged_text()
    assert judged == body


def test_report_mode_gives_one_hint_per_list(make_list, configuration):
    make_list(forbidden="Kunde", required="Impressum", mode="report")
    (hint,) = run(LONG + " Kunde", configuration).hints
    assert (hint["type"], hint["terms"], hint["missing"]) == ("forbidden", ["Kunde"], ["Impressum"])
    assert hint["message"] == ("The term list “Brand” does not allow: Kunde. The term list “Brand” requires: "
                               "Impressum. (report mode: the text was delivered)")
    (hint,) = run(LONG, configuration).hints
    assert (hint["type"], hint["terms"], hint["passage"]) == ("missing_required", ["Impressum"], None)
    assert "missing" not in hint
    (hint,) = run("Kunde", configuration).hints  # not finished text: nothing is missing
    assert hint["type"] == "forbidden" and "missing" not in hint


def test_redaction_runs_before_term_lists(make_list, configuration):
    """A term list reads the text redaction left (SPEC §3): a forbidden term inside a key is gone."""
    make_list(forbidden="Kunde")
    screening = run("Log in at https://bob:Kunde@example.com/", configuration)
    assert screening.checks[0] == {"check": "secret_redaction", "result": "redacted"}
    assert screening.outcome == "allowed"
    assert run("Log in as Kunde at https://example.com/", configuration).outcome == "blocked"


def test_a_block_skips_later_steps(make_list, configuration):
    make_list(forbidden="Kunde")
    screening = run("Kunde", configuration)
    later = [c for c in screening.checks if c["check"] in ("pattern_rules", "citations", "rules_judge")]
    assert all(c == {"check": c["check"], "result": "skipped", "reason": "earlier_block"} for c in later)


def test_a_failure_while_compiling_fails_closed(make_list, configuration, monkeypatch, caplog):
    make_list(forbidden="Kunde")
    services.forget_compiled()

    def broken(terms):
        raise MemoryError("automaton too large")

    monkeypatch.setattr(services, "TermMatcher", broken)
    screening = run("fine", configuration)
    assert screening.outcome == "blocked"
    assert term_check(screening) == {"check": "term_list", "result": "blocked", "reason": "check_failed"}
    assert any(r.levelname == "ERROR" for r in caplog.records)


def test_lists_in_scope_are_searched_together_and_forgotten_with_their_version(make_list, configuration):
    """Two lists in scope: one automaton finds each list's terms (each blocks with its own name); a
    policy edit drops the combined automata with the matchers of the old version."""
    from governance.screening.service import resolve_configurations

    brand = make_list(forbidden="Kunde")
    make_list(name="Legal", forbidden="Rabatt*")

    def screen(text):
        current, _also = resolve_configurations(configuration.identifier, [], None)
        return run(text, current)

    assert screen("Der Kunde bekommt Rabatte").block.message == (
        "The term list “Brand” does not allow: Kunde. The term list “Legal” does not allow: Rabatt*.")
    (held,) = [key for key in matcher._together if len(key) == 2]
    brand.forbidden = "Preis"
    brand.save()  # a policy edit: a new version
    assert screen("Der Kunde zahlt den Preis").block.message == "The term list “Brand” does not allow: Preis."
    assert held not in matcher._together
    current = {compiled.forbidden for _key, compiled in services._compiled.values()}
    assert all(set(key) <= current for key in matcher._together)
