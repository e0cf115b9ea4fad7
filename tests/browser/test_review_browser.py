"""The review UI in a real browser (Debian's chromium through Playwright), as an editor who is not staff.

Tasks are rows made here, as a worker leaves them; an edit is screened again for real. Screenshots
go to var/screenshots/ (GAVEL_SCREENSHOTS overrides), the test output a person looks at.
"""
import os
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from governance.models import GovernanceEvent, Task
from tests.browser.conftest import PASSWORD, TIMEOUT_MS
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, PROMISE, blocked_task, desk_policy, fast_passwords, field_task, hinted_hints, hinted_task, outsider,
    queued_task, reviewer,
)

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("GAVEL_SCREENSHOTS") or Path(settings.BASE_DIR) / "var" / "screenshots")


def shoot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"review-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def log_in_by_cookie(page, live_server, user):
    """The page with the user's session cookie (the login form itself is tested once, below)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}])
    return page


@pytest.fixture
def as_editor(page, live_server, reviewer):
    return log_in_by_cookie(page, live_server, reviewer)


def test_an_editor_logs_in_and_sees_the_hinted_passages_highlighted(page, live_server, fast_passwords, reviewer,
                                                                   hinted_task, blocked_task, field_task):
    reviewer.set_password(PASSWORD)
    reviewer.save(update_fields=["password"])
    page.goto(f"{live_server.url}/review/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/review/")
    page.fill("#id_username", "reviewer")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/review/")
    expect(page.locator(f'tr[data-task="{hinted_task.pk}"] .gavel-status')).to_have_text("ready")
    shoot(page, "queue")
    page.get_by_role("link", name=str(hinted_task.pk)[:8]).click()

    marks = page.locator("#answer mark")
    expect(marks).to_have_count(2)
    expect(marks.nth(0)).to_have_text(HYPE)
    expect(marks.nth(1)).to_have_text(PROMISE)
    # Highlighted: the mark has a background of its own.
    assert marks.nth(1).evaluate("m => getComputedStyle(m).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    # Focus lands on the first hint; a passage links to its hint.
    expect(page.locator("#hint-1")).to_be_focused()
    marks.nth(1).locator("a").click()
    expect(page).to_have_url(f"{live_server.url}/review/tasks/{hinted_task.pk}/#hint-2")
    expect(page.locator("#hint-2")).to_contain_text("Never promise delivery dates.")
    expect(page.locator("#hint-3")).to_contain_text("Not checked: the judge did not answer in time")
    shoot(page, "task-with-hints")


def test_edit_the_passage_away_it_is_screened_again_then_accepted(as_editor, live_server, hinted_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    edit = page.locator("textarea[name=text]")
    expect(edit).to_have_value(ANSWER)

    blocked_edit = ANSWER.replace(HYPE, "Acme-grade")
    edit.fill(blocked_edit)
    page.click("#edit-accept-button")
    expect(page.locator("#edit-error")).to_contain_text("The edited text was not accepted")
    expect(page.locator("#edit-error")).to_contain_text("Acme")
    expect(page.locator("textarea[name=text]")).to_have_value(blocked_edit)
    shoot(page, "blocked-edit")
    assert Task.objects.get(pk=hinted_task.pk).status == "ready"

    page.locator("textarea[name=text]").fill(ANSWER.replace(f"{HYPE} ", ""))
    page.click("#edit-accept-button")
    # Nothing else waits for review: the queue opens and says what was done.
    expect(page.locator(".messagelist")).to_contain_text("The edited text was accepted.")
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    expect(page.locator("#task-status")).to_have_text("accepted")
    expect(page.locator("#answer")).not_to_contain_text(HYPE)
    task = Task.objects.get(pk=hinted_task.pk)
    assert task.edited and HYPE not in task.edited_text and task.review_decision == "accepted"
    shoot(page, "accepted-edit")


@pytest.fixture
def german_editor(browser, live_server, reviewer):
    """A browser that asks for German, with the editor's session."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="de-DE")
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield log_in_by_cookie(page, live_server, reviewer)
    context.close()


def test_reject_a_blocked_task_with_its_key_in_german(german_editor, live_server, blocked_task):
    page = german_editor
    page.goto(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    expect(page.locator("h2#refusal-title")).to_have_text("Warum die Richtlinie diesen Text gestoppt hat")
    expect(page.locator(".gavel-refusal")).to_contain_text("does not allow: Acme")  # stored as the worker wrote it
    expect(page.locator("#reject-button")).to_contain_text("Ablehnen")
    shoot(page, "blocked-de")
    page.keyboard.press("r")  # a plain keydown handler: works headless, unlike an access key
    expect(page.locator("#reject-reason")).to_be_focused()  # the confirmation asks first (issue 29)
    page.keyboard.press("Enter")
    expect(page.locator(".messagelist")).to_contain_text("Abgelehnt.")
    assert Task.objects.get(pk=blocked_task.pk).status == "rejected"
    assert GovernanceEvent.objects.filter(check_name="review", decision="rejected").count() == 1


def test_a_queued_task_turns_ready_without_a_reload(as_editor, live_server, queued_task):
    page = as_editor
    page.goto(f"{live_server.url}/review/?configuration=newsroom-desk&status=all")
    row = page.locator(f'tr[data-task="{queued_task.pk}"]')
    expect(row.locator(".gavel-status")).to_have_text("queued")
    page.evaluate("window.__notReloaded = true")

    Task.objects.filter(pk=queued_task.pk).update(status="running", updated=timezone.now())
    expect(row.locator(".gavel-status")).to_have_text("running")
    page.get_by_role("link", name=str(queued_task.pk)[:8]).click()
    expect(page.locator("#task-status")).to_have_text("running")
    page.evaluate("window.__notReloaded = true")

    # The worker finishes while the editor watches the task's page.
    Task.objects.filter(pk=queued_task.pk).update(status="ready", outcome="allowed_with_hints", answer=ANSWER,
                                                  hints=hinted_hints(), updated=timezone.now())
    expect(page.locator("#task-status")).to_have_text("ready")
    expect(page.locator("#answer mark")).to_have_count(2)
    expect(page.locator("#accept-button")).to_be_visible()
    assert page.evaluate("window.__notReloaded") is True
    shoot(page, "turned-ready")


def test_the_dashboard_chart_renders(as_editor, live_server, hinted_task):
    for decision, check, detail in (
        ("blocked", "term_list", {"list": "Competitors", "terms": ["Acme"], "missing": []}),
        ("reported", "rules_judge", {"choice": "deny", "rules": [hinted_task.hints[1]["rule"]], "judges": []}),
    ):
        GovernanceEvent.objects.create(correlation_id=f"c-{decision}", decision=decision, check_name=check,
                                       configuration="newsroom-desk", detail=detail)
    page = as_editor
    page.goto(f"{live_server.url}/review/dashboard/")
    chart = page.locator("svg#outcome-chart")
    expect(chart).to_be_visible()
    bars = chart.locator("rect.bar")
    expect(bars).to_have_count(2)
    box = bars.first.bounding_box()
    assert box and box["height"] > 10 and box["width"] > 5
    expect(page.locator("#top-terms")).to_contain_text("Acme")
    expect(page.locator("#tasks-by-status")).to_contain_text("ready")
    shoot(page, "dashboard")


def test_a_non_editor_is_refused(page, live_server, fast_passwords, outsider):
    outsider.set_password(PASSWORD)
    outsider.save(update_fields=["password"])
    page.goto(f"{live_server.url}/accounts/login/?next=/review/")
    page.fill("#id_username", "outsider")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("h1")).to_have_text("403 Forbidden")
    expect(page.locator(".errornote")).to_contain_text("not an editor")
    shoot(page, "refused")


def test_a_batch_shows_its_progress_bar_as_it_runs(as_editor, live_server, reviewer):
    from governance.models import Batch

    batch = Batch.objects.create(name="Meta descriptions, spring catalogue", total=10)
    tasks = [Task.objects.create(kind="field_fill", configuration="newsroom-desk", batch=batch,
                                 messages=[{"role": "user", "content": f"Describe page {n}."}],
                                 field={"record": f"page:{n}", "name": "meta_description"}) for n in range(10)]
    Task.objects.filter(pk__in=[t.pk for t in tasks[:4]]).update(status="ready", outcome="allowed", answer=ANSWER)
    page = as_editor
    page.goto(f"{live_server.url}/review/?batch={batch.pk}&status=all")
    bar = page.locator(".gavel-batch-progress progress")
    expect(bar).to_have_attribute("value", "4")
    expect(bar).to_have_attribute("max", "10")
    expect(page.locator(".gavel-batch-progress")).to_contain_text("4 of 10 finished (40%)")
    expect(page.locator("#id_batch")).to_have_value(str(batch.pk))
    page.evaluate("window.__notReloaded = true")

    # Workers finish three more while the editor watches: the bar moves without a reload.
    Task.objects.filter(pk__in=[t.pk for t in tasks[4:7]]).update(status="ready", outcome="allowed", answer=ANSWER,
                                                                   updated=timezone.now())
    expect(bar).to_have_attribute("value", "7")
    expect(page.locator(".gavel-batch-progress")).to_contain_text("7 of 10 finished (70%)")
    assert page.evaluate("window.__notReloaded") is True
    expect(page.locator("#queue-table tbody tr")).to_have_count(10)
    shoot(page, "batch-progress")

    page.goto(f"{live_server.url}/review/dashboard/")
    expect(page.get_by_role("heading", name="Batches in progress")).to_be_visible()
    expect(page.locator(".gavel-batch-progress progress")).to_have_attribute("value", "7")
    shoot(page, "dashboard-batches")
