"""Keep as example follows the review exactly (issue 29, Must show 3): four tasks screened for real by the
worker, reviewed through the pages, kept, then `test_policy` screens the four examples under the policy."""
import pytest
from django.core.management import call_command

from governance.models import PolicyExample
from governance.policy.testing import run_examples
from governance.review import keeping, teaching
from governance.work import queue
from termlists.models import TermList
from tests.governance.review_fixtures import editor, make_task, reviewer  # noqa: F401  (fixtures)

PLAIN = ("Our new kettle boils a full litre in under three minutes, switches itself off when the water is "
         "ready, and keeps the handle cool to the touch, so the first cup of tea is never far away at home.")
HYPED = ("Our revolutionary kettle boils a full litre in under three minutes, switches itself off when the water "
         "is ready, and keeps the handle cool to the touch, so the first cup of tea is never far away at home.")
GAME = ("Our game changing kettle boils a full litre in under three minutes, switches itself off when the water "
        "is ready, and keeps the handle cool to the touch, so the first cup of tea is never far away at home.")
HYPE = {"check": "term_list", "list": "Hype words", "term": "revolutionary"}
MISSED = {"check": "term_list", "list": "Hype words", "term": "game-changing"}


@pytest.fixture
def screened(configuration, provider_server):
    """Tasks on `newsroom` (the local test provider) generated and screened by the worker."""
    hype = TermList.objects.create(name="Hype words", forbidden="revolutionary\ngame-changing", mode="report")
    hype.configurations.set([configuration])

    def make(text):
        provider_server.set_default({"text": text})
        task = make_task(configuration="newsroom", status="queued")
        queue.run(task.pk)
        task.refresh_from_db()
        assert task.status == "ready", task.failure
        return task
    return make


def keep_page(editor, task):
    return editor.get(f"/review/tasks/{task.pk}/").content.decode().split('id="keep"')[1]


def test_kept_examples_pass_test_policy_except_where_the_review_said_the_policy_is_wrong(screened, editor):
    plain, edited, missed, rejected = screened(PLAIN), screened(HYPED), screened(GAME), screened(HYPED)
    assert (plain.outcome, edited.outcome, missed.outcome, rejected.outcome) == (
        "allowed", "allowed_with_hints", "allowed", "allowed_with_hints")
    # (a) an accept with no marks
    assert editor.post(f"/review/tasks/{plain.pk}/accept").status_code == 302
    # (b) an edited accept: the hyped word edited away
    assert editor.post(f"/review/tasks/{edited.pk}/accept",
                       {"text": HYPED.replace("revolutionary", "new"), "confirm_hints": "1"}).status_code == 302
    # (c) a missed finding: "game changing" is the list's "game-changing" in other spelling
    value = teaching.encode(teaching._facts("term_list", list_name="Hype words", term="game-changing"))
    assert editor.post(f"/review/tasks/{missed.pk}/missed", {"finding": value}).status_code == 302
    assert editor.post(f"/review/tasks/{missed.pk}/accept").status_code == 302
    # (d) a reject, its hint marked right first
    facts = teaching.hint_facts(rejected.hints[0])
    assert editor.post(f"/review/tasks/{rejected.pk}/feedback",
                       {"finding": [teaching.encode(f) for f in facts], "verdict": "right",
                        "number": "1"}).status_code == 302
    assert editor.post(f"/review/tasks/{rejected.pk}/reject", {"confirmed": "1"}).status_code == 302

    # The page shows the expectation before saving; only (c) warns, naming the finding.
    pages = {name: keep_page(editor, task) for name, task in
             (("plain", plain), ("edited", edited), ("missed", missed), ("rejected", rejected))}
    assert 'data-outcome="allowed"' in pages["plain"] and "gavel-keep-warning" not in pages["plain"]
    assert "The example keeps the accepted edit." in pages["edited"] and "gavel-keep-warning" not in pages["edited"]
    assert 'data-outcome="allowed_with_hints"' in pages["missed"]
    assert ("The current policy does not find the term “game-changing” of the list “Hype words”; this example "
            "expects it, so policy tests fail on it until the policy finds it.") in pages["missed"]
    assert 'data-outcome="allowed_with_hints"' in pages["rejected"] and "gavel-keep-warning" not in pages["rejected"]

    for task in (plain, edited, missed, rejected):
        assert editor.post(f"/review/tasks/{task.pk}/keep").status_code == 302
    examples = {e.from_task: e for e in PolicyExample.objects.all()}
    assert examples[edited.pk].text == HYPED.replace("revolutionary", "new")
    assert examples[missed.pk].text == GAME and examples[rejected.pk].text == HYPED
    assert examples[rejected.pk].expect_outcome == "allowed_with_hints"
    assert examples[rejected.pk].expect_findings == [HYPE]

    report = run_examples(list(PolicyExample.objects.order_by("name")))
    results = {r.name: r for r in report.examples}
    for task in (plain, edited, rejected):
        assert results[examples[task.pk].name].passed, results[examples[task.pk].name].as_dict()
    failed = results[examples[missed.pk].name]
    assert not failed.passed and failed.missing == [MISSED] and failed.unexpected == []

    # The command a policy editor runs says the same.
    with pytest.raises(SystemExit):
        call_command("test_policy")


# --- what a kept example leaves out (decision 0054) ---
FIELD = {"record": "page:42", "name": "meta_description", "label": "Meta description", "max_length": 60}
FIELD_FINDING = {"check": "field"}


def field_fill(configuration, provider_server, text):
    """A field fill generated and screened by the worker: `text` is the value the model proposes."""
    provider_server.set_default({"text": text})
    task = make_task(configuration=configuration.identifier, kind="field_fill", field=FIELD, status="queued")
    queue.run(task.pk)
    task.refresh_from_db()
    assert task.status == "ready", task.failure
    return task


def passes_under_the_live_policy(example):
    """The example test of the live policy, on that one example: (passed, what differed)."""
    (result,) = run_examples([example]).examples
    return result.passed, result.as_dict()


@pytest.mark.parametrize("mark_right", [False, True], ids=["rejected", "marked-right-then-rejected"])
def test_a_too_long_value_rejected_and_kept_passes_under_the_live_policy(configuration, provider_server,
                                                                          editor, mark_right):
    task = field_fill(configuration, provider_server, PLAIN)
    assert task.outcome == "allowed_with_hints" and [h["check"] for h in task.hints] == ["field"]
    if mark_right:
        (value,) = [teaching.encode(f) for f in teaching.hint_facts(task.hints[0])]
        assert editor.post(f"/review/tasks/{task.pk}/feedback",
                           {"finding": [value], "verdict": "right", "number": "1"}).status_code == 302
    assert editor.post(f"/review/tasks/{task.pk}/reject", {"confirmed": "1"}).status_code == 302

    page = keep_page(editor, task)
    # The page names the field length check as what it is, and says it is left out and why.
    assert 'class="errornote gavel-keep-warning gavel-keep-left-out" data-check="field"' in page
    assert ("Left out of the example: the field length check (a value longer than the field&#x27;s max_length). "
            "Why: an example has no field and so no length limit") in page
    assert "pattern rule" not in page
    assert 'data-outcome="allowed"' in page
    assert "The review rejected this text for what only the left-out check finds" in page

    assert editor.post(f"/review/tasks/{task.pk}/keep").status_code == 302
    example = PolicyExample.objects.get(from_task=task.pk)
    assert FIELD_FINDING not in example.expect_findings and FIELD_FINDING not in example.expect_absent
    assert example.expect_outcome == "allowed" and "field length check" in example.note
    passed, result = passes_under_the_live_policy(example)
    assert passed, result


def test_a_too_long_value_with_a_term_keeps_the_term_and_leaves_out_the_length(configuration, provider_server,
                                                                             editor):
    hype = TermList.objects.create(name="Hype words", forbidden="revolutionary", mode="report")
    hype.configurations.set([configuration])
    task = field_fill(configuration, provider_server, HYPED)
    assert sorted(h["check"] for h in task.hints) == ["field", "term_list"]
    for facts in (teaching.hint_facts(hint) for hint in task.hints):
        assert editor.post(f"/review/tasks/{task.pk}/feedback", {
            "finding": [teaching.encode(f) for f in facts], "verdict": "right", "number": "1"}).status_code == 302
    assert editor.post(f"/review/tasks/{task.pk}/reject", {"confirmed": "1"}).status_code == 302
    page = keep_page(editor, task)
    assert "Findings expected: term “revolutionary” of the list “Hype words”</p>" in page
    assert page.count("gavel-keep-left-out") == 1 and 'data-outcome="allowed_with_hints"' in page

    assert editor.post(f"/review/tasks/{task.pk}/keep").status_code == 302
    example = PolicyExample.objects.get(from_task=task.pk)
    assert example.expect_findings == [HYPE] and example.expect_outcome == "allowed_with_hints"
    passed, result = passes_under_the_live_policy(example)
    assert passed, result


def test_a_too_long_value_marked_wrong_and_accepted_is_kept_without_it(configuration, provider_server, editor):
    task = field_fill(configuration, provider_server, PLAIN)
    (value,) = [teaching.encode(f) for f in teaching.hint_facts(task.hints[0])]
    assert editor.post(f"/review/tasks/{task.pk}/feedback",
                       {"finding": [value], "verdict": "wrong", "number": "1"}).status_code == 302
    assert editor.post(f"/review/tasks/{task.pk}/accept", {"confirm_hints": "1"}).status_code == 302
    page = keep_page(editor, task)
    assert "Findings expected absent" not in page and 'data-check="field"' in page
    assert "this example expects it absent" not in page  # no false "tests fail on it" warning
    assert editor.post(f"/review/tasks/{task.pk}/keep").status_code == 302
    example = PolicyExample.objects.get(from_task=task.pk)
    assert (example.expect_outcome, example.expect_findings, example.expect_absent) == ("allowed", [], [])
    passed, result = passes_under_the_live_policy(example)
    assert passed, result


@pytest.mark.parametrize(("finding", "words"), [
    ({"check": "term_list", "list": "Hype words", "term": "revolutionary"},
     "term “revolutionary” of the list “Hype words”"),
    ({"check": "rules_judge", "snippet": "house-style", "rule": 3}, "rule line 3 of the snippet house-style"),
    ({"check": "pattern_rules", "rule": "no-dates"}, "pattern rule no-dates"),
    ({"check": "citations", "rule": "no-dates"}, "citation [rule:no-dates]"),
    ({"check": "field"}, "field length check (a value longer than the field's max_length)"),
    ({"check": "secret_redaction"}, "secret redaction (key- or token-shaped values masked)"),
    ({"check": "stream"}, "finding of the check stream"),
])
def test_every_check_is_named_as_what_it_is(finding, words):
    assert keeping.describe(finding) == words


def test_only_findings_a_policy_test_finds_again_are_kept():
    kept = [f for f in ({"check": c} for c in ("term_list", "rules_judge", "pattern_rules", "citations", "field",
                                               "secret_redaction")) if keeping.kept_in_example(f)]
    assert [f["check"] for f in kept] == ["term_list", "rules_judge", "pattern_rules", "citations"]


def test_the_left_out_warning_in_german(configuration, provider_server, editor, reviewer):
    from django.test import Client

    task = field_fill(configuration, provider_server, PLAIN)
    assert editor.post(f"/review/tasks/{task.pk}/reject", {"confirmed": "1"}).status_code == 302
    german = Client(headers={"accept-language": "de"})
    german.force_login(reviewer)
    page = german.get(f"/review/tasks/{task.pk}/").content.decode().split('id="keep"')[1]
    assert ("Das Beispiel lässt den Prüfschritt Feldlänge (ein Wert, der länger ist, als max_length des Feldes "
            "erlaubt) weg. Warum: ein Beispiel hat kein Feld und damit keine Längengrenze") in page
    assert "Richtlinientest des Textes ergibt: ausgeliefert." in page
