"""The admin in a real browser (Debian's chromium through Playwright).

A superuser changes a rule mode, a policy editor cannot (a forged POST is refused), a snippet
shows its lines numbered.
"""
import pytest
from playwright.sync_api import expect

from governance.models import Configuration
from tests.governance.drafted import draft_record

pytestmark = pytest.mark.browser




def open_configuration(page, live_server, identifier):
    page.goto(f"{live_server.url}/admin/governance/configuration/")
    page.get_by_role("link", name=identifier, exact=True).click()
    expect(page.locator("h1")).to_contain_text("Change configuration")


def test_superuser_changes_the_rule_mode(log_in, live_server, superuser, desk):
    page = log_in(superuser)
    open_configuration(page, live_server, "desk")
    rule_mode = page.locator("select[name=rule_mode]")
    expect(rule_mode).to_have_value("report")
    expect(page.locator("input[name=rule_tags]")).to_have_value("style, tone")

    rule_mode.select_option("block")
    # An administrator saves and publishes at once (a release through the gate); a plain save is a draft.
    page.locator("input[name=_gavel_publish]").click()

    expect(page.locator("ul.messagelist li.success")).to_contain_text("Saved and published: policy version")
    assert Configuration.objects.get(pk=desk.pk).rule_mode == "block"


def test_policy_editor_sees_rule_fields_read_only_and_cannot_change_them(log_in, live_server, policy_editor, desk,
                                                                        screenshots):
    page = log_in(policy_editor)
    open_configuration(page, live_server, "desk")
    assert page.locator("select[name=rule_mode]").count() == 0
    assert page.locator("[name=rule_tags], [name=rule_judges], [name=escalation]").count() == 0
    expect(page.locator(".field-rule_mode .readonly")).to_have_text("report")
    expect(page.locator(".field-rule_tag_list .readonly")).to_have_text("style, tone")
    expect(page.locator("fieldset", has_text="Context and rules")).to_contain_text(
        "Only an administrator (superuser) can change these fields."
    )
    page.screenshot(path=str(screenshots / "editor-configuration.png"), full_page=True)

    # Change what the editor may change, and forge what the editor may not: the whole POST is refused.
    page.fill("input[name=model]", "writer-model-2")
    page.evaluate("""() => {
        const form = document.querySelector("#configuration_form");
        for (const [name, value] of [["rule_mode", "block"], ["rule_tags", "forged"], ["rule_default", "block"]]) {
            const input = document.createElement("input");
            input.type = "hidden"; input.name = name; input.value = value;
            form.appendChild(input);
        }
    }""")
    page.locator("input[name=_save]").click()

    # The refusal in the admin's own layout, naming the fields by label, with a way back (issue 11).
    expect(page.locator("h1")).to_have_text("Not allowed")
    expect(page.locator("#site-name")).to_contain_text("Gavel administration")
    expect(page.locator(".gavel-reason")).to_contain_text("Only an administrator may change: Rule mode")
    expect(page.get_by_role("link", name="Back to the page you came from")).to_be_visible()
    stored = Configuration.objects.get(pk=desk.pk)
    assert stored.model == "writer-model"
    assert (stored.rule_mode, stored.rule_tags, stored.rule_default) == ("report", ["style", "tone"], "allow")

    # The page as it came, without forged fields, saves.
    open_configuration(page, live_server, "desk")
    page.fill("input[name=model]", "writer-model-2")
    page.locator("input[name=_save]").click()
    # Into the editor's draft (issue 27): the live record keeps its model until the draft is published.
    expect(page.locator("ul.messagelist li.success")).to_contain_text("Saved into your draft")
    stored = Configuration.objects.get(pk=desk.pk)
    assert stored.model == "writer-model"
    assert draft_record(policy_editor, "configurations", "desk")["model"] == "writer-model-2"
    assert (stored.rule_mode, stored.rule_tags, stored.rule_default) == ("report", ["style", "tone"], "allow")


def test_snippet_page_shows_numbered_lines(log_in, live_server, superuser, snippet, screenshots):
    page = log_in(superuser)
    page.goto(f"{live_server.url}/admin/snippets/snippet/{snippet.pk}/change/")
    lines = page.locator("ol.gavel-lines li")
    expect(lines).to_have_count(3)
    assert [lines.nth(i).get_attribute("value") for i in range(3)] == ["1", "3", "4"]
    expect(lines.nth(1)).to_have_text("Never promise delivery dates.")
    page.screenshot(path=str(screenshots / "snippet-lines.png"), full_page=True)
