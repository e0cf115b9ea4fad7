"""The dashboard's backlog row (issue 43): waiting count and the oldest's age, reviews a day and per editor,
the live policy version, the share of delivered texts reviewed, and what was delivered without findings."""
from datetime import timedelta

from django.utils import timezone

from governance.evidence import records
from governance.models import PolicyVersion, Task
from governance.work import editors
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, desk_policy, editor, make_task, reviewer,
)


def delivered(task, outcome="allowed"):
    body = {"id": f"c-{task.pk}", "policy_version": PolicyVersion.current(), "outcome": outcome, "text": task.answer,
            "checks": [{"check": "term_list", "result": "passed"}]}
    records.record(body, surface="task", configuration="newsroom-desk", task=task)


def test_the_backlog_row_counts_waiting_reviews_and_coverage(editor, reviewer, desk_policy):
    old = make_task(status="ready", outcome="allowed", answer=ANSWER, minutes_ago=60 * 26)
    make_task(status="blocked", outcome="blocked", answer="")
    clean = [make_task(status="ready", outcome="allowed", answer=f"{ANSWER} {n}") for n in range(3)]
    hinted = make_task(status="ready", outcome="allowed_with_hints", answer=f"{ANSWER} hinted")
    for task in clean:
        delivered(task)
    delivered(hinted, "allowed_with_hints")
    delivered(old)
    editors.accept(clean[0], user=reviewer)
    editors.reject(hinted, user=reviewer)
    page = editor.get("/review/dashboard/?days=7").content.decode()
    waiting = Task.objects.filter(status__in=["ready", "blocked", "failed"]).count()
    assert f"<strong>{waiting}</strong> waiting for review; the oldest for 1\xa0day" in page
    assert "<strong>0.3</strong> reviews a day (2 in the period)" in page
    assert f"live policy version <strong>{PolicyVersion.current()}</strong>" in page
    # 5 deliveries, 2 of them reviewed (one accepted, one rejected); 4 without findings, 3 of those unreviewed.
    assert "<strong>40 %</strong> of delivered texts reviewed by a person (2 of 5)" in page
    assert "<strong>4</strong> delivered without findings (3 of them not reviewed by a person)" in page
    assert '<th scope="row">reviewer</th><td>2</td><td>0.3</td>' in page
    german = editor.get("/review/dashboard/?days=7", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "der ausgelieferten Texte von einer Person geprüft (2 von 5)" in german
    assert timezone.now() - old.created > timedelta(days=1)
