"""Bulk accept takes only what was checked in full, counts what it leaves out, and can be undone (issue 43)."""
import re

from governance.models import EvidenceRecord, Task
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, desk_policy, editor, hinted_task, make_task, reviewer,
)

SHORT = "The backup service now supports 8 languages and 4 time zones."  # 11 words: judges did not run
SKIPPED = [{"check": "term_list", "result": "passed"},
           {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"},
           {"check": "pattern_rules", "result": "skipped", "reason": "not_finished_text"}]
FULL = [{"check": "term_list", "result": "passed"}, {"check": "rules_judge", "result": "passed"}]


def test_a_text_whose_judges_never_ran_is_not_offered_and_the_confirmation_counts_it(editor, desk_policy):
    checked = [make_task(status="ready", outcome="allowed", answer=ANSWER, checks=FULL) for _ in range(2)]
    short = [make_task(status="ready", outcome="allowed", answer=SHORT, checks=SKIPPED) for _ in range(3)]
    queue = editor.get("/review/").content.decode()
    offered = set(re.findall(r'class="gavel-bulk-box" id="select-([0-9a-f-]+)"', queue))
    assert offered == {str(t.pk) for t in checked}
    assert "3 tasks without hints on this page are not offered: a check did not run on them." in queue
    # A hand-made selection with the short texts still leaves them out, and says so.
    chosen = {"task": [str(t.pk) for t in checked + short]}
    asked = editor.post("/review/bulk-accept", chosen).content.decode()
    assert "Accept 2 tasks without hints?" in asked
    assert "3 selected tasks without hints are left out: a check did not run on them" in asked
    editor.post("/review/bulk-accept", {**chosen, "confirmed": "1"})
    assert {t.pk for t in Task.objects.filter(status="accepted")} == {t.pk for t in checked}
    only_short = editor.post("/review/bulk-accept", {"task": [str(t.pk) for t in short]}, follow=True)
    assert "checked in full" in only_short.content.decode()
    assert Task.objects.filter(status="accepted").count() == 2


def test_a_bulk_accept_can_be_undone_for_a_minute(editor, desk_policy):
    tasks = [make_task(status="ready", outcome="allowed", answer=ANSWER, checks=FULL) for _ in range(3)]
    chosen = {"task": [str(t.pk) for t in tasks], "confirmed": "1"}
    queue = editor.post("/review/bulk-accept", chosen, follow=True).content.decode()
    assert "3 tasks were accepted together." in queue and 'action="/review/bulk-undo"' in queue
    assert Task.objects.filter(status="accepted").count() == 3
    assert EvidenceRecord.objects.exclude(review_decision="").count() == 3
    undone = editor.post("/review/bulk-undo", follow=True).content.decode()
    assert "3 accepts were undone; the tasks are ready again." in undone
    assert Task.objects.filter(status="ready").count() == 3
    assert EvidenceRecord.objects.exclude(review_decision="").count() == 0  # the accepts did not stand
    again = editor.post("/review/bulk-undo", follow=True).content.decode()
    assert "This bulk accept can no longer be undone." in again
