"""The admin's *Test the policy* and *Policy history* pages in chromium (SPEC §12), screenshots kept."""
import copy

import pytest
from playwright.sync_api import expect

from governance import policy
from governance.models import PolicyExample, PolicyVersion
from tests.governance.test_policy_examples import NEWS, small_policy

pytestmark = pytest.mark.browser


def test_test_page_shows_the_example_and_rule_tables(log_in, live_server, superuser, provider, screenshots):
    policy.import_policy(small_policy(provider))
    PolicyExample.objects.create(name="guarantee-slips-through", configuration="newsroom",
                                 text=NEWS + " Success is guaranteed.", expect_outcome="allowed")
    page = log_in(superuser)
    page.click("text=Test the policy")
    page.select_option("#id_judges", "skip")
    page.click("input[value='Run the test']")
    totals = page.locator("#policy-test-totals")
    assert "2 passed, 1 failed" in totals.inner_text()
    assert "0 call(s), 0 from the verdict cache" in totals.inner_text()
    failed = page.locator("#policy-test-examples tr", has_text="guarantee-slips-through")
    assert "failed" in failed.inner_text()
    assert "outcome delivered with hints, expected delivered" in failed.inner_text()  # in words (issue 29)
    row = page.locator("#policy-test-rules tr", has_text="pattern_rules:legal.no-guarantee")
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    assert cells[1:] == ["1", "0", "0.00", "—", "0", "1", "0", "2"]
    page.screenshot(path=str(screenshots / "policy-test.png"), full_page=True)


def test_history_page_shows_a_diff_and_restores_a_version(log_in, live_server, superuser, provider, screenshots):
    from governance.policy import release
    from termlists.models import TermList

    document = small_policy(provider)
    release.apply_release(document, actor="user:admin", source="import")
    first = PolicyVersion.current()
    draft = copy.deepcopy(document)
    draft["term_lists"][0]["forbidden"].append("Skonto")
    release.apply_release(draft, actor="user:admin", source="import")
    second = PolicyVersion.current()
    assert second > first

    page = log_in(superuser)
    page.click("text=Policy history")
    page.select_option("select[name=a]", str(first))
    page.select_option("select[name=b]", str(second))
    page.click("input[value='Show the difference']")
    diff = page.locator("#policy-diff")
    assert f"Version {first} → version {second}" in diff.inner_text()
    assert page.locator("#policy-diff .added", has_text="forbidden: [Rabatt*, Skonto]").count() == 1
    assert page.locator("#policy-diff .removed", has_text="forbidden: [Rabatt*]").count() == 1
    page.screenshot(path=str(screenshots / "policy-history.png"), full_page=True)

    # Restore makes a draft (issue 27): previewed on its page, published from there.
    page.locator("#policy-versions tr", has_text=f"{first}").locator("button", has_text="Restore as a draft").first.click()
    assert f"Version {first} is now a draft" in page.locator(".messagelist").inner_text()
    assert "Skonto" in TermList.objects.get().forbidden
    expect(page.locator("#draft-diff .removed", has_text="Skonto")).to_have_count(1)
    page.locator("#draft-publish").click()
    assert "Published as policy version" in page.locator(".messagelist").inner_text()
    assert "Skonto" not in TermList.objects.get().forbidden
