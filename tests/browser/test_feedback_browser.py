"""Editors teach the policy in a real browser (Debian's chromium through Playwright), English and German:
one hint marked wrong and one right, a missed term reported, the task accepted and kept as an example,
and the dashboard then shows the rule's numbers. Screenshots under var/test-output/screenshots/.
"""
import re

import pytest
from django.test import Client
from django.conf import settings
from playwright.sync_api import expect

from governance.models import GovernanceEvent, HintFeedback, PolicyExample, Task
from tests.browser.conftest import TIMEOUT_MS
from tests.governance.review_fixtures import HYPE, desk_policy, hinted_task, reviewer  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

WORDS = {
    "en": {"locale": "en-US", "right": "Right", "wrong": "Wrong", "marked_wrong": "Marked wrong",
           "marked_right": "Marked right", "missed": "List “Competitors”: Acme", "keep": "Keep as example",
           "kept": "Kept as the policy example", "stats": "Rules and terms as editors see them"},
    "de": {"locale": "de-DE", "right": "Richtig", "wrong": "Falsch", "marked_wrong": "Als falsch markiert",
           "marked_right": "Als richtig markiert", "missed": "Liste „Competitors“: Acme",
           "keep": "Als Beispiel behalten", "kept": "Als Richtlinienbeispiel",
           "stats": "Regeln und Begriffe aus Sicht der Redaktion"},
}


@pytest.fixture
def hinted(hinted_task):
    """The fixture task with the events its screening wrote."""
    GovernanceEvent.objects.create(correlation_id="corr-hinted", decision="reported", check_name="term_list",
                                   configuration="newsroom-desk", mode="report",
                                   detail={"list": "Hype words", "terms": [HYPE], "missing": []})
    GovernanceEvent.objects.create(correlation_id="corr-hinted", decision="reported", check_name="rules_judge",
                                   configuration="newsroom-desk", mode="report",
                                   detail={"choice": "deny", "rules": [{"number": 2, "snippet": "house-style",
                                                                         "line": "Never promise delivery dates.",
                                                                         "line_no": 3}]})
    return hinted_task


@pytest.mark.parametrize("language", ["en", "de"])
def test_an_editor_teaches_the_policy(browser, live_server, reviewer, hinted, screenshots, language):
    words = WORDS[language]
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale=words["locale"])
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    client = Client()
    client.force_login(reviewer)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    task_url = f"{live_server.url}/review/tasks/{hinted.pk}/"
    try:
        page.goto(task_url)
        expect(page.locator("#right-1")).to_have_text(words["right"])
        # Keyboard: the judged rule's hint is wrong (focus its button, press Enter) ...
        page.locator("#wrong-2").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#verdict-2")).to_have_text(words["marked_wrong"])
        # ... and the reported term is right (a click).
        page.locator("#right-1").click()
        expect(page.locator("#verdict-1")).to_have_text(words["marked_right"])
        expect(page.locator("#wrong-1")).to_have_attribute("aria-pressed", "false")
        expect(page.locator("#right-1")).to_have_attribute("aria-pressed", "true")
        # The policy missed a term: choose it and report it.
        page.locator("#missed-finding").select_option(label=words["missed"])
        page.locator("#missed-button").click()
        expect(page.locator("#missed-count")).to_be_visible()
        page.locator("#hints-title").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots / f"feedback-task-{language}.png"), full_page=True)

        verdicts = {(f.check_name, f.term or f.rule, f.verdict) for f in HintFeedback.objects.all()}
        assert verdicts == {("term_list", HYPE, "right"), ("rules_judge", "3", "wrong"),
                            ("term_list", "Acme", "missed")}

        page.locator("#accept-button").click()
        page.wait_for_load_state()
        assert Task.objects.get(pk=hinted.pk).status == "accepted"
        page.goto(task_url)
        expect(page.locator("#right-1")).to_have_count(0)  # the review is final: feedback is closed
        page.locator("#keep-button").click()
        expect(page.locator("#kept-example")).to_contain_text(words["kept"])
        example = PolicyExample.objects.get(from_task=hinted.pk)
        assert example.kept_by == "reviewer"
        assert example.expect_absent == [{"check": "rules_judge", "snippet": "house-style", "rule": 3}]
        assert {"check": "term_list", "list": "Competitors", "term": "Acme"} in example.expect_findings
        page.locator("#keep").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshots / f"feedback-kept-{language}.png"))

        page.goto(f"{live_server.url}/review/dashboard/")
        section = page.locator("#rule-stats")
        expect(section.locator("h2")).to_have_text(words["stats"])
        first = section.locator("tbody tr").first
        expect(first).to_contain_text("house-style")
        cells = first.locator("td")
        # fired 1 (linked to the queue), reviewed 1, right 0, wrong 1, missed 0, precision 0 %, recall —,
        # linked to the task (issue 29 added right and recall)
        expect(cells.nth(0)).to_have_text("1")
        expect(cells.nth(0).locator("a")).to_have_attribute("href", re.compile(r"^/review/\?status=all&q="))
        expect(cells.nth(1)).to_have_text("1")
        expect(cells.nth(2)).to_have_text("0")
        expect(cells.nth(3)).to_have_text("1")
        expect(cells.nth(4)).to_have_text("0")
        expect(cells.nth(5)).to_have_text("0 %")
        expect(cells.nth(6)).to_have_text("—")
        expect(cells.nth(7).locator("a")).to_have_attribute("href", f"/review/tasks/{hinted.pk}/")
        expect(section.locator("tbody tr", has_text="Acme").locator("td").nth(4)).to_have_text("1")
        section.scroll_into_view_if_needed()
        section.screenshot(path=str(screenshots / f"feedback-dashboard-{language}.png"))
    finally:
        context.close()
