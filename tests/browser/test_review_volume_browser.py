"""The review UI at volume in a real browser (Debian's chromium through Playwright), English and German.

Shortcuts are pressed with page.keyboard.press, as a person presses them: plain keydown handlers in
review.js, which work headless (access keys did not). Screenshots go to var/test-output/screenshots/.
"""
import re

import pytest
from playwright.sync_api import expect

from governance.work import editors, queue
from governance.models import GovernanceEvent, Task, UserProfile
from termlists.models import TermList
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_review_browser import log_in_by_cookie
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, blocked_task, desk_policy, field_task, hinted_task, make_task, queued_task, reviewer,
)

pytestmark = pytest.mark.browser

BARGAIN = ("Cheap kettles, shipped ASAP: our cheap kettle boils a litre in three minutes, switches itself off "
           "and keeps the handle cool. Order ASAP while it is this cheap, and enjoy your first cup of tea.")
RULE_PASSAGE = "Order ASAP while it is this cheap"
GAVE_UP = ("Every provider of the chain failed: desk-gateway refused the connection at http://127.0.0.1:9/v1. "
           "Gave up after 3 attempts; check the provider and resubmit.")


def shoot(page, screenshots, name):
    path = screenshots / f"review-volume-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


@pytest.fixture
def as_editor(page, live_server, reviewer):
    return log_in_by_cookie(page, live_server, reviewer)


@pytest.fixture
def german(browser, live_server, reviewer):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="de-DE")
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    yield log_in_by_cookie(tab, live_server, reviewer)
    context.close()


@pytest.fixture
def bargain_task(desk_policy, reviewer):
    """A task whose hints come from a real screening: a report-mode list naming "cheap" and "ASAP", and a
    judged rule whose passage overlaps two of the terms."""
    desk, _legal = desk_policy
    TermList.objects.create(name="Bargain words", forbidden="cheap\nASAP", mode="report").configurations.set([desk])
    task = make_task(status="ready", outcome="allowed_with_hints", answer=BARGAIN, attempts=1, minutes_ago=2)
    screened = editors.screen_edit(task, BARGAIN, user=reviewer)
    start = BARGAIN.index(RULE_PASSAGE)
    rule = {"check": "rules_judge", "type": "violation", "configuration": "newsroom-desk",
            "rule": {"number": 4, "line": "Do not pressure the reader.", "snippet": "house-style", "line_no": 2},
            "passage": RULE_PASSAGE, "start": start, "end": start + len(RULE_PASSAGE),
            "message": "Rule 4 is violated."}
    hints = [h for h in screened["hints"] if h.get("list") == "Bargain words"] + [rule]
    Task.objects.filter(pk=task.pk).update(hints=hints)
    task.refresh_from_db()
    return task


@pytest.fixture
def failed_task(configuration, provider_server):
    """A task on `newsroom` (the local test provider) that failed; the provider answers again now."""
    provider_server.set_default({"text": "A kettle that boils a litre in three minutes and switches itself off."})
    return make_task(configuration="newsroom", status="failed", attempts=3, minutes_ago=3,
                     failure={"code": "provider_error", "message": GAVE_UP})


# --- 11: the queue ---
def test_the_queue_opens_on_waiting_rows_show_preview_hints_checks_and_keys_work(as_editor, live_server, screenshots,
                                                                                  hinted_task, blocked_task,
                                                                                  field_task, queued_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/")
    expect(page.locator('.gavel-counts li.selected')).to_contain_text("waiting for review")
    table = page.locator("#queue-table")
    expect(table.locator("tr.gavel-row")).to_have_count(3)  # the queued task waits for a worker, not a person
    hinted = table.locator(f'tr[data-task="{hinted_task.pk}"]')
    expect(hinted.locator(".gavel-preview")).to_contain_text("Our new kettle is a revolutionary step")
    expect(hinted.locator(".gavel-hint-count")).to_have_text("3")
    expect(hinted.locator(".gavel-checks")).to_have_text("Term list, Rules (judge)")
    expect(table.locator(f'tr[data-task="{blocked_task.pk}"] .gavel-preview')).to_contain_text("does not allow: Acme")
    expect(table.locator(f'tr[data-task="{field_task.pk}"] .gavel-preview')).to_contain_text("page:42")

    page.keyboard.press("j")
    expect(hinted).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("j")
    expect(table.locator(f'tr[data-task="{blocked_task.pk}"]')).to_have_class(re.compile(r"\bselected\b"))
    page.keyboard.press("k")
    expect(hinted).to_have_class(re.compile(r"\bselected\b"))
    shoot(page, screenshots, "queue-en")

    page.keyboard.press("?")
    expect(page.locator("#shortcut-help")).to_be_visible()
    expect(page.locator("#shortcut-help")).to_contain_text("Reject, then open the next task waiting")
    shoot(page, screenshots, "help-en")
    page.keyboard.press("Escape")
    expect(page.locator("#shortcut-help")).to_be_hidden()

    page.keyboard.press("/")
    expect(page.locator("#queue-search")).to_be_focused()
    page.keyboard.type("boils a full litre")
    page.keyboard.press("j")  # typing in the search box: j is a letter, not a shortcut
    expect(page.locator("#queue-search")).to_have_value("boils a full litrej")
    page.locator("#queue-search").fill("boils a full litre")
    page.keyboard.press("Enter")
    expect(table.locator("tr.gavel-row")).to_have_count(1)
    expect(table.locator(f'tr[data-task="{hinted_task.pk}"]')).to_be_visible()

    page.locator("#queue-search").blur()
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/review/tasks/{hinted_task.pk}/\?q=boils"))


def test_the_queue_in_german(german, live_server, screenshots, hinted_task, blocked_task, field_task):
    page = german
    page.goto(f"{live_server.url}/review/")
    expect(page.locator('.gavel-counts li.selected')).to_contain_text("zu prüfen")
    expect(page.locator("label[for=queue-search]")).to_have_text("Suche:")
    expect(page.locator(f'tr[data-task="{hinted_task.pk}"] .gavel-checks')).to_have_text("Begriffsliste, Regeln (Prüfer)")
    page.keyboard.press("?")
    expect(page.locator("#shortcut-help h2")).to_have_text("Tastenkürzel")
    shoot(page, screenshots, "help-de")
    page.keyboard.press("Escape")
    shoot(page, screenshots, "queue-de")


# --- 5: every term marked, each mark credited ---
def test_every_term_of_a_hint_is_marked_and_each_mark_goes_to_its_hint(as_editor, live_server, screenshots,
                                                                       bargain_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{bargain_task.pk}/")
    marks = page.locator("#answer mark")
    texts = [m.inner_text() for m in marks.all()]
    # Three "cheap" and two "ASAP" for the list (hint 1), and the rule's passage (hint 2) around two of them.
    assert [t.lower() for t in texts if t.lower() in ("cheap", "asap")] == ["cheap", "asap", "cheap", "asap", "cheap"]
    assert "".join(texts[-4:]) == RULE_PASSAGE
    expect(page.locator("#hint-1")).to_contain_text("cheap")
    expect(page.locator("#hint-1")).to_contain_text("ASAP")
    expect(page.locator("#hint-1")).to_contain_text("(5 places marked)")
    # A term inside the rule's passage links to the list's hint; the rest of the passage to the rule.
    inner_asap = page.locator('#answer mark[data-hints="1 2"]').first
    expect(inner_asap).to_have_attribute("data-credited", "1")
    page.locator('#answer mark[data-hints="2"] a').first.click()
    expect(page).to_have_url(re.compile(r"#hint-2$"))
    expect(page.locator("#hint-2")).to_contain_text("Do not pressure the reader.")
    expect(page.locator("sup.gavel-ref a[href='#hint-2']")).to_have_count(1)
    shoot(page, screenshots, "terms-marked-en")


def test_every_term_is_marked_in_german_too(german, live_server, screenshots, bargain_task):
    page = german
    page.goto(f"{live_server.url}/review/tasks/{bargain_task.pk}/")
    expect(page.locator("#answer mark")).to_have_count(7)
    expect(page.locator("#hint-1")).to_contain_text("(5 Stellen markiert)")
    shoot(page, screenshots, "terms-marked-de")


# --- 6 and the next task: shortcuts on a task's page ---
def test_shortcuts_accept_and_reject_then_open_the_next_waiting_task(as_editor, live_server, screenshots,
                                                                     hinted_task, blocked_task, field_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    page.keyboard.press("j")
    expect(page).to_have_url(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    page.keyboard.press("k")
    expect(page).to_have_url(f"{live_server.url}/review/tasks/{hinted_task.pk}/")

    page.keyboard.press("a")
    expect(page).to_have_url(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    expect(page.locator(".messagelist")).to_contain_text("Accepted. This is the next task waiting for review.")
    assert Task.objects.get(pk=hinted_task.pk).status == "accepted"

    page.keyboard.press("r")
    expect(page.locator("#reject-reason")).to_be_focused()  # the confirmation asks first (issue 29)
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}/review/tasks/{field_task.pk}/")
    assert Task.objects.get(pk=blocked_task.pk).status == "rejected"

    # The rejected blocked task keeps its refusal (6).
    page.goto(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    expect(page.locator("#task-status")).to_have_text("rejected")
    expect(page.locator(".gavel-refusal")).to_contain_text("does not allow: Acme")
    expect(page.locator("#answer-title")).to_have_count(0)
    expect(page.locator("body")).not_to_contain_text("(empty)")
    shoot(page, screenshots, "rejected-blocked-en")


def test_reject_a_blocked_task_with_r_in_german_keeps_the_refusal(german, live_server, screenshots, blocked_task):
    page = german
    page.goto(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    expect(page.locator("#reject-button")).to_contain_text("Ablehnen")
    page.keyboard.press("r")
    expect(page.locator("#reject-reason")).to_be_focused()  # the confirmation asks first (issue 29)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/review/$"))
    expect(page.locator(".messagelist")).to_contain_text("Abgelehnt. Hier ist nichts weiter zu prüfen.")
    page.goto(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    expect(page.locator("#task-status")).to_have_text("abgelehnt")
    expect(page.locator("h2#refusal-title")).to_have_text("Warum die Richtlinie diesen Text gestoppt hat")
    expect(page.locator(".gavel-refusal")).to_contain_text("does not allow: Acme")
    expect(page.locator("body")).not_to_contain_text("(leer)")
    shoot(page, screenshots, "rejected-blocked-de")
    assert GovernanceEvent.objects.filter(check_name="review", decision="rejected").count() == 1


# --- 7: a failed task, retried ---
def run_if_still_queued(task):
    """Where a broker is configured no worker runs in this test: do what the worker does."""
    if Task.objects.get(pk=task.pk).status == "queued":
        queue.run(task.pk)


def test_a_failed_task_says_what_failed_and_t_retries_it(as_editor, live_server, screenshots, failed_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{failed_task.pk}/")
    expect(page.locator("#failure-what")).to_have_text(
        "The model provider did not deliver a text: every provider this configuration may use failed.")
    expect(page.locator("#failure-todo")).to_contain_text("Retry once the provider is reachable again")
    expect(page.locator("#failure-detail")).to_contain_text("desk-gateway refused the connection")
    # The editor's words advise the editor; the consuming system's advice stays in its verbatim message.
    expect(page.locator("#failure-what")).not_to_contain_text("resubmit")
    expect(page.locator("#failure-todo")).not_to_contain_text("resubmit")
    expect(page.locator("#failure-verbatim")).to_have_text(f"provider_error {GAVE_UP}")
    shoot(page, screenshots, "failed-en")

    page.keyboard.press("t")
    # Without a broker the retried task runs at once (eager): the first model call imports litellm.
    expect(page.locator(".messagelist")).to_contain_text("Queued again as a new attempt.", timeout=60_000)
    (event,) = GovernanceEvent.objects.filter(check_name="review", decision="retried")
    assert event.detail["failure"]["code"] == "provider_error"
    run_if_still_queued(failed_task)
    page.goto(f"{live_server.url}/review/tasks/{failed_task.pk}/")
    expect(page.locator("#task-status")).to_have_text("ready")
    expect(page.locator("#answer")).to_contain_text("A kettle that boils a litre")
    expect(page.locator(".gavel-earlier")).to_contain_text("Retried by reviewer")
    expect(page.locator(".gavel-earlier")).to_contain_text("after 3 attempt(s)")
    expect(page.locator(".gavel-earlier")).to_contain_text("desk-gateway refused the connection")
    task = Task.objects.get(pk=failed_task.pk)
    assert task.attempts == 4 and task.failure is None
    shoot(page, screenshots, "retried-en")


def test_a_failed_task_in_german(german, live_server, screenshots, failed_task):
    page = german
    page.goto(f"{live_server.url}/review/tasks/{failed_task.pk}/")
    expect(page.locator("#failure-what")).to_contain_text("Der Modellanbieter hat keinen Text geliefert")
    expect(page.locator("#retry-button")).to_contain_text("Erneut versuchen")
    shoot(page, screenshots, "failed-de")
    page.keyboard.press("t")
    expect(page.locator(".messagelist")).to_contain_text("Als neuer Versuch wieder eingereiht.", timeout=60_000)
    run_if_still_queued(failed_task)
    page.goto(f"{live_server.url}/review/tasks/{failed_task.pk}/")
    expect(page.locator("#earlier-title")).to_have_text("Was vorher fehlschlug")
    shoot(page, screenshots, "retried-de")


# --- 11: the edit: a live counter, and hints shown before an edit is accepted ---
def test_a_field_fill_edit_counts_characters_as_they_are_typed(as_editor, live_server, screenshots, field_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{field_task.pk}/")
    counter = page.locator("#edit-count")
    expect(counter).to_have_text(f"{len(field_task.answer)} of 160 characters")
    page.keyboard.press("e")
    text = page.locator("#edit-form textarea")
    expect(text).to_be_focused()
    text.fill("Short.")
    expect(counter).to_have_text("6 of 160 characters")
    text.fill("A kettle " * 20)
    expect(counter).to_have_text("180 of 160 characters: 20 too many")
    expect(counter).to_have_class(re.compile(r"\bover\b"))
    page.keyboard.press("a")  # typing: no shortcut fires
    assert Task.objects.get(pk=field_task.pk).status == "ready"
    shoot(page, screenshots, "counter-en")


def test_the_counter_in_german(german, live_server, screenshots, field_task):
    page = german
    page.goto(f"{live_server.url}/review/tasks/{field_task.pk}/")
    page.locator("#edit-form textarea").fill("Ein Wasserkocher " * 10)
    expect(page.locator("#edit-count")).to_have_text("170 von 160 Zeichen: 10 zu viele")
    shoot(page, screenshots, "counter-de")


def test_an_edit_that_still_has_hints_shows_them_and_asks(as_editor, live_server, screenshots, hinted_task,
                                                         field_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    page.keyboard.press("e")
    edited = ANSWER.replace("guaranteed delivery by Friday", "delivery soon")  # "revolutionary" stays
    page.locator("#edit-form textarea").fill(edited)
    page.keyboard.press("Control+Enter")
    hints = page.locator("#edit-hints")
    expect(hints).to_contain_text("The edited text still has 1 hint.")
    expect(hints.locator("mark")).to_have_text(HYPE)
    expect(page.locator("#edit-form textarea")).to_have_value(edited)
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"
    shoot(page, screenshots, "edit-hints-en")
    page.locator("#confirm-hints-button").click()
    expect(page).to_have_url(f"{live_server.url}/review/tasks/{field_task.pk}/")  # the next waiting task
    expect(page.locator(".messagelist")).to_contain_text("The edited text was accepted.")
    task = Task.objects.get(pk=hinted_task.pk)
    assert task.status == "accepted" and task.edited_text == edited


def test_a_on_the_edit_confirmation_accepts_the_edit_not_the_original(as_editor, live_server, screenshots,
                                                                      hinted_task):
    """Issue 43: `a` acts on what the page shows. Before, it pressed the Accept of the original text above
    and threw the edit away."""
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    edited = ANSWER.replace("guaranteed delivery by Friday", "delivery soon")  # "revolutionary" stays
    page.locator("#edit-form textarea").fill(edited)
    page.locator("#edit-accept-button").click()
    expect(page.locator("#edit-hints")).to_contain_text("The edited text still has 1 hint.")
    expect(page.locator("#confirm-hints-button kbd")).to_have_text("A")
    # The original's button no longer claims the key and says what it would do.
    expect(page.locator("#accept-button")).to_have_text("Accept the original text instead")
    expect(page.locator("#accept-button kbd")).to_have_count(0)
    shoot(page, screenshots, "edit-confirm-key-a")
    page.locator("body").click(position={"x": 5, "y": 5})  # out of the text box: a key is a shortcut
    page.keyboard.press("a")
    expect(page.locator(".messagelist")).to_contain_text("The edited text was accepted.")
    task = Task.objects.get(pk=hinted_task.pk)
    assert task.status == "accepted" and task.edited_text == edited


def test_an_edit_with_hints_in_german(german, live_server, screenshots, hinted_task):
    page = german
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    page.locator("#edit-form textarea").fill(ANSWER.replace("guaranteed delivery by Friday", "delivery soon"))
    page.locator("#edit-accept-button").click()
    expect(page.locator("#edit-hints")).to_contain_text("Der bearbeitete Text hat noch 1 Hinweis.")
    expect(page.locator("#confirm-hints-button")).to_have_text("Bearbeitung mit diesen Hinweisen annehmen A")
    shoot(page, screenshots, "edit-hints-de")


# --- 9 and 10: the admin ---
@pytest.fixture
def logged(db):
    GovernanceEvent.objects.create(correlation_id="3f9a1c2e77aa4b1d9e0f5a6b", decision="blocked",
                                   check_name="term_list", configuration="newsroom-desk",
                                   detail={"list": "Competitors", "terms": ["Acme"], "missing": []})
    GovernanceEvent.objects.create(correlation_id="b0b0b0b0cafe4242", decision="reported", check_name="rules_judge",
                                   configuration="newsroom-desk",
                                   detail={"rules": [{"number": 2, "line": "Never promise delivery dates.",
                                                      "snippet": "house-style"}], "judges": []})


@pytest.mark.parametrize("language, check_words", [("en", "rules judge"), ("de", "Regelprüfer")])
def test_the_governance_log_search_finds_what_it_shows(browser, live_server, screenshots, superuser, logged,
                                                       language, check_words):
    context = browser.new_context(viewport={"width": 1280, "height": 1000},
                                  locale="de-DE" if language == "de" else "en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = log_in_by_cookie(context.new_page(), live_server, superuser)
    try:
        page.goto(f"{live_server.url}/admin/governance/governanceevent/")
        if language == "de":  # German fits 1280 px with the navigation folded (docs/decisions.md)
            page.click("#toggle-nav-sidebar")
        rows = page.locator("#result_list tbody tr")
        expect(rows).to_have_count(2)
        shown_id = page.locator("#result_list tbody tr").last.locator("td.field-correlation_link a").inner_text()
        for query, count in ((shown_id, 1), ("Competitors", 1), ("acme", 1), (check_words, 1), ("zzz-none", 0)):
            page.locator("#searchbar").fill(query)
            page.locator("#searchbar").press("Enter")
            expect(page.locator("#result_list tbody tr") if count else page.locator("#changelist-form"))\
                .to_have_count(count if count else 1)
            if query == "Competitors":
                expect(page.locator("#result_list")).to_contain_text("Competitors")
        page.locator("#searchbar").fill(shown_id)
        page.locator("#searchbar").press("Enter")
        expect(rows).to_have_count(1)
        shoot(page, screenshots, f"log-search-{language}")
    finally:
        context.close()


def test_the_admin_in_german_picker_mode_help_and_the_review_switch_after_switching(
        browser, live_server, screenshots, superuser, desk_policy, hinted_task):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = log_in_by_cookie(context.new_page(), live_server, superuser)
    try:
        page.goto(f"{live_server.url}/admin/")
        page.locator("#gavel-language-choice").select_option("de")  # the switch sends itself
        expect(page.locator("html")).to_have_attribute("lang", "de")
        assert UserProfile.objects.get(user=superuser).language == "de"

        term_list = TermList.objects.get(name="Competitors")
        page.goto(f"{live_server.url}/admin/termlists/termlist/{term_list.pk}/change/")
        picker = page.locator(".selector")
        expect(picker).to_contain_text("Verfügbare Konfigurationen")
        expect(picker).to_contain_text("Ausgewählte Konfigurationen")
        expect(page.locator("#id_configurations_add_all")).to_have_text("Alle Konfigurationen auswählen")
        expect(page.locator("#id_configurations_remove_all")).to_have_text("Alle Konfigurationen entfernen")
        expect(page.locator("body")).not_to_contain_text("Choose")
        help_text = page.locator("#id_mode_helptext")
        expect(help_text).to_contain_text("„stoppen“ stoppt einen Text")
        expect(help_text).not_to_contain_text("block")
        shoot(page, screenshots, "admin-picker-de")

        page.goto(f"{live_server.url}/admin/governance/configuration/")
        page.get_by_role("link", name="newsroom-desk", exact=True).click()
        expect(page.locator("#id_rule_mode_helptext")).to_contain_text("„aus“: Regeln werden nicht überprüft.")
        expect(page.locator("#id_rule_mode_helptext")).not_to_contain_text("report")
        shoot(page, screenshots, "admin-mode-help-de")

        # The review header keeps its switch, in the language chosen in the admin, and can switch back.
        page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
        expect(page.locator("html")).to_have_attribute("lang", "de")
        switch = page.locator("#language-select")
        expect(switch).to_be_visible()
        shoot(page, screenshots, "review-header-after-admin-switch-de")
        switch.select_option("en")
        page.locator("#language-form button[type=submit]").click()
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.locator("#language-select")).to_be_visible()
        assert UserProfile.objects.get(user=superuser).language == "en"
    finally:
        context.close()


def test_the_shortcuts_work_under_a_policy_that_allows_no_inline_script(as_editor, live_server, hinted_task,
                                                                        blocked_task):
    """Pages served with `Content-Security-Policy: script-src 'self'` (what the server is to send): the
    browser refuses inline script and handlers, and everything still works, with no violation reported."""
    page = as_editor
    violations = []
    page.on("console", lambda message: violations.append(message.text)
            if "Content Security Policy" in message.text else None)

    def with_policy(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers,
                                                  "content-security-policy": "script-src 'self'"})

    page.route(re.compile(r".*/(review|admin)/.*"), with_policy)
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    page.keyboard.press("?")
    expect(page.locator("#shortcut-help")).to_be_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    # (With requests routed, chromium keeps the POST's address; the page is the next task's.)
    expect(page).to_have_title(re.compile(rf"^Task {str(blocked_task.pk)[:8]} "))
    expect(page.locator(".messagelist")).to_contain_text("Accepted. This is the next task waiting for review.")
    page.goto(f"{live_server.url}/admin/")
    assert violations == []
