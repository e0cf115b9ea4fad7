"""The editors' day at volume (issue 29): checks that did not run said in words, the queue's filters kept
across every act, page numbers and sizes, "has hints" and "checks not run" filters."""
import re

import pytest

from governance.models import Configuration, Task, set_links
from snippets.models import Snippet
from governance.work import queue
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, desk_policy, editor, hinted_task, make_task, reviewer,
)

SHORT = "The backup service now supports 8 languages and 4 time zones."  # 11 words, under the floor


def rows(html):
    return re.findall(r'<tr data-task="([0-9a-f-]+)" data-status="(\w+)"', html)


@pytest.fixture
def judged(configuration, provider):
    """`newsroom` with a house-style rule set judged in block mode, and a judge on the same server."""
    Snippet.objects.create(identifier="numbers", name="Numbers", tags=["style"],
                           body="Write numbers under ten as words.")
    judge = Configuration.objects.create(identifier="judge", provider=provider, model="judge-model")
    configuration.rule_mode, configuration.rule_tags = "block", ["style"]
    configuration.save()
    set_links(configuration, "rule_judges", [judge])
    return configuration


def test_a_short_answer_says_judges_and_pattern_rules_did_not_run_in_the_queue_and_on_the_task(
        judged, provider_server, editor):
    provider_server.set_default({"text": SHORT})
    task = make_task(configuration="newsroom", status="queued")
    queue.run(task.pk)
    task.refresh_from_db()
    assert task.status == "ready" and task.answer == SHORT and task.hints == []
    assert {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"} in task.checks

    page = editor.get("/review/").content.decode()
    row = page.split(f'data-task="{task.pk}"')[1].split("</tr>")[0]
    assert "Pattern rules, Citations, Judges (rules) did not run: the text is shorter than 30 words, too short " \
           "to judge" in row
    detail = editor.get(f"/review/tasks/{task.pk}/").content.decode()
    assert "Checks that did not run" in detail
    assert "<strong>Pattern rules, Citations, Judges (rules)</strong>: the text is shorter than 30 words" in detail
    # The filter "checks not run" finds it; a task whose checks all ran is not in it.
    ran = make_task(status="ready", outcome="allowed", answer=ANSWER,
                    checks=[{"check": "rules_judge", "result": "passed"}])
    found = [pk for pk, _status in rows(editor.get("/review/?not_run=on").content.decode())]
    assert found == [str(task.pk)] and str(ran.pk) not in found


def test_the_has_hints_filter_and_page_size_and_numbers(editor, hinted_task):
    plain = [make_task(status="ready", outcome="allowed", answer=f"Plain text {i}.", minutes_ago=i + 1)
             for i in range(60)]
    with_hints = [pk for pk, _s in rows(editor.get("/review/?hints=yes").content.decode())]
    assert with_hints == [str(hinted_task.pk)]
    without = editor.get("/review/?hints=no&size=50").content.decode()
    assert len(rows(without)) == 50 and str(hinted_task.pk) not in without
    assert 'class="gavel-last-page">2</a>' in without and "page 1 of 2 · 60 tasks" in without
    last = editor.get("/review/?hints=no&size=50&page=2").content.decode()
    assert [pk for pk, _s in rows(last)] == [str(t.pk) for t in plain[50:]]
    assert "size=50" in re.search(r'href="/review/tasks/[^"]+"', last).group(0)


def test_the_batch_filter_is_kept_after_accept_and_reject_and_next_stays_in_the_batch(editor, desk_policy):
    from governance.models import Batch

    ours, theirs = Batch.objects.create(name="ours", total=3), Batch.objects.create(name="theirs", total=3)
    mine = [make_task(status="ready", outcome="allowed", answer="Ours.", batch=ours, minutes_ago=10 + i)
            for i in range(3)]
    # Newer tasks of another batch sit between ours in the queue's order.
    for i in range(3):
        make_task(status="ready", outcome="allowed", answer="Theirs.", batch=theirs, minutes_ago=10 + i)
    scope = {"batch": str(ours.pk), "status": "waiting"}
    response = editor.post(f"/review/tasks/{mine[0].pk}/accept", scope)
    assert response.status_code == 302
    assert response["Location"] == f"/review/tasks/{mine[1].pk}/?batch={ours.pk}"
    response = editor.post(f"/review/tasks/{mine[1].pk}/reject", {**scope, "confirmed": "1"})
    assert response["Location"] == f"/review/tasks/{mine[2].pk}/?batch={ours.pk}"
    assert Task.objects.get(pk=mine[1].pk).status == "rejected"


def test_reject_asks_first_keeps_the_reason_and_can_be_undone_for_a_minute(editor, desk_policy):
    from datetime import timedelta

    from governance.models import GovernanceEvent

    task = make_task(status="ready", outcome="allowed", answer=ANSWER, correlation_id="corr-r")
    asked = editor.post(f"/review/tasks/{task.pk}/reject", {"status": "waiting"})
    assert asked.status_code == 200 and 'id="reject-confirm" hidden' not in asked.content.decode()
    assert 'id="reject-confirm"' in asked.content.decode()
    assert Task.objects.get(pk=task.pk).status == "ready"  # nothing happened yet

    done = editor.post(f"/review/tasks/{task.pk}/reject", {"confirmed": "1", "reason": "  Off   topic. "})
    assert done.status_code == 302 and Task.objects.get(pk=task.pk).status == "rejected"
    event = GovernanceEvent.objects.get(decision="rejected")
    assert event.detail["reason"] == "Off topic."
    queue_page = editor.get("/review/").content.decode()
    assert f"Task {str(task.pk)[:8]} was rejected." in queue_page and 'id="undo-button"' in queue_page

    undone = editor.post(f"/review/tasks/{task.pk}/undo")
    assert undone.status_code == 302
    task.refresh_from_db()
    assert (task.status, task.review_decision, task.reviewed_at) == ("ready", "", None)
    assert GovernanceEvent.objects.filter(decision="undone", detail__undone="rejected").count() == 1
    assert 'id="undo-button"' not in editor.get("/review/").content.decode()

    # Once the minute is over, undo is refused with the reason in words.
    editor.post(f"/review/tasks/{task.pk}/reject", {"confirmed": "1"})
    Task.objects.filter(pk=task.pk).update(reviewed_at=task.updated - timedelta(minutes=2))
    late = editor.post(f"/review/tasks/{task.pk}/undo", follow=True).content.decode()
    assert "This review can no longer be undone (the task is rejected)." in late
    assert Task.objects.get(pk=task.pk).status == "rejected"


def test_bulk_accept_takes_only_ready_hint_free_tasks_after_a_confirmation_with_the_count(editor, hinted_task):
    plain = [make_task(status="ready", outcome="allowed", answer=f"Plain {i}.") for i in range(3)]
    chosen = {"task": [str(t.pk) for t in plain] + [str(hinted_task.pk)], "hints": "no"}
    asked = editor.post("/review/bulk-accept", chosen).content.decode()
    assert "Accept 3 tasks without hints?" in asked
    assert "1 selected task has hints or is not ready; it is left out." in asked
    assert Task.objects.filter(status="accepted").count() == 0
    done = editor.post("/review/bulk-accept", {**chosen, "confirmed": "1"})
    assert done.status_code == 302 and done["Location"] == "/review/?hints=no"
    assert set(Task.objects.filter(status="accepted").values_list("pk", flat=True)) == {t.pk for t in plain}
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"
    assert "3 tasks accepted." in editor.get("/review/?hints=no").content.decode()


def test_right_and_wrong_answer_json_to_the_script_and_redirect_a_plain_form(editor, hinted_task):
    from governance.models import GovernanceEvent
    from governance.review import teaching

    GovernanceEvent.objects.create(correlation_id="corr-hinted", decision="reported", check_name="term_list",
                                   configuration="newsroom-desk", detail={"list": "Hype words",
                                                                          "terms": ["revolutionary"]})
    finding = teaching.encode(teaching.hint_facts(hinted_task.hints[0])[0])
    answer = editor.post(f"/review/tasks/{hinted_task.pk}/feedback", {"finding": finding, "verdict": "wrong",
                                                                        "number": "1"},
                         HTTP_ACCEPT="application/json")
    assert answer.status_code == 200 and answer.json() == {"verdict": "wrong", "label": "Marked wrong",
                                                           "message": "Hint 1 marked wrong."}
    refused = editor.post(f"/review/tasks/{hinted_task.pk}/feedback", {"finding": "[]", "verdict": "right"},
                          HTTP_ACCEPT="application/json")
    assert refused.status_code == 400 and refused.json()["error"] == "This hint names no rule or term to mark."
    plain = editor.post(f"/review/tasks/{hinted_task.pk}/feedback", {"finding": finding, "verdict": "right",
                                                                       "number": "1"})
    assert plain.status_code == 302 and plain["Location"].endswith("#hint-1")


def test_the_dashboard_polls_the_batches_progress(editor, desk_policy):
    from governance.models import Batch

    batch = Batch.objects.create(name="live", total=2)
    tasks = [make_task(status="queued", batch=batch) for _ in range(2)]
    page = editor.get("/review/dashboard/").content.decode()
    rendered = re.search(r'data-live-url="/review/dashboard/batches.json" data-signature="(\w+)"', page).group(1)
    state = editor.get("/review/dashboard/batches.json").json()
    assert state["signature"] == rendered
    assert state["batches"] == [{"id": str(batch.pk), "finished": 0, "total": 2}]
    Task.objects.filter(pk=tasks[0].pk).update(status="ready")
    moved = editor.get("/review/dashboard/batches.json").json()
    assert moved["signature"] != rendered and moved["batches"][0]["finished"] == 1
    assert "1 of 2 finished (50%)" in editor.get("/review/dashboard/").content.decode()


def test_missed_by_the_policy_is_not_offered_on_a_blocked_task_that_keeps_no_text(editor, desk_policy, hinted_task):
    blocked = make_task(status="blocked", outcome="blocked", answer="", correlation_id="corr-b",
                        refusal={"check": "term_list", "message": "No.", "stored_message": "No."})
    assert 'id="missed-finding"' not in editor.get(f"/review/tasks/{blocked.pk}/").content.decode()
    assert 'id="missed-finding"' in editor.get(f"/review/tasks/{hinted_task.pk}/").content.decode()
