"""Browser fixtures: Debian's chromium driven by Playwright against pytest-django's live server.

Without /usr/bin/chromium the browser tests are skipped, unless
GAVEL_REQUIRE_SERVICES is set (CI), where a missing browser is a failure.
"""
import os
from pathlib import Path

import pytest

from tests.governance.test_admin import (  # noqa: F401  (fixtures)
    desk, gateway, judges, policy_editor, snippet, superuser,
)

CHROMIUM = Path("/usr/bin/chromium")
# Screenshots are test output: kept under var/ (ignored by git), or where GAVEL_TEST_OUTPUT says.
OUTPUT = Path(os.environ.get("GAVEL_TEST_OUTPUT") or Path(__file__).resolve().parents[2] / "var" / "test-output")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
PASSWORD = "correct horse battery staple"
TIMEOUT_MS = 15_000


def _unavailable(reason: str):
    if os.environ.get("GAVEL_REQUIRE_SERVICES"):
        pytest.fail(f"{reason}; GAVEL_REQUIRE_SERVICES is set, so the browser tests must run", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -r requirements-dev.txt)")

    # Playwright's sync API runs an event loop in this thread, and Django then
    # refuses ORM calls from it; the tests' own queries are plain sync code.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            try:
                yield chromium
            finally:
                chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def screenshots() -> Path:
    """The folder the browser tests save their screenshots in."""
    folder = OUTPUT / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser):
    """A fresh browser context (no cookies) and page for each test."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    yield tab
    context.close()


def sign_in(page, live_server, username: str):
    """Sign in through the admin's own login form as `username` (whose password is PASSWORD)."""
    page.goto(f"{live_server.url}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/")
    return page


@pytest.fixture
def log_in(page, live_server):
    """Log a user in through the admin's own login form; the user gets PASSWORD."""

    def log_in_as(user):
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
        return sign_in(page, live_server, user.username)

    return log_in_as
