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
