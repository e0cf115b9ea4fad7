"""The review UI at volume (issue 15): every hinted term marked and credited to its hint, a rejected
blocked task that keeps its refusal, a failed task an editor can retry, the queue's previews, search
and default, the next task after each act, edits that still have hints, the governance log's search,
and hints that say what happened to the text. The browser tests drive the same pages in chromium.
"""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.work import editors, queue
from governance.models import GovernanceEvent, Task
from governance.review.passages import place
from governance.review.task_page import failure_words, worker_detail
from termlists.models import TermList
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, blocked_task, desk_policy, editor, field_task, hinted_task, make_task, queued_task, reviewer,
)
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401

CHEAP = "Cheap kettles ship ASAP. Cheap, cheap and cheerful, and ASAP again."


def detail_url(task):
    return f"/review/tasks/{task.pk}/"


def rows(html):
    return re.findall(r'<tr data-task="([0-9a-f-]+)" data-status="(\w+)"', html)


def marks(html):
    return re.findall(r'<mark class="gavel-mark" data-hints="([\d ]+)" data-credited="(\d+)"><a href="#hint-(\d+)"'
                      r'[^>]*>([^<]*)</a></mark>', html)


# --- 5: every occurrence of every term, each mark credited to the right hint ---
def term_hint(text, terms, first):
    start = text.index(first)
    return {"check": "term_list", "type": "forbidden", "list": "Hype", "terms": terms, "passage": first,
            "start": start, "end": start + len(first), "message": "…"}


def test_a_term_list_hint_marks_every_occurrence_of_every_term():
    placed = place(CHEAP, [term_hint(CHEAP, ["cheap", "ASAP"], "Cheap")])
    marked = [(p.text, p.hints) for p in placed.pieces if p.hints]
    assert marked == [("Cheap", (0,)), ("ASAP", (0,)), ("Cheap", (0,)), ("cheap", (0,)), ("ASAP", (0,))]
    assert placed.occurrences == {0: 5}
    assert "".join(p.text for p in placed.pieces) == CHEAP  # "cheerful" is not "cheap": whole words only


def test_a_hint_on_a_tool_call_or_with_offsets_elsewhere_marks_nothing_more():
    on_tool = {**term_hint(CHEAP, ["cheap"], "Cheap"), "tool_call": 0, "argument": "q"}
    assert place(CHEAP, [on_tool]).occurrences == {0: 1}  # its own span only: the terms were in a tool call


def test_overlapping_passages_credit_each_piece_to_its_most_specific_hint():
    rule = "Cheap, cheap and cheerful"
    start = CHEAP.index(rule)
    hints = [{"check": "rules_judge", "type": "violation", "passage": rule, "start": start, "end": start + len(rule)},
             term_hint(CHEAP, ["cheap"], "Cheap")]
    pieces = [(p.text, p.hints, p.credited, p.ends) for p in place(CHEAP, hints).pieces if p.hints]
    # Inside the rule's passage each term is credited to the term-list hint (the shorter passage); the
    # rest of the passage to the rule; each passage's end carries its own hint's number.
    assert pieces == [
        ("Cheap", (1,), 1, (1,)),
        ("Cheap", (0, 1), 1, (1,)), (", ", (0,), 0, ()), ("cheap", (0, 1), 1, (1,)),
        (" and cheerful", (0,), 0, (0,)),
    ]


def test_the_page_marks_every_term_and_links_each_mark_to_its_hint(editor, desk_policy):
    rule = "Cheap, cheap and cheerful"
    start = CHEAP.index(rule)
    task = make_task(status="ready", outcome="allowed_with_hints", answer=CHEAP, hints=[
        {"check": "rules_judge", "type": "violation", "rule": {"number": 1, "line": "No bargains.", "snippet": "s"},
         "passage": rule, "start": start, "end": start + len(rule), "message": "…"},
        term_hint(CHEAP, ["cheap", "ASAP"], "Cheap")])
    html = editor.get(detail_url(task)).content.decode()
    found = marks(html)
    assert [m[3] for m in found] == ["Cheap", "ASAP", "Cheap", ", ", "cheap", " and cheerful", "ASAP"]
    assert [m[2] for m in found] == ["2", "2", "2", "1", "2", "1", "2"]  # the link goes to the credited hint
    assert re.search(r'<sup class="gavel-ref"><a href="#hint-1"', html)
    assert "(5 places marked)" in html


# --- 6: a rejected blocked task keeps its refusal ---
def test_rejecting_a_blocked_task_keeps_its_refusal_on_the_page(editor, blocked_task):
    editor.post(f"{detail_url(blocked_task)}reject", {"confirmed": "1"})
    task = Task.objects.get(pk=blocked_task.pk)
    assert task.status == "rejected" and task.refusal["stored_message"].endswith("Acme.")
    html = editor.get(detail_url(task)).content.decode()
    assert "does not allow: Acme" in html and 'id="refusal-title"' in html
    assert "(empty)" not in html and 'id="answer-title"' not in html


# --- 7: a failed task says what failed, in an editor's words, and can be retried ---
GAVE_UP = "Every provider of the chain failed. Gave up after 3 attempts; check the provider and resubmit."


@pytest.fixture
def failed_task(desk_policy):
    return make_task(status="failed", attempts=3, failure={"code": "provider_error", "message": GAVE_UP})


def test_the_worker_advice_for_the_consuming_system_is_left_out():
    assert worker_detail(GAVE_UP) == "Every provider of the chain failed."
    assert worker_detail("Gavel could not run this task; it has been logged. Resubmit it.") == ""
    assert worker_detail("Over the cap. Raise the cap or resubmit tomorrow.") == "Over the cap."
    assert worker_detail("Something new.") == "Something new."
    words = failure_words({"code": "provider_timeout", "message": "x"})
    assert words["what"] == "The model provider did not answer in time." and "Retry" in words["todo"]
    assert failure_words({"code": "brand_new", "message": ""})["what"] == "The task could not be run."
    assert failure_words({"code": "brand_new", "message": ""})["code_words"].startswith("Gavel has no explanation")
    assert failure_words({"code": "provider_error", "message": GAVE_UP})["verbatim"] == GAVE_UP


def section(html, element_id):
    """The text of the element with that id (up to its closing tag of the same name)."""
    match = re.search(rf'<(\w+)[^>]* id="{element_id}"[^>]*>(.*?)</\1>', html, flags=re.S)
    assert match, element_id
    return re.sub(r"<[^>]+>", "", match.group(2))


def test_a_failed_task_explains_itself_and_offers_retry(editor, failed_task):
    html = editor.get(detail_url(failed_task)).content.decode()
    assert "every provider this configuration may use failed" in section(html, "failure-what")
    assert "What you can do:" in html
    # The editor's own words give an editor's advice, not the consuming system's ("resubmit").
    assert "resubmit" not in (section(html, "failure-what") + section(html, "failure-todo")).lower()
    # What the code means, in plain words, above the message as the consuming system read it, word for word.
    code = section(html, "failure-code")
    assert code.startswith("What the code means: provider_error — Every provider this configuration may use, its "
                           "fallbacks included, failed or refused the request")
    assert ("As the consuming system was told (verbatim, not translated), after 3 attempt(s):"
            in section(html, "failure-detail-label"))
    assert section(html, "failure-verbatim") == f"provider_error {GAVE_UP}"
    assert html.index('id="failure-code"') < html.index('id="failure-detail"')
    assert 'id="retry-button" data-key="t"' in html


@pytest.mark.parametrize("code", ["provider_error", "provider_timeout", "provider_configuration", "budget_exceeded",
                                  "unknown_configuration", "unsupported_parameter", "internal_error"])
def test_every_code_a_task_fails_with_is_explained_in_english_and_german(code):
    from django.utils import translation

    from governance.messages import TASK_FAILURE_OTHER, TASK_FAILURES

    assert code in TASK_FAILURES
    english = failure_words({"code": code, "message": "x"})["code_words"]
    with translation.override("de"):
        german = failure_words({"code": code, "message": "x"})["code_words"]
    assert english and german and english != german and english != str(TASK_FAILURE_OTHER.means)


def test_each_code_is_worded_once_what_failed_what_to_do_and_what_it_means_in_one_entry():
    from governance.messages import TASK_FAILURES

    words = failure_words({"code": "provider_configuration", "message": "x"})
    said = " ".join([words["what"], words["todo"], words["code_words"]]).lower()
    assert said.count("no model was asked") == 1 and said.count("administrator") == 1
    assert words["code_words"] == str(TASK_FAILURES["provider_configuration"].means)
    assert TASK_FAILURES["server_error"] is TASK_FAILURES["internal_error"]


def test_a_failed_task_in_german_explains_the_code_and_leaves_the_message_as_it_was(reviewer, failed_task):
    from django.test import Client

    german = Client(headers={"accept-language": "de"})
    german.force_login(reviewer)
    html = german.get(detail_url(failed_task)).content.decode()
    assert section(html, "failure-code").startswith("Was der Code bedeutet: provider_error — Jeder Anbieter, den "
                                                    "diese Konfiguration nutzen darf")
    assert ("So wurde es dem aufrufenden System mitgeteilt (wörtlich, nicht übersetzt), nach 3 Versuch(en):"
            in section(html, "failure-detail-label"))
    assert section(html, "failure-verbatim") == f"provider_error {GAVE_UP}"  # not translated


def test_retry_queues_a_new_attempt_records_it_and_the_page_says_what_failed(editor, reviewer, failed_task,
                                                                             django_capture_on_commit_callbacks,
                                                                             monkeypatch):
    sent = []
    monkeypatch.setattr(queue, "enqueue", lambda task_id, **kw: sent.append(task_id))
    with django_capture_on_commit_callbacks(execute=True):
        response = editor.post(f"{detail_url(failed_task)}retry")
    assert response.status_code == 302 and response["Location"] == "/review/"  # nothing else waits
    task = Task.objects.get(pk=failed_task.pk)
    assert (task.status, task.failure, task.attempts) == ("queued", None, 3)  # the claim counts the new one
    assert sent == [task.pk]
    (event,) = GovernanceEvent.objects.filter(check_name="review", decision="retried")
    assert event.actor == "user:reviewer" and event.detail["failure"]["code"] == "provider_error"
    assert event.detail["attempts"] == 3 and event.detail["task"] == str(task.pk)
    html = editor.get(detail_url(task)).content.decode()
    assert "What failed before" in html and "Retried by reviewer" in html and "after 3 attempt(s)" in html
    assert "Every provider of the chain failed." in html
    # A task that is not failed cannot be retried; the page says why.
    editor.post(f"{detail_url(task)}retry")
    assert "Only a failed task can be retried; this one is queued." in editor.get(detail_url(task)).content.decode()
    assert GovernanceEvent.objects.filter(decision="retried").count() == 1


def test_a_retried_task_runs_again_on_the_worker(desk_policy, reviewer, failed_task, monkeypatch):
    """The retried row is claimed as any queued one: a new attempt number, and a result stored."""
    monkeypatch.setattr(queue, "enqueue", lambda task_id, **kw: None)
    editors.retry(failed_task, user=reviewer)
    body = {"outcome": "allowed", "text": "A kettle.", "hints": [], "block": None, "verification": {},
            "checks": [], "completion": None, "policy_version": 1, "id": "c-retry"}
    monkeypatch.setattr(queue, "generate", lambda task: body)
    assert queue.run(failed_task.pk) == "done"
    task = Task.objects.get(pk=failed_task.pk)
    assert (task.status, task.attempts, task.answer) == ("ready", 4, "A kettle.")


# --- 8: a hint says what happened to the text ---
@pytest.fixture
def two_lists(configuration):
    TermList.objects.create(name="Hype", forbidden="cheap", mode="report").configurations.set([configuration])
    TermList.objects.create(name="Rivals", forbidden="Acme").configurations.set([configuration])


@pytest.mark.parametrize("language, stopped", [
    ("en", "(report mode: this list did not stop the text; another check did)"),
    ("de", "(Berichtsmodus: Nicht diese Liste hat den Text gestoppt, sondern ein anderer Prüfschritt.)"),
])
def test_a_report_hint_in_a_blocked_response_does_not_say_the_text_was_delivered(api, two_lists, language,
                                                                                 stopped):
    body = api.post("/api/v1/screenings", {"text": "A cheap kettle from Acme.", "configuration": "newsroom"},
                    format="json", HTTP_ACCEPT_LANGUAGE=language).json()
    assert body["outcome"] == "blocked"
    (hint,) = body["hints"]
    assert hint["message"].endswith(stopped)
    assert "delivered" not in hint["message"] and "ausgeliefert" not in hint["message"]
    delivered = api.post("/api/v1/screenings", {"text": "A cheap kettle.", "configuration": "newsroom"},
                         format="json").json()
    assert delivered["hints"][0]["message"].endswith("(report mode: the text was delivered)")


# --- 9: the governance log's search ---
@pytest.fixture
def logged(db):
    GovernanceEvent.objects.create(correlation_id="3f9a1c2e77aa4b1d9e0f", decision="blocked", check_name="term_list",
                                   configuration="newsroom", detail={"list": "Competitors", "terms": ["Acme"]})
    GovernanceEvent.objects.create(correlation_id="b0b0b0b0cafe", decision="reported", check_name="rules_judge",
                                   configuration="newsroom", detail={"rules": [{"number": 2}]})


@pytest.mark.parametrize("query, expected", [
    ("3f9a1c2e", {"3f9a1c2e77aa4b1d9e0f"}),  # the 8 characters the list shows
    ("competitors", {"3f9a1c2e77aa4b1d9e0f"}),  # a list name
    ("Acme", {"3f9a1c2e77aa4b1d9e0f"}),  # a term
    ("rules judge", {"b0b0b0b0cafe"}),  # a check name as the list shows it
    ("rules_judge", {"b0b0b0b0cafe"}),
    ("term list", {"3f9a1c2e77aa4b1d9e0f"}),
    ("nothing-like-this", set()),
])
def test_the_governance_log_search_finds_what_the_list_shows(superuser_client, logged, query, expected):
    html = superuser_client.get("/admin/governance/governanceevent/", {"q": query}).content.decode()
    shown = set(re.findall(r'title="([0-9a-f]+)">[0-9a-f]{1,8}</a>', html))
    assert shown == expected


def test_the_governance_log_search_finds_german_check_names(superuser_client, logged):
    html = superuser_client.get("/admin/governance/governanceevent/", {"q": "Begriffsliste"},
                                HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert set(re.findall(r'title="([0-9a-f]+)">[0-9a-f]{1,8}</a>', html)) == {"3f9a1c2e77aa4b1d9e0f"}


# --- 11: a queue built for volume ---
def test_each_row_shows_a_preview_the_hint_count_and_the_check_names(editor, hinted_task, blocked_task, field_task):
    html = editor.get("/review/").content.decode()
    row = html[html.index(f'data-task="{hinted_task.pk}"'):]
    row = row[:row.index("</tr>")]
    assert "Our new kettle is a revolutionary step" in row and "…" in row  # the first 160 characters
    assert '<span class="gavel-hint-count"' in row and ">3</span>" in row
    assert "Term list, Rules (judge)" in row
    blocked = html[html.index(f'data-task="{blocked_task.pk}"'):]
    assert "does not allow: Acme" in blocked[:blocked.index("</tr>")]  # a blocked row previews its refusal


def test_the_queue_reads_previews_with_the_page_not_per_row(editor, desk_policy):
    def queries():
        with CaptureQueriesContext(connection) as captured:
            assert editor.get("/review/").status_code == 200
        return [q["sql"] for q in captured.captured_queries if "governance_task" in q["sql"]]

    make_task(status="ready", outcome="allowed", answer="One kettle.")
    few = queries()
    for n in range(20):
        make_task(status="ready", outcome="allowed", answer=f"Kettle number {n}. " * 40)
    many = queries()
    assert len(many) == len(few)  # one page, the same queries, however many rows
    listing = [sql for sql in many if "LIMIT" in sql.upper()]
    assert listing
    for sql in listing:  # the texts are read as 160-character previews only
        assert re.search(r'SUBSTR(?:ING)?\("governance_task"\."answer", 1, 160\)', sql)
        rest = re.sub(r'SUBSTR(?:ING)?\("governance_task"\."(answer|edited_text)", 1, 160\)', "", sql)
        assert '"governance_task"."answer"' not in rest and '"governance_task"."edited_text"' not in rest
        assert '"governance_task"."messages"' not in re.sub(r"SUBSTR(?:ING)?\(.*?AS \"instruction\"", "", rest)


@pytest.mark.parametrize("query, expected", [
    ("boils a full litre", "hinted"), ("page:42", "field"), ("Hype words", "hinted"), ("ACME", "blocked"),
])
def test_the_search_box_finds_text_records_lists_and_ids(editor, hinted_task, blocked_task, field_task, query,
                                                         expected):
    tasks = {"hinted": hinted_task, "blocked": blocked_task, "field": field_task}
    found = [pk for pk, _ in rows(editor.get("/review/", {"q": query}).content.decode())]
    assert found == [str(tasks[expected].pk)]
    by_id = rows(editor.get("/review/", {"q": str(field_task.pk)[:8]}).content.decode())
    assert [pk for pk, _ in by_id] == [str(field_task.pk)]


def test_after_an_act_the_next_waiting_task_opens_in_the_same_scope(editor, hinted_task, blocked_task, field_task,
                                                                    queued_task):
    # Newest first: hinted, (queued: not waiting), blocked, field.
    response = editor.post(f"{detail_url(hinted_task)}accept")
    assert response["Location"] == detail_url(blocked_task)
    page = editor.get(response["Location"]).content.decode()
    assert f"Task {str(hinted_task.pk)[:8]}: Accepted. This is the next task waiting for review." in page
    assert editor.post(f"{detail_url(blocked_task)}reject", {"confirmed": "1"})["Location"] == detail_url(field_task)
    # The scope goes along: only field fills, so nothing else waits after this one.
    response = editor.post(f"{detail_url(field_task)}accept", {"kind": "field_fill"})
    assert response["Location"] == "/review/?kind=field_fill"


def test_j_and_k_have_their_neighbours_in_the_queue_order(editor, hinted_task, blocked_task, field_task):
    html = editor.get(detail_url(blocked_task)).content.decode()
    assert f'data-newer-url="{detail_url(hinted_task)}"' in html and f'data-older-url="{detail_url(field_task)}"' in html
    scoped = editor.get(detail_url(blocked_task), {"status": "blocked"}).content.decode()
    assert "data-newer-url" not in scoped and 'name="status" value="blocked"' in scoped


def test_an_edit_that_still_has_hints_is_shown_before_it_is_accepted(editor, hinted_task):
    edited = ANSWER.replace("guaranteed delivery by Friday", "delivery soon")  # "revolutionary" stays
    response = editor.post(f"{detail_url(hinted_task)}accept", {"text": edited})
    assert response.status_code == 200
    html = response.content.decode()
    assert "The edited text still has 1 hint." in html and 'id="confirm-hints-button"' in html
    assert re.search(r'<mark class="gavel-mark"[^>]*><a href="#edit-hint-1"[^>]*>revolutionary</a>', html)
    assert f">{edited}</textarea>" in html
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"
    editor.post(f"{detail_url(hinted_task)}accept", {"text": edited, "confirm_hints": "1"})
    task = Task.objects.get(pk=hinted_task.pk)
    assert (task.status, task.edited, task.edited_text) == ("accepted", True, edited)
    assert [h["list"] for h in task.hints] == ["Hype words"]


def test_an_unchanged_text_sent_through_the_edit_form_asks_too(editor, hinted_task):
    response = editor.post(f"{detail_url(hinted_task)}accept", {"text": ANSWER})
    assert response.status_code == 200 and "The edited text still has 3 hints." in response.content.decode()
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"


def test_a_field_fill_edit_has_a_character_counter(editor, field_task):
    html = editor.get(detail_url(field_task)).content.decode()
    assert 'data-max-length="160"' in html
    assert re.search(rf'id="edit-count"[^>]*>{len(field_task.answer)} of 160 characters</p>', html)
    german = editor.get(detail_url(field_task), HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert 'data-over-template="%(length)s von %(limit)s Zeichen: %(over)s zu viele"' in german


def test_the_api_still_accepts_an_edit_with_hints_at_once(hinted_task, reviewer):
    """Other callers of the service keep their behaviour: confirm_hints defaults to yes."""
    edited = ANSWER.replace("guaranteed delivery by Friday", "delivery soon")
    editors.accept(hinted_task, user=reviewer, edited_text=edited)
    assert Task.objects.get(pk=hinted_task.pk).status == "accepted"


def test_admin_pages_carry_no_inline_script(superuser_client):
    html = superuser_client.get("/admin/termlists/termlist/add/").content.decode()
    # A JSON data block (type="application/json") is not script; anything else must come from a file.
    assert not re.search(r'<script(?![^>]*\b(?:src=|type="application/json"))', html)
    assert " onchange=" not in html and " onclick=" not in html
    assert 'data-upload-limit=' in html and "governance/admin-gavel.js" in html


def test_a_field_fill_stopped_for_its_length_settles_its_report_hints(desk_policy):
    from types import SimpleNamespace

    desk, _legal = desk_policy
    task = make_task(kind="field_fill", field={"record": "page:1", "name": "title", "max_length": 5})
    hint = {"check": "term_list", "type": "forbidden", "list": "Hype words", "terms": [HYPE],
            "message": f"The term list “Hype words” does not allow: {HYPE}. (report mode: the text was delivered)"}
    body = {"outcome": "allowed_with_hints", "text": f"A {HYPE} kettle", "hints": [hint], "checks": [], "block": None}
    facts = SimpleNamespace(strictest_mode="block", correlation_id="c-field", configuration=desk, served_by=None,
                            actor="task", reader_language=None)
    body = queue.apply_field_check(task, body, facts)
    assert body["outcome"] == "blocked"
    assert body["hints"][0]["message"].endswith("(report mode: this list did not stop the text; another check did)")
