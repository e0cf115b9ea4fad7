"""A failed task's page and the keep-as-example box in a real browser (Debian's chromium through Playwright):
the failure code explained in the page's language above the message as the consuming system read it, and the
warning naming what a kept example leaves out and why (decision 0054). Screenshots: review-failed-en.png,
review-failed-de.png, review-keep-warning.png in the screenshots folder."""
import pytest
from playwright.sync_api import expect

from governance.models import PolicyExample
from governance.policy.testing import run_examples
from governance.work import queue
from tests.browser.axe_check import serious_violations
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_review_browser import log_in_by_cookie
from tests.governance.review_fixtures import make_task, reviewer  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

TOLD = ("Every provider of the chain timed out: provider local-test (configuration newsroom): no answer within 5 s. "
        "Gave up after 3 attempts; check the provider and resubmit.")
LONG = ("A kettle that boils a full litre in under three minutes, switches itself off when the water is ready "
        "and keeps its handle cool to the touch.")


def shoot(page, screenshots, name):
    path = screenshots / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


@pytest.fixture
def failed_task(configuration):
    return make_task(configuration="newsroom", status="failed", attempts=3, minutes_ago=3,
                     failure={"code": "provider_timeout", "message": TOLD})


@pytest.fixture
def german(browser, live_server, reviewer):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="de-DE")
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    yield log_in_by_cookie(tab, live_server, reviewer)
    context.close()


def test_a_failed_task_explains_its_code_above_the_verbatim_message(page, live_server, screenshots, reviewer,
                                                                    failed_task):
    log_in_by_cookie(page, live_server, reviewer)
    page.goto(f"{live_server.url}/review/tasks/{failed_task.pk}/")
    expect(page.locator("#failure-what")).to_have_text("The model provider did not answer in time.")
    expect(page.locator("#failure-code")).to_have_text(
        "What the code means: provider_timeout — No provider this configuration may use answered within its "
        "timeout, on any of the worker's attempts.")
    expect(page.locator("#failure-detail-label")).to_have_text(
        "As the consuming system was told (verbatim, not translated), after 3 attempt(s):")
    expect(page.locator("#failure-verbatim")).to_have_text(f"provider_timeout {TOLD}")
    code_box, told_box = page.locator("#failure-code").bounding_box(), page.locator("#failure-verbatim").bounding_box()
    assert code_box["y"] < told_box["y"]  # the explanation stands above the message
    assert serious_violations(page) == []
    shoot(page, screenshots, "review-failed-en")


def test_a_failed_task_in_german_keeps_the_message_as_it_was_told(german, live_server, screenshots, failed_task):
    page = german
    page.goto(f"{live_server.url}/review/tasks/{failed_task.pk}/")
    expect(page.locator("#failure-what")).to_have_text("Der Modellanbieter hat nicht rechtzeitig geantwortet.")
    expect(page.locator("#failure-code")).to_contain_text(
        "Was der Code bedeutet: provider_timeout — Kein Anbieter, den diese Konfiguration nutzen darf")
    expect(page.locator("#failure-detail-label")).to_have_text(
        "So wurde es dem aufrufenden System mitgeteilt (wörtlich, nicht übersetzt), nach 3 Versuch(en):")
    expect(page.locator("#failure-verbatim")).to_have_text(f"provider_timeout {TOLD}")  # English, as told
    shoot(page, screenshots, "review-failed-de")


def test_the_keep_box_says_what_it_leaves_out_and_the_kept_example_passes(page, live_server, screenshots, reviewer,
                                                                          configuration, provider_server):
    provider_server.set_default({"text": LONG})
    task = make_task(configuration="newsroom", kind="field_fill", status="queued",
                     field={"record": "page:42", "name": "meta_description", "label": "Meta description",
                            "max_length": 60})
    queue.run(task.pk)
    log_in_by_cookie(page, live_server, reviewer)
    page.goto(f"{live_server.url}/review/tasks/{task.pk}/")
    page.locator("#reject-button").click()
    page.locator("#reject-confirm-button").click()
    expect(page.locator(".messagelist")).to_be_visible()
    page.goto(f"{live_server.url}/review/tasks/{task.pk}/#keep")
    expect(page.locator("#task-status")).to_have_text("rejected")
    warning = page.locator('.gavel-keep-left-out[data-check="field"]')
    expect(warning).to_contain_text("Left out of the example: the field length check")
    expect(warning).to_contain_text("an example has no field and so no length limit")
    expect(page.locator("#keep-outcome")).to_have_attribute("data-outcome", "allowed")
    expect(page.locator("#keep")).not_to_contain_text("pattern rule")
    page.locator("#keep").scroll_into_view_if_needed()
    shoot(page, screenshots, "review-keep-warning")
    page.locator("#keep-button").click()
    expect(page.locator("#kept-example")).to_be_visible()
    (result,) = run_examples([PolicyExample.objects.get(from_task=task.pk)]).examples
    assert result.passed, result.as_dict()
