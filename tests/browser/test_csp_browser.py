"""The pages under the Content-Security-Policy in a real browser (issue 17, finding 11).

Every page sends a CSP that allows scripts from Gavel's own files only. Here chromium loads the
review task page, the admin and the API docs, listens to the console and to the document's
`securitypolicyviolation` events, and uses what their scripts do: the editor's edit-and-accept,
the task list updating, the admin's language switch and a save, Swagger UI rendering the schema.
"""
import pytest
from playwright.sync_api import expect

from governance.models import Task
from tests.browser.test_review_browser import as_editor, log_in_by_cookie, shoot  # noqa: F401  (fixtures)
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, desk_policy, fast_passwords, hinted_hints, hinted_task, reviewer,
)

pytestmark = pytest.mark.browser

LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__csp.push(event.violatedDirective + " " + event.blockedURI);
});
"""


@pytest.fixture
def watched(page):
    """The page with every CSP violation recorded: its events (from the first script on) and the console."""
    messages = []
    page.context.add_init_script(LISTEN)
    page.on("console", lambda message: messages.append(message.text))
    page.on("pageerror", lambda error: messages.append(f"page error: {error}"))

    def violations():
        events = page.evaluate("window.__csp || []")
        console = [m for m in messages if "Content Security Policy" in m or "Content-Security-Policy" in m
                   or m.startswith("page error")]
        return events + console

    page.violations = violations
    return page


def test_the_review_task_page_works_under_the_csp(watched, live_server, reviewer, hinted_task):
    page = log_in_by_cookie(watched, live_server, reviewer)
    response = page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    expect(page.locator("#answer mark")).to_have_count(2)
    expect(page.locator("#hint-1")).to_be_focused()  # review.js ran: it puts the focus on the first hint
    page.locator("textarea[name=text]").fill(ANSWER.replace(f"{HYPE} ", ""))
    page.click("#edit-accept-button")
    # After an act the review UI opens the next waiting task, or the queue when none waits.
    page.wait_for_url(lambda url: f"/review/tasks/{hinted_task.pk}/" not in url)
    assert Task.objects.get(pk=hinted_task.pk).review_decision == "accepted"
    page.goto(f"{live_server.url}/review/?status=accepted")
    expect(page.locator(f'tr[data-task="{hinted_task.pk}"] .gavel-status')).to_have_text("accepted")
    shoot(page, "csp-queue")
    assert page.violations() == []


def test_the_admin_works_under_the_csp(watched, live_server, superuser, desk):
    from django.conf import settings

    page = log_in_by_cookie(watched, live_server, superuser)
    response = page.goto(f"{live_server.url}/admin/governance/configuration/{desk.pk}/change/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff" and response.headers["referrer-policy"]
    # The language switch is a script of Gavel's own file now (it was an inline handler).
    page.select_option("#gavel-language-choice", "de")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    page.select_option("#gavel-language-choice", "en")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.fill("#id_system_prompt", "Write plainly and warmly.")
    page.click("input[name=_gavel_publish]")
    expect(page.locator(".messagelist")).to_contain_text("Saved and published")
    desk.refresh_from_db()
    assert desk.system_prompt == "Write plainly and warmly."
    shoot(page, "csp-admin")
    # The upload check (also moved to the file) stops a form over the limit in the browser.
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    try:
        page.goto(f"{live_server.url}/admin/governance/configuration/{desk.pk}/change/")
        page.fill("#id_system_prompt", "x" * 5000)
        page.click("input[name=_save]")
        expect(page.locator(".gavel-too-big")).to_contain_text("one save may send at most")
    finally:
        settings.DATA_UPLOAD_MAX_MEMORY_SIZE = settings.GAVEL_MAX_TEXT_BYTES + 64 * 1024
    assert page.violations() == []


def test_the_api_docs_render_under_the_csp(watched, live_server, db):
    page = watched
    page.goto(f"{live_server.url}/api/v1/docs/")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    expect(page.locator(".swagger-ui")).to_contain_text("/api/v1/screenings")
    shoot(page, "csp-swagger")
    assert page.violations() == []
    # The listener hears a violation when there is one: an inline script added now is refused.
    page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';"
                  " document.body.appendChild(s); }")
    page.wait_for_function("window.__csp.length > 0")
    assert page.evaluate("window.__ran") is None
    assert any(v.startswith("script-src") for v in page.violations())
