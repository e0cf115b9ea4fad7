"""Editors teach the policy (SPEC §10.2): right / wrong on hints, missed findings, apply suggestion, and
examples kept from review that round-trip through the policy file and run in `test_policy`."""
import json
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from governance import policy
from governance.review.teaching import encode, hint_facts
from governance.models import Configuration, GovernanceEvent, HintFeedback, PolicyExample, PolicyVersion, Task
from governance.work.queue import purge_contents
from governance.screening.pipeline import CallFacts, Output, run_pipeline
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, PROMISE, desk_policy, editor, hinted_task, make_task, reviewer,
)


def url(task, act=""):
    return f"/review/tasks/{task.pk}/{act}"


@pytest.fixture
def hinted(hinted_task):
    """The fixture task with the events its screening wrote (what feedback checks findings against)."""
    GovernanceEvent.objects.create(correlation_id="corr-hinted", decision="reported", check_name="term_list",
                                   configuration="newsroom-desk", mode="report",
                                   detail={"list": "Hype words", "terms": [HYPE], "missing": []})
    GovernanceEvent.objects.create(correlation_id="corr-hinted", decision="reported", check_name="rules_judge",
                                   configuration="newsroom-desk", mode="report",
                                   detail={"choice": "deny", "rules": [{"number": 2, "line": "Never promise delivery dates.",
                                                                         "snippet": "house-style", "line_no": 3}]})
    return hinted_task


def mark(client, task, index, verdict, **extra):
    task = Task.objects.get(pk=task.pk)
    findings = [encode(f) for f in hint_facts(task.hints[index])] if index < len(task.hints) else []
    return client.post(url(task, "feedback"), {"number": index + 1, "verdict": verdict, "finding": findings},
                       **extra)


def feedback_events():
    return list(GovernanceEvent.objects.filter(decision="feedback").order_by("id"))


# --- right / wrong / missed on the fixture task (a reported term, a judged rule, a judge that timed out) ---
def test_an_editor_marks_hints_right_and_wrong_as_facts_only(editor, hinted, reviewer):
    hinted_task = hinted
    page = editor.get(url(hinted_task)).text
    # Two hints stand for findings; the judge that timed out stands for none.
    assert 'id="right-1"' in page and 'id="wrong-2"' in page and 'id="right-3"' not in page
    assert mark(editor, hinted_task, 0, "right").status_code == 302
    assert mark(editor, hinted_task, 1, "wrong").status_code == 302
    rows = {(f.check_name, f.list_name, f.term, f.snippet, f.rule): f.verdict for f in HintFeedback.objects.all()}
    assert rows == {("term_list", "Hype words", HYPE, "", ""): "right",
                    ("rules_judge", "", "", "house-style", "3"): "wrong"}
    assert all(f.editor == reviewer for f in HintFeedback.objects.all())
    events = feedback_events()
    assert [(e.check_name, e.detail["verdict"]) for e in events] == [("term_list", "right"), ("rules_judge", "wrong")]
    assert events[1].detail == {"task": str(hinted_task.pk), "verdict": "wrong", "snippet": "house-style", "rule": 3}
    assert events[1].actor == "user:reviewer" and events[1].correlation_id == "corr-hinted"
    for event in events:  # facts only: no passage, no text
        assert PROMISE not in json.dumps(event.detail) and "kettle" not in json.dumps(event.detail)
    page = editor.get(url(hinted_task)).text
    assert 'id="verdict-1"' in page and "Marked right" in page and "Marked wrong" in page


def test_a_verdict_can_change_until_the_review_is_final(editor, hinted):
    hinted_task = hinted
    mark(editor, hinted_task, 0, "wrong")
    mark(editor, hinted_task, 0, "right")
    assert list(HintFeedback.objects.values_list("verdict", flat=True)) == ["right"]
    assert len(feedback_events()) == 2  # the log keeps both acts
    editor.post(url(hinted_task, "accept"))
    response = mark(editor, hinted_task, 0, "wrong", follow=True)
    assert "This task&#x27;s review is final" in response.text or "This task's review is final" in response.text
    assert list(HintFeedback.objects.values_list("verdict", flat=True)) == ["right"]
    assert 'id="wrong-1"' not in editor.get(url(hinted_task)).text


def test_a_missed_term_is_chosen_from_the_task_s_lists(editor, hinted_task):
    page = editor.get(url(hinted_task)).text
    assert 'id="missed-finding"' in page and "List “Competitors”: Acme" in page
    value = encode({"check_name": "term_list", "list_name": "Competitors", "term": "Acme", "snippet": "", "rule": ""})
    assert editor.post(url(hinted_task, "missed"), {"finding": value}).status_code == 302
    [row] = HintFeedback.objects.all()
    assert (row.verdict, row.list_name, row.term) == ("missed", "Competitors", "Acme")
    assert feedback_events()[0].detail == {"task": str(hinted_task.pk), "verdict": "missed", "list": "Competitors",
                                           "term": "Acme"}
    # Anything else is refused and nothing is stored.
    forged = encode({"check_name": "term_list", "list_name": "Other", "term": "x", "snippet": "", "rule": ""})
    response = editor.post(url(hinted_task, "missed"), {"finding": forged}, follow=True)
    assert "Choose a rule or a term of this task" in response.text
    assert HintFeedback.objects.count() == 1


def test_bad_feedback_posts_are_refused_with_a_reason(editor, hinted):
    hinted_task = hinted
    response = mark(editor, hinted_task, 2, "wrong", follow=True)
    assert "This hint names no rule or term to mark." in response.text
    response = mark(editor, hinted_task, 0, "maybe", follow=True)
    assert "Choose right or wrong." in response.text
    forged = encode({"check_name": "term_list", "list_name": "Hype words", "term": "unmatched", "snippet": "",
                     "rule": ""})
    response = editor.post(url(hinted_task, "feedback"), {"verdict": "wrong", "finding": [forged]}, follow=True)
    assert "This hint names no rule or term to mark." in response.text  # not what the screening found
    assert editor.get(url(hinted_task, "feedback")).status_code == 405
    assert HintFeedback.objects.count() == 0


def test_the_feedback_blocks_speak_german(editor, hinted_task):
    page = editor.get(url(hinted_task), HTTP_ACCEPT_LANGUAGE="de").text
    assert "Richtig" in page and "Falsch" in page and "Von der Richtlinie übersehen" in page


def test_hint_facts_of_each_check():
    assert hint_facts({"check": "pattern_rules", "type": "violation", "rule": {"identifier": "a.b"}}) == [
        {"check_name": "pattern_rules", "list_name": "", "term": "", "snippet": "", "rule": "a.b"}]
    assert [f["term"] for f in hint_facts({"check": "term_list", "type": "forbidden", "list": "L",
                                           "terms": ["x", "y"]})] == ["x", "y"]
    assert hint_facts({"check": "rules_judge", "type": "not_checked", "reason": "timeout"}) == []


# --- keep as example ---
def test_keep_as_example_after_review_with_the_expectation_it_implies(editor, hinted, reviewer):
    hinted_task = hinted
    mark(editor, hinted_task, 0, "right")
    mark(editor, hinted_task, 1, "wrong")
    page = editor.get(url(hinted_task)).text
    assert 'id="keep-button"' not in page  # not reviewed yet
    editor.post(url(hinted_task, "accept"))
    assert 'id="keep-button"' in editor.get(url(hinted_task)).text
    response = editor.post(url(hinted_task, "keep"), follow=True)
    example = PolicyExample.objects.get(from_task=hinted_task.pk)
    assert f"Kept as the policy example “{example.name}”" in response.text
    assert (example.text, example.configuration, example.also, example.kind) == (
        ANSWER, "newsroom-desk", ["newsroom-legal"], "queued_task")
    assert example.kept_by == "reviewer" and example.kept_at is not None
    assert example.expect_outcome == "allowed_with_hints"  # the reported term still stands
    assert example.expect_findings == [{"check": "term_list", "list": "Hype words", "term": HYPE}]
    assert example.expect_absent == [{"check": "rules_judge", "snippet": "house-style", "rule": 3}]
    # Once is enough; a second keep says where it went.
    response = editor.post(url(hinted_task, "keep"), follow=True)
    assert "already kept as the example" in response.text and PolicyExample.objects.count() == 1
    # The example survives the purge of the task's contents.
    Task.objects.filter(pk=hinted_task.pk).update(created=hinted_task.created.replace(year=2000))
    assert purge_contents(30) == 1
    assert Task.objects.get(pk=hinted_task.pk).answer == ""
    assert PolicyExample.objects.get(pk=example.pk).text == ANSWER


def test_an_unreviewed_task_cannot_be_kept(editor, hinted_task):
    response = editor.post(url(hinted_task, "keep"), follow=True)
    assert "Only a reviewed task can be kept as an example." in response.text
    assert PolicyExample.objects.count() == 0


# --- Must show 3 and 4 on a real policy: screened for real, reviewed, kept, exported, imported, tested ---
NEWS = ("Der Kunde erhält die neue Ausgabe am Montag. Die Redaktion berichtet über den Hafen, die Schule und "
        "den Markt, und sie beschreibt, wie die Stadt den Sommer plant. Erfolg ist garantiert, sagt der Verlag.")


@pytest.fixture
def newsroom(db, provider):
    policy.import_policy({
        "configurations": [{"identifier": "newsroom", "provider": provider.name, "model": "test-model",
                            "rules": {"mode": "report", "tags": ["legal"]}}],
        "term_lists": [
            {"name": "Anrede", "configurations": ["newsroom"], "forbidden": ["Kunde => Kundin oder Kunde"],
             "mode": "report"},
            {"name": "Brand words", "configurations": ["newsroom"], "forbidden": ["Rabatt*"]},
        ],
        "pattern_rules": [{
            "identifier": "legal.no-guarantee", "statement": "Never call an outcome guaranteed.", "tags": ["legal"],
            "violation_pattern": r"(?i)\bgarantiert\b", "wrong_samples": ["Erfolg ist garantiert."],
            "correct_samples": ["Keine Gewähr."]}],
    })
    return Configuration.objects.get(identifier="newsroom")


def screened_task(configuration, text):
    """A ready task as a worker leaves it: the answer screened for real."""
    screening = run_pipeline(Output(text=text), CallFacts(configuration=configuration))
    body = screening.as_response(PolicyVersion.current())
    assert body["outcome"] != "blocked", body
    return make_task(configuration="newsroom", status="ready", outcome=body["outcome"], answer=body["text"],
                     hints=body["hints"], checks=body["checks"], correlation_id=body["id"])


def run_test_policy(*args):
    out, err = StringIO(), StringIO()
    try:
        call_command("test_policy", *args, stdout=out, stderr=err)
        return 0, out.getvalue()
    except SystemExit as exc:
        return exc.code, out.getvalue()
    except CommandError as exc:
        return exc.returncode, out.getvalue() + err.getvalue() + str(exc)


def test_apply_suggestion_replaces_every_marked_place_and_the_edit_passes(editor, newsroom):
    text = "Der Kunde liest. Jeder KUNDE schreibt. " + " ".join(["Wort"] * 30)
    task = screened_task(newsroom, text)
    [hint] = task.hints
    assert hint["suggestion"] == {"Kunde": "Kundin oder Kunde"}
    page = editor.get(url(task)).text
    assert "Apply suggestion" in page and "(2 places marked)" in page
    response = editor.post(url(task, "apply-suggestion"), {"hint": 0, "term": "Kunde"})
    assert response.status_code == 200
    edited = response.context["edit_form"]["text"].value()
    assert edited.startswith("Der Kundin oder Kunde liest. Jeder Kundin oder Kunde schreibt.")
    assert "The suggestion replaced 2 place(s)" in response.text
    Task.objects.get(pk=task.pk)  # nothing stored yet
    assert Task.objects.get(pk=task.pk).edited_text == ""
    editor.post(url(task, "accept"), {"text": edited})
    task.refresh_from_db()
    assert (task.status, task.edited, task.outcome, task.hints) == ("accepted", True, "allowed", [])


def test_a_kept_example_round_trips_and_test_policy_runs_it(editor, newsroom):
    task = screened_task(newsroom, NEWS)
    checks = [hint["check"] for hint in task.hints]
    assert checks == ["term_list", "pattern_rules"], task.hints
    mark(editor, task, 0, "right")  # "Kunde" is right
    mark(editor, task, 1, "wrong")  # the guarantee rule misfired
    editor.post(url(task, "accept"))
    editor.post(url(task, "keep"))
    example = PolicyExample.objects.get(from_task=task.pk)
    assert example.expect_outcome == "allowed_with_hints"
    assert example.expect_absent == [{"check": "pattern_rules", "rule": "legal.no-guarantee"}]

    document = policy.export_policy()
    [written] = document["examples"]
    assert written["kept_by"] == "reviewer" and written["from_task"] == str(task.pk)
    text = policy.export_yaml()
    PolicyExample.objects.all().delete()
    policy.import_policy(yaml.safe_load(text))
    assert policy.export_policy()["examples"] == document["examples"]

    # The policy still fires the rule the editor marked wrong: the kept example fails, naming it.
    code, out = run_test_policy("--format", "json", "--judges", "skip")
    assert code == 1, out
    [result] = json.loads(out)["examples"]
    assert result["name"] == example.name and result["passed"] is False
    assert result["unexpected"] == [{"check": "pattern_rules", "rule": "legal.no-guarantee"}]
    # Fix the rule the way the feedback says; the example passes.
    policy.import_policy({"pattern_rules": [{
        "identifier": "legal.no-guarantee", "statement": "Never call an outcome guaranteed.", "tags": ["legal"],
        "violation_pattern": r"(?i)\bgarantiert\b", "satisfied_pattern": r"(?i)sagt der Verlag",
        "wrong_samples": ["Erfolg ist garantiert."], "correct_samples": ["Keine Gewähr."]}]})
    code, out = run_test_policy("--judges", "skip")
    assert code == 0, out


def test_a_missed_finding_is_expected_by_the_kept_example(editor, newsroom):
    task = screened_task(newsroom, NEWS.replace("Erfolg ist garantiert, sagt der Verlag.", "Mehr folgt."))
    value = encode({"check_name": "term_list", "list_name": "Brand words", "term": "Rabatt*", "snippet": "",
                    "rule": ""})
    assert editor.post(url(task, "missed"), {"finding": value}).status_code == 302
    editor.post(url(task, "accept"))
    editor.post(url(task, "keep"))
    example = PolicyExample.objects.get(from_task=task.pk)
    # Brand words blocks: what the editor says it should have found would have stopped the text.
    assert example.expect_outcome == "blocked"
    assert {"check": "term_list", "list": "Brand words", "term": "Rabatt*"} in example.expect_findings
    code, out = run_test_policy("--format", "json", "--judges", "skip")
    assert code == 1
    [result] = json.loads(out)["examples"]
    assert {"check": "term_list", "list": "Brand words", "term": "Rabatt*"} in result["missing"]
