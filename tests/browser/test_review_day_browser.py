"""The editors' day at volume in a real browser (issue 29, Must show 1, 2, 4 and 6): 540 tasks from three
batches; the batch filter kept through 20 keyboard accepts; 50 hint-free tasks accepted together; a reject
with a reason, undone; right/wrong without a page load or a scroll; the queue and a task at 390 px.

Screenshots go to var/test-output/screenshots/review-day-*.png.
"""
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from governance.models import Batch, GovernanceEvent, Task
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_review_browser import log_in_by_cookie
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, desk_policy, hinted_hints, hinted_task, reviewer,
)

pytestmark = pytest.mark.browser

PER_BATCH = 180
SHORT = "The backup service now supports 8 languages and 4 time zones."
REFUSAL = "The term list “Competitors” does not allow: Acme."
SHORT_CHECKS = [{"check": "term_list", "result": "passed"},
                {"check": "pattern_rules", "result": "skipped", "reason": "not_finished_text"},
                {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"}]


def shoot(page, screenshots, name, *, full_page=True):
    path = screenshots / f"review-day-{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    print(f"screenshot: {path}")


@pytest.fixture
def as_editor(page, live_server, reviewer):
    return log_in_by_cookie(page, live_server, reviewer)


@pytest.fixture
def volume(desk_policy):
    """Three batches of 180 tasks each, interleaved in time: most ready without hints, every fifth with hints,
    every ninth blocked, every seventh a short text whose judges and pattern rules did not run."""
    now = timezone.now()
    batches = [Batch.objects.create(name=name, total=PER_BATCH) for name in ("Spring", "Summer", "Autumn")]
    rows = []
    for i in range(PER_BATCH):
        for b, batch in enumerate(batches):
            n = i * 3 + b
            values = {"status": "ready", "outcome": "allowed", "answer": f"Text {n}. {ANSWER}"}
            if i % 9 == 8:
                values = {"status": "blocked", "outcome": "blocked", "answer": "",
                          "refusal": {"check": "term_list", "message": REFUSAL, "stored_message": REFUSAL}}
            elif i % 5 == 4:
                values = {"status": "ready", "outcome": "allowed_with_hints", "answer": ANSWER,
                          "hints": hinted_hints()}
            elif i % 7 == 6:
                values = {"status": "ready", "outcome": "allowed", "answer": SHORT, "checks": SHORT_CHECKS}
            rows.append(Task(configuration="newsroom-desk", batch=batch, created=now - timedelta(seconds=n + 60),
                             messages=[{"role": "user", "content": "Describe it."}], **values))
    Task.objects.bulk_create(rows)
    assert Task.objects.count() >= 500
    return batches


def test_a_day_at_volume_filter_accept_bulk_accept_reject_and_undo(as_editor, live_server, screenshots, volume,
                                                                   reviewer):
    page = as_editor
    spring, summer, autumn = volume
    page.goto(f"{live_server.url}/review/")
    expect(page.locator(".gavel-pages .gavel-last-page")).to_be_visible()
    page.select_option("#id_batch", str(spring.pk))
    page.select_option("#id_status", "ready")  # blocked tasks wait too; this run accepts, so: ready ones
    page.locator("#queue-filters button[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"batch={spring.pk}"))
    expect(page.locator(".gavel-batch, #review-live")).to_contain_text("Spring")
    shoot(page, screenshots, "queue-batch")

    # 20 accepts with the keyboard, each opening the next task of the same batch.
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/review/tasks/[0-9a-f-]+/\?status=ready&batch={spring.pk}"))
    for _n in range(20):
        url = page.url
        page.keyboard.press("a")
        page.wait_for_url(lambda current, before=url: current != before)
        expect(page.locator("#accept-button, .gavel-empty").first).to_be_visible()
    assert f"batch={spring.pk}" in page.url
    accepted = Task.objects.filter(status="accepted", reviewed_by=reviewer)
    assert accepted.count() == 20
    assert set(accepted.values_list("batch_id", flat=True)) == {spring.pk}
    shoot(page, screenshots, "after-20-accepts")

    # Bulk accept the hint-free tasks of another batch whose checks all ran, after the confirmation naming the
    # count; the short texts (judges never ran) are not offered, and the page says how many (issue 43).
    page.goto(f"{live_server.url}/review/?status=ready&batch={summer.pk}&hints=no&size=50")
    expect(page.locator("tr.gavel-row")).to_have_count(50)
    offered = page.locator(".gavel-bulk-box").count()
    unchecked = page.locator("tr.gavel-row .gavel-not-run").count()
    assert unchecked > 0 and offered + unchecked == 50
    expect(page.locator("#bulk-unchecked-note")).to_contain_text(f"{unchecked} tasks without hints on this page")
    page.locator("#bulk-select-all").click()
    expect(page.locator("#bulk-count")).to_have_text(f"{offered} selected")
    shoot(page, screenshots, "bulk-selected")
    page.locator("#bulk-accept-button").click()
    expect(page.locator("#bulk-confirm-count")).to_have_text(f"Accept {offered} tasks without hints?")
    shoot(page, screenshots, "bulk-confirm")
    page.locator("#bulk-confirm-button").click()
    expect(page.locator(".messagelist")).to_contain_text(f"{offered} tasks accepted.")
    expect(page).to_have_url(re.compile(rf"batch={summer.pk}.*hints=no.*size=50|hints=no.*batch={summer.pk}"))
    bulk = Task.objects.filter(status="accepted", batch=summer)
    assert bulk.count() == offered and not any(bulk.values_list("hints", flat=True))
    assert not bulk.filter(answer=SHORT).exists()

    # Reject one with a reason (r opens the confirmation), then undo it.
    page.goto(f"{live_server.url}/review/?batch={autumn.pk}")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/review/tasks/[0-9a-f-]+/\?batch={autumn.pk}"))
    task_id = re.search(r"/tasks/([0-9a-f-]+)/", page.url).group(1)
    page.keyboard.press("r")
    expect(page.locator("#reject-confirm")).to_be_visible()
    expect(page.locator("#reject-reason")).to_be_focused()
    assert Task.objects.get(pk=task_id).status == "ready"
    page.keyboard.type("Off topic for the autumn issue.")
    shoot(page, screenshots, "reject-confirm")
    page.locator("#reject-confirm-button").click()
    expect(page.locator("#undo-offer")).to_contain_text(f"Task {task_id[:8]} was rejected.")
    assert f"batch={autumn.pk}" in page.url
    assert Task.objects.get(pk=task_id).status == "rejected"
    assert GovernanceEvent.objects.get(decision="rejected").detail["reason"] == "Off topic for the autumn issue."
    shoot(page, screenshots, "undo-offer")
    page.locator("#undo-button").click()
    expect(page.locator(".messagelist")).to_contain_text("the review was undone")
    assert Task.objects.get(pk=task_id).status == "ready"
    expect(page.locator("#accept-button")).to_be_visible()


def test_the_queue_row_and_task_say_what_did_not_run(as_editor, live_server, screenshots, volume):
    page = as_editor
    page.goto(f"{live_server.url}/review/?not_run=on&q=backup+service")
    first = page.locator("tr.gavel-row").first
    expect(first.locator(".gavel-not-run")).to_have_text(
        "Pattern rules, Judges (rules) did not run: the text is shorter than 30 words, too short to judge")
    shoot(page, screenshots, "queue-not-run")
    first.locator("a.gavel-row-link").click()
    expect(page.locator("#not-run")).to_contain_text("Pattern rules, Judges (rules): the text is shorter than 30 words")
    shoot(page, screenshots, "task-not-run")


def test_right_and_wrong_change_no_scroll_and_load_no_page(as_editor, live_server, screenshots, hinted_task):
    GovernanceEvent.objects.create(correlation_id="corr-hinted", decision="reported", check_name="term_list",
                                   configuration="newsroom-desk", detail={"list": "Hype words",
                                                                          "terms": ["revolutionary"]})
    page = as_editor
    page.set_viewport_size({"width": 1280, "height": 500})
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    loads = []
    page.on("framenavigated", lambda frame: loads.append(frame.url) if frame == page.main_frame else None)
    page.locator("#wrong-1").scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 37)")
    before = page.evaluate("window.scrollY")
    assert before > 0
    page.locator("#wrong-1").click()
    expect(page.locator("#verdict-1")).to_have_text("Marked wrong")
    expect(page.locator("#wrong-1")).to_have_attribute("aria-pressed", "true")
    page.locator("#right-1").click()
    expect(page.locator("#verdict-1")).to_have_text("Marked right")
    expect(page.locator("#right-1")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#wrong-1")).to_have_attribute("aria-pressed", "false")
    assert page.evaluate("window.scrollY") == before
    assert loads == []
    shoot(page, screenshots, "right-wrong")
    from governance.models import HintFeedback
    assert list(HintFeedback.objects.values_list("verdict", flat=True)) == ["right"]


def test_a_phone_at_390_px_has_no_sideways_scroll_and_40_px_buttons(browser, live_server, screenshots, reviewer,
                                                                     volume, hinted_task):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US", has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = log_in_by_cookie(context.new_page(), live_server, reviewer)
    try:
        for name, url in (("queue", "/review/"), ("task", f"/review/tasks/{hinted_task.pk}/")):
            page.goto(live_server.url + url)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{name}: {width}px wide"
            small = page.evaluate("""() => Array.from(document.querySelectorAll(
                  '#content .button, #content button, #user-tools button')).filter(b => b.offsetParent !== null)
                  .map(b => [b.id || b.textContent.trim().slice(0, 30), b.getBoundingClientRect().height])
                  .filter(([_, h]) => h < 40)""")
            assert small == [], f"{name}: buttons under 40 px: {small}"
            shoot(page, screenshots, f"phone-{name}", full_page=False)
    finally:
        context.close()


def test_the_dashboard_batch_progress_updates_without_a_reload(as_editor, live_server, desk_policy):
    batch = Batch.objects.create(name="Live batch", total=2)
    tasks = [Task.objects.create(configuration="newsroom-desk", status="queued", batch=batch) for _ in range(2)]
    page = as_editor
    page.goto(f"{live_server.url}/review/dashboard/")
    loads = []
    page.on("framenavigated", lambda frame: loads.append(frame.url) if frame == page.main_frame else None)
    progress = page.locator(f'.gavel-batch-progress[data-batch="{batch.pk}"] .gavel-count')
    expect(progress).to_have_text("0 of 2 finished (0%)")
    Task.objects.filter(pk=tasks[0].pk).update(status="ready")
    expect(progress).to_have_text("1 of 2 finished (50%)", timeout=10_000)
    assert loads == []
