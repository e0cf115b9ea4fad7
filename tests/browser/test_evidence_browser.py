"""Evidence for a non-engineer (issue 43), in Debian's chromium: an administrator verifies a published text and
exports evidence from the admin, in English and in German; copying an answer from the review page copies the
text only; axe-core finds no serious or critical violation on the queue, a task page and the evidence pages.
Screenshots: var/screenshots/evidence-*.png."""
import os
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.axe_check import serious_violations
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.test_review_browser import log_in_by_cookie
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    ANSWER, HYPE, blocked_task, desk_policy, field_task, hinted_task, reviewer,
)
from tests.governance.test_evidence_admin import TEXT, deliver

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("GAVEL_SCREENSHOTS") or Path(settings.BASE_DIR) / "var" / "screenshots")


def shoot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"evidence-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


@pytest.fixture
def administrator(db):
    return User.objects.create_superuser("margarete", "m@example.org", None)


def tab(browser, live_server, user, locale):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale=locale)
    context.set_default_timeout(TIMEOUT_MS)
    return log_in_by_cookie(context.new_page(), live_server, user)


@pytest.mark.parametrize("locale,words", [
    ("en-US", {"verify": "Verify a published text", "button": "Verify", "found": "Gavel delivered exactly this text",
               "check": "Judges (rules): did not run", "review": "accepted by erika", "export": "Export evidence",
               "download": "Download", "none": "No record matches"}),
    ("de-DE", {"verify": "Einen veröffentlichten Text nachweisen", "button": "Nachweisen",
               "found": "Gavel hat genau diesen Text einmal ausgeliefert", "check": "Prüfer (Regeln): lief nicht",
               "review": "angenommen von erika", "export": "Nachweise exportieren", "download": "Herunterladen",
               "none": "Kein Nachweis passt"}),
])
def test_an_administrator_verifies_and_exports_from_the_admin(browser, live_server, administrator, locale, words):
    deliver(reviewed=True)
    page = tab(browser, live_server, administrator, locale)
    lang = locale[:2]
    page.goto(f"{live_server.url}/admin/")
    page.get_by_role("link", name=words["verify"]).click()
    # Pasted as a CMS page gives it: wrapped, with a no-break space.
    page.locator("textarea[name=text]").fill(TEXT.replace(" the whole", "\nthe\u00a0whole"))
    page.get_by_role("button", name=words["button"], exact=True).click()
    result = page.locator("#evidence-verify-result")
    expect(result).to_contain_text(words["found"])
    expect(result).to_contain_text(words["review"])
    expect(result).to_contain_text(words["check"])
    for code in ("allowed_with_hints", "term_list", "not_finished_text", "null", "None"):
        assert code not in result.inner_text(), code
    shoot(page, f"verify-{lang}")
    assert serious_violations(page) == []

    page.locator("textarea[name=text]").fill(TEXT.replace("free", "spare"))
    page.get_by_role("button", name=words["button"], exact=True).click()
    expect(page.locator("#verify-summary")).to_contain_text(words["none"])
    shoot(page, f"verify-changed-{lang}")

    page.get_by_role("link", name=words["export"]).first.click()
    expect(page.locator("#evidence-export-form")).to_be_visible()
    page.locator("input[name=since]").fill("2020-01-01")
    page.locator("input[name=format][value=csv]").check()
    shoot(page, f"export-{lang}")
    assert serious_violations(page) == []
    with page.expect_download() as download_info:
        page.get_by_role("button", name=words["download"]).click()
    download = download_info.value
    assert download.suggested_filename.endswith(".csv")
    content = Path(download.path()).read_text(encoding="utf-8-sig")
    assert "erika" in content and "term_list:passed" in content and len(content.splitlines()) == 2
    page.locator("input[name=format][value=ndjson]").check()
    with page.expect_download() as download_info:
        page.get_by_role("button", name=words["download"]).click()
    assert download_info.value.suggested_filename.endswith(".ndjson")
    page.context.close()


def test_copying_the_answer_copies_the_text_only(browser, live_server, reviewer, hinted_task, blocked_task,
                                                 field_task):
    page = tab(browser, live_server, reviewer, "en-US")
    page.goto(f"{live_server.url}/review/")
    assert serious_violations(page) == [], "queue"
    page.goto(f"{live_server.url}/review/tasks/{hinted_task.pk}/")
    expect(page.locator("sup.gavel-ref").first).to_be_visible()
    # The number is shown (generated content) …
    shown = page.locator("sup.gavel-ref a").first.evaluate("a => getComputedStyle(a, '::after').content")
    assert shown == '"1"'
    # … but a selection of the whole answer, as a person copies it, is the answer's text alone.
    copied = page.locator("#answer").evaluate(
        "el => { const r = document.createRange(); r.selectNodeContents(el); const s = getSelection();"
        " s.removeAllRanges(); s.addRange(r); return s.toString(); }")
    assert HYPE + "1" not in copied
    assert " ".join(copied.split()) == " ".join(ANSWER.split())
    assert serious_violations(page) == [], "task page"
    page.goto(f"{live_server.url}/review/tasks/{blocked_task.pk}/")
    assert serious_violations(page) == [], "blocked task page"
    page.context.close()
