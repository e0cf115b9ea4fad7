"""Bulk accept in chromium (issue 43): "select every …" ticks only texts checked in full, the page and the
confirmation count the short texts whose judges never ran, and Undo all puts the accepted tasks back.
Screenshots: var/test-output/screenshots/review-bulk-*.png."""
import pytest
from playwright.sync_api import expect

from governance.models import Task
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_review_browser import log_in_by_cookie
from tests.governance.review_fixtures import ANSWER, desk_policy, make_task, reviewer  # noqa: F401
from tests.governance.test_review_bulk import FULL, SHORT, SKIPPED

pytestmark = pytest.mark.browser


def test_select_every_offers_only_checked_texts_and_undo_all(browser, live_server, screenshots, reviewer,
                                                              desk_policy):
    checked = [make_task(status="ready", outcome="allowed", answer=ANSWER, checks=FULL) for _ in range(2)]
    short = [make_task(status="ready", outcome="allowed", answer=SHORT, checks=SKIPPED) for _ in range(3)]
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = log_in_by_cookie(context.new_page(), live_server, reviewer)
    page.goto(f"{live_server.url}/review/")
    expect(page.locator("#bulk-unchecked-note")).to_have_text(
        "3 tasks without hints on this page are not offered: a check did not run on them.")
    page.locator("#bulk-select-all").click()
    expect(page.locator(".gavel-bulk-box:checked")).to_have_count(2)
    for task in short:
        expect(page.locator(f"#select-{task.pk}")).to_have_count(0)
    page.screenshot(path=str(screenshots / "review-bulk-select.png"), full_page=True)
    page.locator("#bulk-accept-button").click()
    expect(page.locator("#bulk-confirm-count")).to_have_text("Accept 2 tasks without hints?")
    page.screenshot(path=str(screenshots / "review-bulk-confirm.png"), full_page=True)
    page.locator("#bulk-confirm-button").click()
    expect(page.locator("#undo-offer")).to_contain_text("2 tasks were accepted together.")
    assert {t.pk for t in Task.objects.filter(status="accepted")} == {t.pk for t in checked}
    page.screenshot(path=str(screenshots / "review-bulk-undo.png"), full_page=True)
    page.locator("#undo-button").click()
    expect(page.locator(".messagelist")).to_contain_text("2 accepts were undone; the tasks are ready again.")
    assert Task.objects.filter(status="accepted").count() == 0
    context.close()


def test_the_older_policy_badge_and_screen_again(browser, live_server, screenshots, reviewer, desk_policy):
    from tests.governance.test_review_stale import STOPPED, older

    task, live = older(STOPPED, desk_policy)
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    page = log_in_by_cookie(context.new_page(), live_server, reviewer)
    page.goto(f"{live_server.url}/review/")
    expect(page.locator(".gavel-stale").first).to_have_text(f"screened under v{task.policy_version} — live is v{live}")
    page.goto(f"{live_server.url}/review/tasks/{task.pk}/")
    expect(page.locator("#stale-policy")).to_be_visible()
    page.screenshot(path=str(screenshots / "review-older-policy-badge.png"), full_page=True)
    page.keyboard.press("a")  # accept: screened again first, and the live policy stops it
    expect(page.locator(".messagelist")).to_contain_text("the live policy (version")
    expect(page.locator(".messagelist")).to_contain_text("Acme")
    page.screenshot(path=str(screenshots / "review-older-policy-accept-refused.png"), full_page=True)
    assert Task.objects.get(pk=task.pk).status == "ready"
    context.close()
