"""Every change is a release (issue 27, must show 1 and the admin half of 2), in chromium: a policy editor's
admin edit lands in a draft, the draft's page shows what it would do, an administrator publishes through the
gate — refused for the regression, then accepted — and the screening API follows only then."""
import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import override_settings
from django.utils import timezone
from playwright.sync_api import expect

from governance.models import PolicyDraft, PolicyRevision, PolicyVersion, Task
from termlists.models import TermList
from tests.browser.conftest import PASSWORD, sign_in
from tests.drafts.helpers import live_policy
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.browser

# The screenshots the issue asks to look at; kept where GAVEL_DRAFT_SCREENS says (default: the test output).
DISCOUNT = "Heute gibt es eine Rabattaktion für alle Kunden der ACME. " + NEWS


def screens(default: Path) -> Path:
    folder = Path(os.environ.get("GAVEL_DRAFT_SCREENS") or default)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def person(name: str, *, superuser=False, codenames=()):
    user = get_user_model().objects.create_user(name, password=PASSWORD, is_staff=True, is_superuser=superuser)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


def policy_editor_with_drafts():
    """A policy editor as the demo seeds one: policy records and examples, drafts — no publishing."""
    models = ("termlist", "snippet", "patternrule", "configuration", "policyexample", "policydraft")
    return person("pia", codenames=[f"{a}_{m}" for m in models for a in ("add", "change", "view")])


def signed_in(browser, live_server, user):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    context.set_default_timeout(15_000)
    return sign_in(context.new_page(), live_server, user.username)


def screen(page, live_server, token) -> dict:
    response = page.request.post(f"{live_server.url}/api/v1/screenings",
                                 headers={"Authorization": f"Bearer {token}"},
                                 data={"configuration": "newsroom", "text": DISCOUNT})
    assert response.status == 200, response.text()
    return response.json()


def test_an_edit_lands_in_a_draft_is_refused_for_its_regression_then_published(
        browser, live_server, provider, make_consumer, screenshots):
    from governance.models import Configuration

    live_policy(provider)
    folder = screens(screenshots)
    _consumer, token = make_consumer("newsroom-app", [Configuration.objects.get(identifier="newsroom")])
    now = timezone.now()
    replayed = Task.objects.bulk_create(
        [Task(configuration="newsroom", status="ready", outcome="blocked", answer=f"Item {i}: {DISCOUNT}",
              created=now - timedelta(minutes=i + 1)) for i in range(3)]
        + [Task(configuration="newsroom", status="ready", outcome="allowed", answer=NEWS, created=now)])
    pia, root = policy_editor_with_drafts(), person("root", superuser=True)
    version = PolicyVersion.current()

    # The policy editor switches the block-mode list to report mode in the admin.
    editor = signed_in(browser, live_server, pia)
    expect(editor.locator("#gavel-drafts-link")).to_be_visible()
    before = screen(editor, live_server, token)
    assert before["outcome"] == "blocked"
    brand = TermList.objects.get(name="Brand words")
    editor.goto(f"{live_server.url}/admin/termlists/termlist/{brand.pk}/change/")
    expect(editor.locator("#gavel-drafting-note")).to_contain_text("Saving puts this change into your open draft")
    expect(editor.locator("input[name=_gavel_publish]")).to_have_count(0)  # publishing stays with approvers
    editor.select_option("select[name=mode]", "report")
    editor.locator("input[name=_save]").click()
    expect(editor.locator("ul.messagelist li.success")).to_contain_text("Saved into your draft")

    # Nothing is live: same list, same version, the screening still stops the text.
    assert TermList.objects.get(pk=brand.pk).mode == "block" and PolicyVersion.current() == version
    assert screen(editor, live_server, token)["outcome"] == "blocked"
    expect(editor.locator("table#result_list tr", has_text="Brand words")).to_contain_text("Draft")
    editor.screenshot(path=str(folder / "termlist-saved-into-draft.png"), full_page=True)

    # The draft's page: the diff, the failing example, the replayed texts that change.
    editor.get_by_role("link", name="Open the draft").click()
    draft = PolicyDraft.objects.get(author=pia)
    expect(editor.locator("#draft-diff .removed")).to_contain_text("mode: block")
    expect(editor.locator("#draft-diff .added")).to_contain_text("mode: report")
    failing = editor.locator("#example-discount-word-blocked")
    expect(failing).to_contain_text("(regression)")
    expect(failing.locator("td").nth(2)).to_contain_text("failed")
    expect(editor.locator("#draft-replay-summary")).to_contain_text("4 retained texts of the last 500 tasks")
    expect(editor.locator("#draft-replay-summary")).to_contain_text("3 would change")
    for task in replayed[:3]:
        link = editor.locator(f'a[href="/review/tasks/{task.pk}/"]')
        expect(link).to_have_text(str(task.pk))
    expect(editor.locator("#draft-replay mark")).to_have_count(3)  # the passage, for a reader of texts
    expect(editor.locator("#draft-replay mark").first).to_have_text("Rabattaktion")
    editor.screenshot(path=str(folder / "draft-page-editor.png"), full_page=True)
    editor.locator("#draft-submit").click()
    expect(editor.locator("#draft-status")).to_contain_text("submitted")

    # The administrator publishes: refused for the regression, then accepted.
    admin = signed_in(browser, live_server, root)
    admin.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    admin.locator("#draft-publish").click()
    refusal = admin.locator("#draft-refused")
    expect(refusal).to_contain_text("Publishing was refused: these passing examples would fail.")
    expect(refusal).to_contain_text("discount-word-blocked")
    expect(admin.locator("ul.messagelist li.error")).to_contain_text("discount-word-blocked")
    admin.screenshot(path=str(folder / "draft-publish-refused.png"), full_page=True)
    assert PolicyVersion.current() == version and screen(admin, live_server, token)["outcome"] == "blocked"
    refusal.locator("input[name=allow_regressions]").check()
    admin.locator("#draft-accept-publish").click()
    expect(admin.locator("ul.messagelist li.success")).to_contain_text("Published as policy version")
    expect(admin.locator("#draft-status")).to_contain_text("published as version")
    admin.screenshot(path=str(folder / "draft-published.png"), full_page=True)

    draft.refresh_from_db()
    assert draft.status == "published" and draft.regressions_accepted == 1
    revision = PolicyRevision.objects.get(number=PolicyVersion.current())
    assert (revision.author, revision.approver, revision.regressions_accepted) == ("user:pia", "user:root", 1)
    after = screen(admin, live_server, token)
    assert after["outcome"] == "allowed_with_hints" and after["policy_version"] == PolicyVersion.current()
    admin.context.close()
    editor.context.close()


@override_settings(GAVEL_POLICY_FOUR_EYES=True)
def test_four_eyes_the_author_sees_no_publish_button_another_approver_does(browser, live_server, provider,
                                                                          screenshots):
    live_policy(provider)
    folder = screens(screenshots)
    anna, root = person("anna", superuser=True), person("root", superuser=True)
    author = signed_in(browser, live_server, anna)
    brand = TermList.objects.get(name="Brand words")
    author.goto(f"{live_server.url}/admin/termlists/termlist/{brand.pk}/change/")
    expect(author.locator("input[name=_gavel_publish]")).to_have_count(0)
    author.fill("textarea[name=forbidden]", "Rabatt*\nSkonto")
    author.locator("input[name=_save]").click()
    author.get_by_role("link", name="Open the draft").click()
    expect(author.locator("#draft-four-eyes")).to_contain_text("another approver publishes it")
    expect(author.locator("#draft-publish")).to_have_count(0)
    author.screenshot(path=str(folder / "draft-four-eyes-author.png"), full_page=True)
    # The same page in German (issue 27: German complete, outcome and status values too).
    author.select_option("#gavel-language-choice", "de")
    expect(author.locator("#draft-four-eyes")).to_contain_text("Vier Augen")
    expect(author.locator("#draft-status")).to_contain_text("offen")
    author.screenshot(path=str(folder / "draft-page-german.png"), full_page=True)
    author.select_option("#gavel-language-choice", "en")
    expect(author.locator("#draft-four-eyes")).to_contain_text("another approver")

    draft = PolicyDraft.objects.get(author=anna)
    other = signed_in(browser, live_server, root)
    other.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    other.locator("#draft-publish").click()
    expect(other.locator("ul.messagelist li.success")).to_contain_text("Published as policy version")
    assert "Skonto" in TermList.objects.get(pk=brand.pk).forbidden
    author.context.close()
    other.context.close()


def test_the_example_form_picks_findings_and_tries_the_text_before_saving(browser, live_server, provider, screenshots):
    live_policy(provider)
    folder = screens(screenshots)
    pia = policy_editor_with_drafts()
    page = signed_in(browser, live_server, pia)
    page.goto(f"{live_server.url}/admin/governance/policyexample/add/")
    page.fill("input[name=name]", "discount-in-report")
    page.select_option("select[name=configuration]", "newsroom")
    page.fill("textarea[name=text]", DISCOUNT)
    page.select_option("select[name=expect_outcome]", "allowed_with_hints")
    row = page.locator("#id_expect_findings tr.gavel-finding").first
    row.locator("select.gavel-finding-check").select_option("term_list")
    # The second picker offers only term lists now, the third only that list's terms.
    expect(row.locator("select.gavel-finding-target optgroup[data-check=pattern_rules]")).to_be_hidden()
    row.locator("select.gavel-finding-target").select_option("Brand words")
    row.locator("select.gavel-finding-detail").select_option("Rabatt*")
    page.get_by_role("button", name="Try it: what the current policy says").click()
    result = page.locator("#try-example")
    expect(result).to_contain_text("Outcome: blocked (expected: delivered with hints).")
    expect(result).to_contain_text("The example would fail.")
    expect(result.locator("tr.try-found")).to_contain_text("Brand words Rabatt* (term_list)")
    expect(page.locator("textarea[name=text]")).to_have_value(DISCOUNT)  # the form as it was filled in
    page.screenshot(path=str(folder / "example-try-it.png"), full_page=True)
    page.locator("input[name=_save]").click()
    expect(page.locator("ul.messagelist li.success")).to_contain_text("Saved into your draft")
    draft = PolicyDraft.objects.get(author=pia)
    [change] = draft.changes
    assert change["record"]["expect"]["findings"] == [{"check": "term_list", "list": "Brand words", "term": "Rabatt*"}]
    page.context.close()
