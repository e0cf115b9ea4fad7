"""The approver's first screen, in chromium at 1280x800: the draft page's publish controls without scrolling
(English and German), the admin home's *Drafts waiting* for a publisher and for an author whose draft came
back, axe-core on each, and the German policy test page within the window's width."""
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.cache import cache

from governance.policy import proposals
from tests.browser.axe_check import serious_violations
from tests.browser.conftest import PASSWORD, sign_in
from tests.drafts.helpers import live_policy, term_list

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("GAVEL_FLOW_SCREENS") or "/tmp/shots")
WIDTH, HEIGHT = 1280, 800


def person(name, *, superuser=False, codenames=()):
    user = get_user_model().objects.create_user(name, password=PASSWORD, is_staff=True, is_superuser=superuser)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def signed_in(browser, live_server, user, language):
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT},
                                  locale="de-DE" if language == "de" else "en-US",
                                  extra_http_headers={"Accept-Language": language})
    context.set_default_timeout(15_000)
    return sign_in(context.new_page(), live_server, user.username)


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


@pytest.fixture
def waiting_draft(provider):
    cache.clear()
    live_policy(provider)
    author = person("anna", codenames=["view_policydraft", "change_policydraft", "add_policydraft"])
    draft = proposals.open_draft_for(author, title="Add Skonto to the brand words")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    proposals.submit(draft, author)
    return draft, author


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_draft_page_shows_the_publish_controls_on_the_first_screen(browser, live_server, waiting_draft,
                                                                         language):
    draft, _author = waiting_draft
    root = person(f"root-{language}", superuser=True)
    page = signed_in(browser, live_server, root, language)
    page.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    publish = page.locator("#draft-publish")
    box = publish.bounding_box()
    assert box is not None and box["y"] + box["height"] <= HEIGHT, box
    assert page.locator("#draft-send-back").bounding_box()["y"] < HEIGHT
    assert page.locator("#draft-schedule-zone").inner_text().endswith("UTC")
    shot(page, f"flow-draft-{language}-first-screen.png")
    assert serious_violations(page) == []
    page.goto(f"{live_server.url}/admin/")
    assert page.locator("#gavel-drafts-waiting").is_visible()
    assert serious_violations(page) == []
    page.context.close()


def test_the_admin_home_shows_the_publisher_the_waiting_draft_and_the_author_the_sent_back_one(
        browser, live_server, waiting_draft):
    draft, author = waiting_draft
    publisher = person("pia", codenames=["publish_policy", "view_policydraft", "change_policydraft"])
    page = signed_in(browser, live_server, publisher, "en")
    panel = page.locator("#gavel-drafts-waiting")
    assert "Add Skonto to the brand words" in panel.inner_text() and "submitted by user:anna" in panel.inner_text()
    assert "was submitted by user:anna" in page.locator("ul.messagelist").inner_text()  # the one-time notice
    shot(page, "flow-home-publisher.png")
    page.reload()
    assert page.locator("ul.messagelist").count() == 0  # shown once
    page.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    page.fill("textarea[name=comment]", "Say why Skonto is a brand word.")
    page.click("#draft-send-back")
    page.context.close()

    for language in ("en", "de"):
        page = signed_in(browser, live_server, author, language)
        panel = page.locator("#gavel-drafts-waiting")
        assert "Say why Skonto is a brand word." in panel.inner_text()
        if language == "en":
            assert "sent back to you by user:pia" in panel.inner_text()
            assert "sent back by user:pia" in page.locator("ul.messagelist").inner_text()
            shot(page, "flow-home-author-sent-back.png")
        else:
            assert "an Sie zurückgegeben" in panel.inner_text()
        assert serious_violations(page) == []
        page.context.close()


def test_the_german_policy_test_page_fits_1280_pixels(browser, live_server, provider):
    live_policy(provider)
    root = person("root", superuser=True)
    page = signed_in(browser, live_server, root, "de")
    page.goto(f"{live_server.url}/admin/policy/test/")
    page.select_option("select[name=judges]", "skip")
    page.click("#policy-test-form input[type=submit]")
    page.wait_for_load_state()
    assert page.locator("table").count() >= 2  # the report's tables are there
    width = page.evaluate("document.documentElement.scrollWidth")
    shot(page, "flow-policy-test-de.png")
    assert width <= WIDTH, width
    page.context.close()
