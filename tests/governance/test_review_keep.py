"""Keep as example follows the review exactly (issue 29, Must show 3): four tasks screened for real by the
worker, reviewed through the pages, kept, then `test_policy` screens the four examples under the policy."""
import pytest
from django.core.management import call_command

from governance.models import PolicyExample
from governance.policy.testing import run_examples
from governance.review import teaching
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
