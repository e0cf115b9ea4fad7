"""Pattern rules and citations through POST /api/v1/screenings, in off, report and block (SPEC §6.5, §6.6, §4).

Must show 2 and 3 of issue 9: offsets, a satisfied pattern, no_verdict, the time bound, citations, and
each `verification` status.
"""
import time

import pytest

from governance.models import GovernanceEvent
from snippets.models import PatternRule
from snippets.services import forget_compiled
from tests.snippets.conftest import check_of, finished, screen, set_mode

pytestmark = pytest.mark.django_db

VIOLATING = finished("Ünïcödé 😀 news: success is GUARANTEED for every reader.")


@pytest.fixture(autouse=True)
def _fresh_library():
    forget_compiled()
    yield
    forget_compiled()


def test_off_mode_checks_nothing(api, configuration, rules):
    set_mode(configuration, "off")
    body = screen(api, VIOLATING)
    assert body["outcome"] == "allowed"
    assert check_of(body, "pattern_rules") == {"check": "pattern_rules", "result": "skipped", "reason": "mode_off"}
    assert check_of(body, "citations") == {"check": "citations", "result": "skipped", "reason": "mode_off"}
    assert body["verification"] == {"status": "not_applicable", "checks": []}


def test_report_mode_hint_has_the_passage_at_its_code_point_offsets(api, configuration, rules):
    set_mode(configuration, "report")
    body = screen(api, VIOLATING)
    assert body["outcome"] == "allowed_with_hints"
    (hint,) = body["hints"]
    assert hint["check"] == "pattern_rules" and hint["type"] == "violation"
    assert hint["rule"] == {"identifier": "legal.no-guarantee", "statement": "Never call an outcome guaranteed.",
                            "severity": "critical"}
    assert hint["passage"] == "GUARANTEED"
    assert body["text"][hint["start"]:hint["end"]] == "GUARANTEED"
    assert hint["start"] == VIOLATING.index("GUARANTEED")  # code points: the emoji counts one
    assert "legal.no-guarantee" in hint["message"] and "GUARANTEED" in hint["message"]
    assert check_of(body, "pattern_rules") == {"check": "pattern_rules", "result": "reported"}
    event = GovernanceEvent.objects.get(correlation_id=body["id"], check_name="pattern_rules")
    assert event.decision == "reported" and event.detail["rules"][0]["identifier"] == "legal.no-guarantee"
    assert "GUARANTEED" not in str(event.detail)  # never a passage in the log


def test_block_mode_stops_naming_rule_and_passage_and_stores_no_passage(api, configuration, rules):
    set_mode(configuration, "block")
    body = screen(api, VIOLATING)
    assert body["outcome"] == "blocked" and "text" not in body
    assert body["block"]["check"] == "pattern_rules"
    assert "legal.no-guarantee" in body["block"]["message"] and "GUARANTEED" in body["block"]["message"]
    assert "legal.no-guarantee" in body["block"]["stored_message"]
    assert "GUARANTEED" not in body["block"]["stored_message"]
    assert check_of(body, "citations") == {"check": "citations", "result": "skipped", "reason": "earlier_block"}
    assert check_of(body, "rules_judge")["reason"] == "earlier_block"
    assert GovernanceEvent.objects.get(correlation_id=body["id"], check_name="pattern_rules").decision == "blocked"


@pytest.mark.parametrize("mode", ["report", "block"])
def test_a_satisfied_pattern_clears_the_violation(api, configuration, rules, mode):
    set_mode(configuration, mode)
    body = screen(api, finished("Success is guaranteed? No: we give no guarantee of that."))
    assert body["outcome"] == "allowed" and body["hints"] == []
    assert check_of(body, "pattern_rules") == {"check": "pattern_rules", "result": "passed"}
    entries = {e["rule"]: e for e in body["verification"]["checks"]}
    assert entries["legal.no-guarantee"] == {"check": "pattern_rules", "rule": "legal.no-guarantee", "result": "passed"}


@pytest.mark.parametrize("mode", ["report", "block"])
def test_a_rule_without_pattern_gives_no_verdict_and_its_reason(api, configuration, rules, mode):
    set_mode(configuration, mode, tags=["legal"])
    body = screen(api, finished("Hey buddy, results vary."))
    assert body["outcome"] == "allowed"
    assert body["verification"]["status"] == "verified"
    assert body["verification"]["checks"] == [
        {"check": "pattern_rules", "rule": "legal.no-guarantee", "result": "passed"},
        {"check": "pattern_rules", "rule": "tone.formal-address", "result": "no_verdict",
         "reason": "Formality depends on context a pattern cannot see."},
    ]


def test_only_rules_without_pattern_verify_nothing(api, configuration, rules):
    set_mode(configuration, "block", tags=["legal"])
    rules["guarantee"].delete()
    body = screen(api, finished("Hey buddy."))
    assert body["outcome"] == "allowed"
    assert check_of(body, "pattern_rules") == {"check": "pattern_rules", "result": "skipped", "reason": "no_verdict"}
    assert body["verification"]["status"] == "not_applicable"
    assert [e["result"] for e in body["verification"]["checks"]] == ["no_verdict"]


@pytest.fixture
def catastrophic(db, settings):
    """`(a+)+$` saved without validation (as a stored rule older than a stricter check would be)."""
    settings.GAVEL_PATTERN_TIMEOUT_MS = 50
    PatternRule.objects.bulk_create([PatternRule(
        identifier="bad.backtracking", statement="No run of a's at the end.", tags=["house-style"],
        violation_pattern=r"(a+)+$", wrong_samples=["aaa"], correct_samples=["b"])])
    return "a" * 5000 + "!"


@pytest.mark.parametrize("mode,outcome,result", [
    ("report", "allowed_with_hints", "not_checked"),
    ("block", "blocked", "blocked"),
])
def test_catastrophic_backtracking_is_a_failed_check_within_the_time_bound(api, configuration, catastrophic, mode,
                                                                          outcome, result):
    set_mode(configuration, mode)
    started = time.monotonic()
    body = screen(api, finished(catastrophic))
    elapsed = time.monotonic() - started
    assert elapsed < 5  # the bound is 50 ms per pattern; this only rules out a hang
    assert body["outcome"] == outcome
    assert check_of(body, "pattern_rules") == {"check": "pattern_rules", "result": result, "reason": "timeout"}
    assert body["verification"]["status"] == "unverified"
    assert body["verification"]["checks"] == [
        {"check": "pattern_rules", "rule": "bad.backtracking", "result": "no_verdict", "reason": "timeout"}]
    if mode == "report":
        (hint,) = body["hints"]
        assert (hint["type"], hint["reason"], hint["passage"]) == ("not_checked", "timeout", None)
    else:
        assert "bad.backtracking" in body["block"]["message"]


def test_catastrophic_pattern_with_rule_default_allow_fails_open(api, configuration, catastrophic):
    set_mode(configuration, "block", default="allow")
    body = screen(api, finished(catastrophic))
    assert body["outcome"] == "allowed_with_hints"
    (hint,) = body["hints"]
    assert hint["type"] == "not_checked" and hint["reason"] == "timeout"
    event = GovernanceEvent.objects.get(correlation_id=body["id"], check_name="pattern_rules")
    assert event.decision == "not_checked" and event.detail["failed_open"] is True


def test_a_short_text_is_not_finished_and_not_checked(api, configuration, rules):
    set_mode(configuration, "block")
    body = screen(api, "Success is guaranteed.")
    assert body["outcome"] == "allowed"
    assert check_of(body, "pattern_rules")["reason"] == "not_finished_text"
    assert body["verification"]["status"] == "not_applicable"


def test_a_json_answer_is_checked_by_its_strings_with_offsets_only_where_verbatim(api, configuration, rules):
    set_mode(configuration, "report")
    import json

    text = json.dumps({"title": "News", "body": finished("Please click here for more.")})
    body = screen(api, text, format="json")
    (hint,) = body["hints"]
    assert hint["passage"] == "click here"
    assert body["text"][hint["start"]:hint["end"]] == "click here"


def test_a_saved_rule_is_enforced_at_once(api, configuration, rules):
    set_mode(configuration, "block")
    text = finished("Our offer is unbeatable.")
    assert screen(api, text)["outcome"] == "allowed"
    PatternRule.objects.create(identifier="style.no-unbeatable", statement="No superlatives without a source.",
                               tags=["house-style"], violation_pattern=r"\bunbeatable\b",
                               wrong_samples=["It is unbeatable."], correct_samples=["It is good."])
    assert screen(api, text)["outcome"] == "blocked"


# --- citations (Must show 3) ---


@pytest.mark.parametrize("mode,outcome", [("report", "allowed_with_hints"), ("block", "blocked")])
def test_an_unknown_citation_is_a_finding(api, configuration, rules, mode, outcome):
    set_mode(configuration, mode)
    text = finished("As [rule:style.no-such-rule] requires, we write plainly.")
    body = screen(api, text)
    assert body["outcome"] == outcome
    assert body["verification"]["status"] == "unverified"
    assert {"check": "citations", "rule": "style.no-such-rule", "result": "violated",
            "reason": "unknown_rule"} in body["verification"]["checks"]
    if mode == "report":
        (hint,) = body["hints"]
        assert hint["check"] == "citations" and hint["passage"] == "[rule:style.no-such-rule]"
        assert body["text"][hint["start"]:hint["end"]] == "[rule:style.no-such-rule]"
    else:
        assert body["block"]["check"] == "citations"
        assert "style.no-such-rule" in body["block"]["message"]


@pytest.mark.parametrize("mode,outcome", [("report", "allowed_with_hints"), ("block", "blocked")])
def test_a_cited_rule_outside_the_set_is_enforced(api, configuration, rules, mode, outcome):
    set_mode(configuration, mode, tags=["legal"])  # style.no-click-here is not in the set
    uncited = finished("For details, click here.")
    assert screen(api, uncited)["outcome"] == "allowed"  # not cited, not in the set: not enforced
    cited = finished("We follow [rule:style.no-click-here]. For details, click here.")
    body = screen(api, cited)
    assert body["outcome"] == outcome
    assert {"check": "citations", "rule": "style.no-click-here", "result": "violated"} in body["verification"]["checks"]
    if mode == "report":
        (hint,) = body["hints"]
        assert hint["rule"]["identifier"] == "style.no-click-here"
        assert body["text"][hint["start"]:hint["end"]] == "click here"


def test_an_inactive_rule_is_an_unknown_citation(api, configuration, rules):
    set_mode(configuration, "report")
    rules["click"].is_active = False
    rules["click"].save()
    body = screen(api, finished("See [rule:style.no-click-here] for our style."))
    assert {"check": "citations", "rule": "style.no-click-here", "result": "violated",
            "reason": "unknown_rule"} in body["verification"]["checks"]


def test_verified_lists_the_checks_that_found_nothing(api, configuration, rules):
    set_mode(configuration, "block", tags=["house-style"])
    body = screen(api, finished("Results vary, as [rule:legal.no-guarantee] reminds us."))
    assert body["outcome"] == "allowed"
    assert body["verification"] == {"status": "verified", "checks": [
        {"check": "pattern_rules", "rule": "style.no-click-here", "result": "passed"},
        {"check": "citations", "rule": "legal.no-guarantee", "result": "passed"},
    ]}
    assert check_of(body, "citations") == {"check": "citations", "result": "passed"}


def test_not_applicable_without_rules_in_scope_or_citations(api, configuration, rules):
    set_mode(configuration, "block", tags=["other"])
    body = screen(api, finished("Plain words."))
    assert body["verification"] == {"status": "not_applicable", "checks": []}
    assert check_of(body, "pattern_rules") == {"check": "pattern_rules", "result": "skipped", "reason": "no_rules"}
    assert check_of(body, "citations") == {"check": "citations", "result": "skipped", "reason": "no_citations"}


def test_unverified_when_a_rule_of_the_set_is_violated(api, configuration, rules):
    set_mode(configuration, "report")
    body = screen(api, finished("For details, click here."))
    assert body["verification"]["status"] == "unverified"
    assert {"check": "pattern_rules", "rule": "style.no-click-here", "result": "violated"} in \
        body["verification"]["checks"]


def test_messages_are_in_the_readers_language(api, configuration, rules):
    set_mode(configuration, "block")
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": VIOLATING}, format="json",
                        HTTP_ACCEPT_LANGUAGE="de")
    block = response.json()["block"]
    assert block["message"].startswith("Musterregel legal.no-guarantee („Never call an outcome guaranteed.“) "
                                       "wird verletzt durch: „GUARANTEED“.")


def test_a_passage_in_a_tool_run_points_at_its_call_and_argument(api, configuration, rules):
    set_mode(configuration, "report")
    arguments = {"title": "News", "body": finished("For details, click here.")}
    body = screen(api, "", offers_tools=True, tool_calls=[{"name": "save_article", "arguments": arguments}])
    (hint,) = body["hints"]
    assert (hint["passage"], hint["tool_call"], hint["argument"]) == ("click here", 0, "body")
    assert hint["start"] is None and hint["end"] is None


def test_the_strictest_mode_of_also_decides_and_each_set_counts(api, configuration, rules, provider):
    from governance.models import Configuration

    set_mode(configuration, "report", tags=["legal"])
    shop = Configuration.objects.create(identifier="shop", provider=provider, model="m", rule_mode="block",
                                        rule_tags=["house-style"])
    api.consumer.configurations.add(shop)
    body = screen(api, finished("For details, click here."), also=["shop"])
    assert body["outcome"] == "blocked" and "style.no-click-here" in body["block"]["message"]
    event = GovernanceEvent.objects.get(correlation_id=body["id"], check_name="pattern_rules")
    assert (event.configuration, event.mode) == ("shop", "block")
