"""The review UI on a phone (issue 43), 390 px wide in chromium: the queue's filters folded, every control on
the task page at least 44 px tall (measured with boundingBox), no sideways scroll on the queue, the task page
or the dashboard. Screenshots: var/test-output/screenshots/review-phone-*.png."""
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_review_browser import log_in_by_cookie
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    blocked_task, desk_policy, field_task, hinted_task, reviewer,
)

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
CONTROLS = ("button:visible, input:not([type=hidden]):visible, select:visible, textarea:visible, summary:visible, "
            "a.button:visible, .gavel-counts a:visible, #queue-table th a:visible")


@pytest.fixture
def phone(browser, live_server, reviewer):
    context = browser.new_context(viewport=PHONE, locale="en-US", is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    yield log_in_by_cookie(context.new_page(), live_server, reviewer)
    context.close()


def small_controls(page) -> list[tuple[str, float]]:
    small = []
    for control in page.locator(CONTROLS).all():
        box = control.bounding_box()
        if box is None or box["width"] == 0:
            continue
        if box["height"] < 44:
            label = control.evaluate("e => e.id || e.name || e.textContent.trim().slice(0, 30) || e.outerHTML.slice(0, 60)")
            small.append((label, round(box["height"], 1)))
    return small


def sideways(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_the_phone_review_page_has_44_px_controls_and_no_sideways_scroll(phone, live_server, screenshots,
                                                                       hinted_task, blocked_task, field_task):
    page = phone
    page.goto(f"{live_server.url}/review/")
    fold = page.locator("#queue-filter-fold")
    expect(fold).not_to_have_attribute("open", "")  # folded on a phone
    expect(page.locator("#queue-filters select").first).to_be_hidden()
    assert sideways(page) <= 0
    assert small_controls(page) == []
    page.screenshot(path=str(screenshots / "review-phone-queue.png"), full_page=True)
    page.locator("#queue-filter-fold > summary").click()
    expect(page.locator("#queue-filters select").first).to_be_visible()
    assert small_controls(page) == []

    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    measured = page.locator(CONTROLS).count()
    assert measured >= 8
    assert small_controls(page) == []
    assert sideways(page) <= 0
    page.screenshot(path=str(screenshots / "review-phone-task.png"), full_page=True)

    page.goto(f"{live_server.url}/review/dashboard/")
    assert sideways(page) <= 0
    page.screenshot(path=str(screenshots / "review-phone-dashboard.png"), full_page=True)
