"""A text screened under an older policy version (issue 43): a badge says so, *screen again* re-screens it under
the live policy, and accept re-screens first: a text the live policy stops is not accepted, and says why."""
from governance.models import EvidenceRecord, PolicyVersion, Task
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, desk_policy, editor, make_task, reviewer,
)

CLEAN = ANSWER.replace("revolutionary", "sturdy")
STOPPED = CLEAN.replace("Our new kettle", "Our new Acme kettle")  # the Competitors list stops "Acme"


def older(text, desk_policy):
    """A ready task screened under the version that was live before the latest change."""
    task = make_task(status="ready", outcome="allowed", answer=text, hints=[], policy_version=PolicyVersion.current(),
                     checks=[{"check": "term_list", "result": "passed"}])
    PolicyVersion.bump()
    return task, PolicyVersion.current()


def test_the_badge_on_the_queue_and_the_task_page(editor, desk_policy):
    task, live = older(CLEAN, desk_policy)
    badge = f"screened under v{task.policy_version} — live is v{live}"
    assert badge in editor.get("/review/").content.decode()
    page = editor.get(f"/review/tasks/{task.pk}/").content.decode()
    assert badge in page and 'id="rescreen-button"' in page
    current = make_task(status="ready", outcome="allowed", answer=CLEAN, hints=[], policy_version=live)
    assert "screened under v" not in editor.get(f"/review/tasks/{current.pk}/").content.decode()


def test_accept_screens_again_and_a_text_the_live_policy_stops_is_not_accepted(editor, desk_policy):
    task, live = older(STOPPED, desk_policy)
    page = editor.post(f"/review/tasks/{task.pk}/accept", follow=True).content.decode()
    assert f"Not accepted: the text was screened under policy version {task.policy_version}, and the live policy " \
           f"(version {live}) stops it" in page
    assert "Acme" in page
    assert Task.objects.get(pk=task.pk).status == "ready"
    assert not EvidenceRecord.objects.filter(task=task).exclude(review_decision="").exists()


def test_accept_of_a_text_the_live_policy_lets_through_names_the_live_version(editor, desk_policy):
    task, live = older(CLEAN, desk_policy)
    editor.post(f"/review/tasks/{task.pk}/accept")
    task.refresh_from_db()
    assert task.status == "accepted" and task.policy_version == live and not task.edited
    assert EvidenceRecord.objects.get(task=task, review_decision="accepted").policy_version == live


def test_screen_again_keeps_the_live_result_or_says_it_stops(editor, desk_policy):
    task, live = older(CLEAN.replace("sturdy", "revolutionary"), desk_policy)
    page = editor.post(f"/review/tasks/{task.pk}/rescreen", follow=True).content.decode()
    assert f"Screened again under policy version {live} (was {task.policy_version}): 1 hint." in page
    task.refresh_from_db()
    assert task.policy_version == live and task.outcome == "allowed_with_hints" and len(task.hints) == 1
    assert "screened under v" not in page
    stopped, _live = older(STOPPED, desk_policy)
    said = editor.post(f"/review/tasks/{stopped.pk}/rescreen", follow=True).content.decode()
    assert "the live policy stops this text" in said and "It cannot be accepted" in said
    assert Task.objects.get(pk=stopped.pk).status == "ready"
