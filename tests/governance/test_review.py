"""The review UI as an editor uses it (SPEC §10): who gets in, the queue, a task's page, the actions.

The browser tests (tests/browser/test_review_browser.py) drive the same pages in chromium; these
check each rule through Django's test client, fast.
"""
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from governance.models import GovernanceEvent, Task
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, PROMISE, RULE_LINE, blocked_task, desk_policy, editor, fast_passwords, field_task, hinted_task,
    make_task, outsider, queued_task, reviewer,
)


def detail_url(task):
    return f"/review/tasks/{task.pk}/"


# --- who gets in ---
@pytest.mark.parametrize("path", ["/review/", "/review/dashboard/", "/review/state.json"])
def test_an_anonymous_visitor_is_sent_to_the_editors_login(db, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={path}"


def test_an_editor_who_is_not_staff_logs_in_at_accounts_login(reviewer, fast_passwords):
    reviewer.set_password("kettle-and-tea-42")
    reviewer.save()
    client = Client()
    page = client.get("/accounts/login/?next=/review/")
    assert page.status_code == 200
    assert 'name="username"' in page.content.decode()
    response = client.post("/accounts/login/?next=/review/",
                           {"username": "reviewer", "password": "kettle-and-tea-42", "next": "/review/"})
    assert response.status_code == 302 and response["Location"] == "/review/"
    assert client.get("/review/").status_code == 200
    # The admin's own login refuses the same person: that is why the review UI has its own.
    admin = Client().post("/admin/login/?next=/admin/", {"username": "reviewer", "password": "kettle-and-tea-42"})
    assert admin.status_code == 200 and "/admin/" not in admin.get("Location", "")


@pytest.mark.parametrize("path", ["/review/", "/review/dashboard/", "/review/state.json"])
def test_a_logged_in_non_editor_gets_a_403_page(outsider, path):
    client = Client()
    client.force_login(outsider)
    response = client.get(path)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "not an editor" in html and "Traceback" not in html


def test_a_non_editor_cannot_act_on_a_task(outsider, hinted_task):
    client = Client()
    client.force_login(outsider)
    assert client.post(f"{detail_url(hinted_task)}accept").status_code == 403
    assert client.get(f"{detail_url(hinted_task)}state.json").status_code == 403
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"


def test_staff_are_editors(db):
    staff = User.objects.create_user("desk-chief", None, None, is_staff=True)
    client = Client()
    client.force_login(staff)
    assert client.get("/review/").status_code == 200


# --- the queue ---
def rows(html: str) -> list[tuple[str, str]]:
    """(task id, status) of each row of the queue table, top to bottom."""
    return re.findall(r'<tr data-task="([0-9a-f-]+)" data-status="(\w+)"', html)


def test_the_queue_lists_newest_first_with_counts_per_status(editor, hinted_task, blocked_task, field_task,
                                                             queued_task):
    html = editor.get("/review/?status=all").content.decode()
    assert [pk for pk, _ in rows(html)] == [str(t.pk) for t in (hinted_task, queued_task, blocked_task, field_task)]
    counts = dict(re.findall(r'data-status="(\w+)"><a [^>]*>[^<]*<span class="gavel-count">(\d+)</span>', html))
    assert counts["ready"] == "2" and counts["blocked"] == "1" and counts["queued"] == "1"
    assert counts["accepted"] == "0" and counts["all"] == "4" and counts["waiting"] == "3"
    assert "page:42 · meta_description" in html


def test_the_queue_opens_on_what_waits_for_review(editor, hinted_task, blocked_task, field_task, queued_task):
    html = editor.get("/review/").content.decode()
    # Ready and blocked tasks wait for a decision, failed ones for a retry; queued ones for a worker.
    assert [pk for pk, _ in rows(html)] == [str(t.pk) for t in (hinted_task, blocked_task, field_task)]
    assert re.search(r'<li class="selected" data-status="waiting"><a href="\?"', html)


def test_the_queue_filters_by_status_kind_and_configuration(editor, hinted_task, blocked_task, field_task,
                                                            queued_task):
    make_task(configuration="newsroom-legal", status="ready")
    assert len(rows(editor.get("/review/?status=all").content.decode())) == 5
    assert {s for _, s in rows(editor.get("/review/?status=ready").content.decode())} == {"ready"}
    assert len(rows(editor.get("/review/?status=ready").content.decode())) == 3
    assert [pk for pk, _ in rows(editor.get("/review/?kind=field_fill").content.decode())] == [str(field_task.pk)]
    legal = rows(editor.get("/review/?configuration=newsroom-legal&status=all").content.decode())
    assert len(legal) == 1
    both = rows(editor.get("/review/?status=ready&configuration=newsroom-desk&kind=queued_task").content.decode())
    assert [pk for pk, _ in both] == [str(hinted_task.pk)]


def test_an_unknown_filter_value_is_named_not_a_crash(editor, hinted_task):
    response = editor.get("/review/?status=shipped&kind=queued_task")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Select a valid choice. shipped is not one of the available choices." in html
    assert [pk for pk, _ in rows(html)] == [str(hinted_task.pk)]  # the valid filter still applies


def test_the_queue_is_paginated(editor, desk_policy):
    Task.objects.bulk_create([Task(configuration="newsroom-desk", status="queued") for _ in range(27)])
    first = editor.get("/review/?status=queued").content.decode()
    second = editor.get("/review/?status=queued&page=2").content.decode()
    assert len(rows(first)) == 25 and len(rows(second)) == 2
    assert "page 1 of 2" in first and 'rel="next"' in first
    assert not set(rows(first)) & set(rows(second))


def test_the_queue_state_changes_when_a_row_changes(editor, queued_task):
    before = editor.get("/review/state.json?status=all").json()
    assert before["tasks"] == [{"id": str(queued_task.pk), "status": "queued"}]
    assert editor.get("/review/state.json?status=all").json()["signature"] == before["signature"]
    Task.objects.filter(pk=queued_task.pk).update(status="running")
    after = editor.get("/review/state.json?status=all").json()
    assert after["signature"] != before["signature"] and after["counts"] == {"running": 1}


# --- a task's page ---
def test_each_hinted_passage_is_marked_and_linked_to_its_hint(editor, hinted_task):
    html = editor.get(detail_url(hinted_task)).content.decode()
    marks = re.findall(r'<mark class="gavel-mark" data-hints="([\d ]+)" data-credited="\d+"><a href="#hint-(\d+)"'
                       r'[^>]*>([^<]*)</a></mark>', html)
    assert marks == [("1", "1", HYPE), ("2", "2", PROMISE)]
    assert 'id="passage-1"' in html and 'id="passage-2"' in html
    # Every hint is there: its number, the rule line and snippet, the list and terms.
    hint_ids = re.findall(r'<li id="hint-(\d+)"', html)
    assert hint_ids == ["1", "2", "3"]
    assert "Rule 2" in html and f"<q>{RULE_LINE}</q>" in html and "snippet house-style" in html
    assert "List “Hype words”" in html and f'<code class="gavel-term">{HYPE}</code>' in html
    # A hint that could not be checked says why, in words.
    assert "Not checked: the judge did not answer in time" in html
    # The first hint is where focus lands.
    assert re.search(r'<li id="hint-1"[^>]*data-first-hint', html)


def test_a_hint_whose_offsets_do_not_hold_its_passage_is_listed_unmarked(editor, desk_policy):
    hints = [{"check": "term_list", "type": "forbidden", "list": "Hype words", "terms": [HYPE], "passage": HYPE,
              "start": 0, "end": len(HYPE)},
             {"check": "term_list", "type": "forbidden", "list": "Hype words", "terms": ["x"], "passage": "gone",
              "start": None, "end": None}]
    task = make_task(status="ready", outcome="allowed_with_hints", answer=ANSWER, hints=hints)
    html = editor.get(detail_url(task)).content.decode()
    assert "<mark" not in html
    assert len(re.findall(r'<li id="hint-\d+"', html)) == 2
    assert "Passage (not found verbatim in the text):" in html


def test_a_pattern_rule_hint_names_its_identifier_and_statement(editor, desk_policy):
    hints = [{"check": "pattern_rules", "type": "violation", "configuration": "newsroom-desk",
              "rule": {"identifier": "shop.no-delivery-promise", "statement": RULE_LINE, "severity": "critical"},
              "passage": PROMISE, "start": ANSWER.index(PROMISE), "end": ANSWER.index(PROMISE) + len(PROMISE)}]
    task = make_task(status="ready", outcome="allowed_with_hints", answer=ANSWER, hints=hints)
    html = editor.get(detail_url(task)).content.decode()
    assert re.search(r"Pattern rule <code>shop.no-delivery-promise</code>: <q>Never promise delivery dates.</q>", html)
    assert "critical" in html and f'<a href="#hint-1" title="Hint 1">{PROMISE}</a>' in html


def test_a_blocked_task_shows_its_stored_refusal_and_can_only_be_rejected(editor, blocked_task):
    html = editor.get(detail_url(blocked_task)).content.decode()
    assert "The term list “Competitors” does not allow: Acme." in html
    assert 'id="reject-button"' in html
    assert 'id="accept-button"' not in html and 'id="edit-form"' not in html and "<mark" not in html


def test_a_field_fill_shows_record_field_label_and_length(editor, field_task):
    html = editor.get(detail_url(field_task)).content.decode()
    assert "<code>page:42</code>" in html and "<code>meta_description</code>" in html
    assert "Meta description" in html and "160 characters" in html
    assert f"this value: {len(field_task.answer)}" in html


def test_each_action_has_a_single_key_and_no_access_key(editor, hinted_task, queued_task):
    html = editor.get(detail_url(hinted_task)).content.decode()
    for button, key in (("accept-button", "a"), ("reject-button", "r")):
        assert re.search(rf'id="{button}" data-key="{key}">[^<]*<kbd>{key.upper()}</kbd>', html), button
    assert "accesskey" not in html and "Access keys" not in html
    assert 'id="shortcut-help"' in html and "data-help-open" in html
    # No script on the page itself: every line of it comes from a static file (a CSP without inline script).
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and " onclick=" not in html and " onchange=" not in html
    assert "accesskey" not in editor.get(detail_url(queued_task)).content.decode()


def test_the_page_follows_the_editors_language(editor, hinted_task):
    html = editor.get(detail_url(hinted_task), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="de"' in html
    assert "Annehmen" in html and "Ablehnen" in html
    assert "Nicht überprüft: der Prüfer hat nicht rechtzeitig geantwortet" in html
    assert "Regel 2" in html


# --- actions ---
def review_events(decision):
    return list(GovernanceEvent.objects.filter(check_name="review", decision=decision))


def test_accept(editor, reviewer, hinted_task):
    response = editor.post(f"{detail_url(hinted_task)}accept")
    # Nothing else waits: back to the queue, which says so.
    assert response.status_code == 302 and response["Location"] == "/review/"
    task = Task.objects.get(pk=hinted_task.pk)
    assert (task.status, task.review_decision, task.reviewed_by, task.edited) == ("accepted", "accepted", reviewer,
                                                                                   False)
    assert len(review_events("accepted")) == 1
    assert "Accepted. Nothing else is waiting for review here." in editor.get("/review/").content.decode()


def test_an_edit_the_policy_blocks_is_refused_with_its_message_and_kept_in_the_form(editor, hinted_task):
    edited = ANSWER.replace(HYPE, "Acme-grade")
    response = editor.post(f"{detail_url(hinted_task)}accept", {"text": edited})
    assert response.status_code == 200
    html = response.content.decode()
    assert re.search(r'<p class="errornote" role="alert" id="edit-error">The edited text was not accepted: '
                     r'[^<]*Competitors[^<]*Acme', html)
    assert f">{edited}</textarea>" in html
    task = Task.objects.get(pk=hinted_task.pk)
    assert task.status == "ready" and not task.edited and task.edited_text == ""
    assert review_events("accepted") == []


def test_an_edit_that_passes_is_screened_again_and_accepted(editor, hinted_task):
    edited = ANSWER.replace(HYPE + " ", "")
    response = editor.post(f"{detail_url(hinted_task)}accept", {"text": edited})
    assert response.status_code == 302
    task = Task.objects.get(pk=hinted_task.pk)
    assert (task.status, task.edited, task.edited_text) == ("accepted", True, edited)
    assert all(h.get("list") != "Hype words" for h in task.hints)  # the new screening's hints
    page = editor.get(detail_url(task)).content.decode()
    assert "Accepted text (edited)" in page and "The edited text was accepted." in page


def test_reject_a_blocked_task(editor, blocked_task):
    assert editor.post(f"{detail_url(blocked_task)}reject", {"confirmed": "1"}).status_code == 302
    assert Task.objects.get(pk=blocked_task.pk).status == "rejected"
    assert len(review_events("rejected")) == 1


def test_an_act_the_status_does_not_allow_says_why(editor, blocked_task, queued_task):
    editor.post(f"{detail_url(blocked_task)}accept")
    assert Task.objects.get(pk=blocked_task.pk).status == "blocked"
    assert "Only a ready task can be accepted" in editor.get(detail_url(blocked_task)).content.decode()
    Task.objects.filter(pk=queued_task.pk).update(status="running")
    editor.post(f"{detail_url(queued_task)}cancel")
    assert "The task cannot be cancelled: it is running." in editor.get(detail_url(queued_task)).content.decode()


def test_cancel_a_queued_task(editor, queued_task):
    assert editor.post(f"{detail_url(queued_task)}cancel").status_code == 302
    assert Task.objects.get(pk=queued_task.pk).status == "cancelled"


def test_actions_are_posts_with_csrf(reviewer, hinted_task):
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    assert client.get(f"{detail_url(hinted_task)}accept").status_code == 405
    assert client.post(f"{detail_url(hinted_task)}accept").status_code == 403
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"


def test_an_unknown_task_is_404(editor, db):
    assert editor.get("/review/tasks/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_a_running_tasks_state_is_polled_without_its_text(editor, queued_task):
    state = editor.get(f"{detail_url(queued_task)}state.json").json()
    assert set(state) == {"id", "status", "status_label", "signature"} and state["status"] == "queued"
    html = editor.get(detail_url(queued_task)).content.decode()
    assert f'data-live-url="{detail_url(queued_task)}state.json"' in html
    assert f'data-signature="{state["signature"]}"' in html


def test_the_profile_language_wins_and_the_review_switch_saves_it(editor, reviewer, hinted_task):
    from governance.models import UserProfile

    assert 'id="language-select"' in editor.get(detail_url(hinted_task)).content.decode()
    UserProfile.objects.create(user=reviewer, language="de")  # as the admin's switch leaves it
    html = editor.get(detail_url(hinted_task), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<html lang="de"' in html and "Annehmen" in html
    # The switch stays, and what it chooses is saved where the admin's choice was: the profile.
    assert 'id="language-select"' in html and 'action="/review/language"' in html
    response = editor.post("/review/language", {"language": "en", "next": detail_url(hinted_task)})
    assert response.status_code == 302 and response["Location"] == detail_url(hinted_task)
    assert UserProfile.objects.get(user=reviewer).language == "en"
    assert '<html lang="en"' in editor.get(detail_url(hinted_task), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert editor.post("/review/language", {"language": "de", "next": "https://elsewhere.example/"})[
        "Location"] == "/review/"


def test_the_page_says_when_the_demo_provider_answered(editor, hinted_task):
    from governance.models import Provider

    note = "comes from the demo provider"
    assert note not in editor.get(detail_url(hinted_task)).content.decode()
    Provider.objects.create(name="demo-echo-no-model", route="demo", trust_zone="local")
    Task.objects.filter(pk=hinted_task.pk).update(
        completion={"provider": "demo-echo-no-model", "model": "echo", "usage": {}, "cost": 0.0})
    assert note in editor.get(detail_url(hinted_task)).content.decode()
