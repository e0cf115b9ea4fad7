"""Issue 11 in a real browser: indirect judging changes refused to a policy editor and confirmed by an
administrator, and the term list's "Try it" box usable at 1280 px. Screenshots go to the test output."""
import pytest
from playwright.sync_api import expect

from governance.models import Configuration, Provider, set_links
from termlists.models import TermList

pytestmark = pytest.mark.browser

MUST_ASK = "An administrator must make this change."


@pytest.fixture
def newsroom(desk, judges):
    """`newsroom` has judge-a as its judge (block mode); `desk` (from the admin tests) names judge-a too."""
    newsroom = Configuration.objects.create(identifier="newsroom", provider=desk.provider, model="m",
                                            rule_mode="block", rule_tags=["style"])
    set_links(newsroom, "rule_judges", [judges[0]])
    return newsroom


def open_change_page(page, live_server, model, identifier):
    page.goto(f"{live_server.url}/admin/governance/{model}/")
    page.get_by_role("link", name=identifier, exact=True).click()


def test_a_policy_editor_is_refused_every_indirect_judging_change(log_in, live_server, policy_editor, newsroom,
                                                                   screenshots):
    page = log_in(policy_editor)
    open_change_page(page, live_server, "configuration", "judge-a")
    # The warning stands where the edit happens.
    expect(page.locator("ul.messagelist li.info")).to_contain_text("Other configurations depend on this one")

    page.fill("input[name=identifier]", "judge-alpha")
    page.locator("input[name=_save]").click()
    error = page.locator(".field-identifier .errorlist")
    expect(error).to_contain_text("Configuration “newsroom” names “judge-a” as a judge")
    expect(error).to_contain_text(MUST_ASK)
    page.screenshot(path=str(screenshots / "editor-rename-refused.png"), full_page=True)

    far = Provider.objects.create(name="far", route="openai", trust_zone="external_global")
    open_change_page(page, live_server, "configuration", "judge-a")
    page.select_option("select[name=provider]", str(far.pk))
    page.locator("input[name=_save]").click()
    expect(page.locator(".field-provider .errorlist")).to_contain_text("Configuration “newsroom”")

    open_change_page(page, live_server, "provider", "gateway")
    page.select_option("select[name=kind]", "decision")
    page.locator("input[name=_save]").click()
    kind_error = page.locator(".field-kind .errorlist")
    expect(kind_error).to_contain_text("Configuration “newsroom”")
    expect(kind_error).to_contain_text(MUST_ASK)
    page.screenshot(path=str(screenshots / "editor-provider-kind-refused.png"), full_page=True)

    judge = Configuration.objects.get(pk=newsroom.ordered_judges()[0].pk)
    assert (judge.identifier, judge.provider.name, judge.provider.kind) == ("judge-a", "gateway", "chat")


def test_an_administrator_makes_the_same_change_after_the_confirmation_page(log_in, live_server, superuser,
                                                                             newsroom, screenshots):
    page = log_in(superuser)
    open_change_page(page, live_server, "configuration", "judge-a")
    page.fill("input[name=identifier]", "judge-alpha")
    page.locator("input[name=_gavel_publish]").click()

    expect(page.locator("h1")).to_have_text("Confirm a change that affects other configurations")
    expect(page.locator(".gavel-affected")).to_have_text("desk, newsroom")
    expect(page.locator("ul.gavel-effects")).to_contain_text(
        "Configuration “newsroom” names “judge-a” as a judge: its policy would name the new identifier.")
    page.screenshot(path=str(screenshots / "administrator-confirms-rename.png"), full_page=True)
    assert Configuration.objects.filter(identifier="judge-a").exists()  # nothing saved yet

    page.get_by_role("button", name="Yes, make this change").click()
    expect(page.locator("ul.messagelist li.success")).to_contain_text("Saved and published")
    assert newsroom.judge_identifiers() == ["judge-alpha"]

    # The chain, in the picker, names the new identifier.
    open_change_page(page, live_server, "configuration", "newsroom")
    expect(page.locator(".field-rule_judges .select2-selection__rendered")).to_contain_text("judge-alpha")


def test_try_it_is_full_width_at_1280_px(log_in, live_server, superuser, desk, screenshots):
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde\nRabatt*")
    term_list.configurations.set([desk])
    page = log_in(superuser)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/admin/termlists/termlist/")
    page.get_by_role("link", name="Try it").click()  # the list page links to the box's page
    expect(page.locator("h1")).to_contain_text("Brand words")

    page.goto(f"{live_server.url}/admin/termlists/termlist/{term_list.pk}/change/")
    box = page.locator("#try-text")
    box.scroll_into_view_if_needed()
    width = box.bounding_box()["width"]
    assert width >= 600, width
    page.screenshot(path=str(screenshots / "try-it-1280.png"), full_page=True)

    box.fill("Jeder Kunde bekommt Rabatte.")
    page.get_by_role("button", name="Find terms").click()
    expect(page.locator("#try-result")).to_contain_text("Kunde")
    expect(page.locator("#try-result")).to_contain_text("Rabatte")


POLICY = """providers:
  - {name: local, kind: chat, route: ollama, trust_zone: local}
configurations:
  - {identifier: writer, provider: local, model: qwen, fallbacks: [writer-backup]}
  - {identifier: writer-backup, provider: local, model: qwen-small}
"""


def test_an_administrator_imports_a_policy_file_after_a_dry_run(log_in, live_server, superuser, screenshots):
    page = log_in(superuser)
    page.get_by_role("link", name="Import a policy file (dry run first)").click()
    page.fill("textarea[name=text]", POLICY)
    page.get_by_role("button", name="Check (dry run)").click()

    dry_run = page.locator("#policy-dry-run")
    expect(dry_run).to_contain_text("Dry run: nothing was written yet")
    expect(dry_run).to_contain_text("3 created, 0 changed, 0 removed, 0 unchanged.")
    expect(dry_run).to_contain_text("configurations:writer-backup")
    page.screenshot(path=str(screenshots / "policy-import-dry-run.png"), full_page=True)
    assert not Configuration.objects.filter(identifier="writer").exists()

    page.get_by_role("button", name="Apply this import").click()
    expect(page.locator("ul.messagelist li.success")).to_contain_text("Policy imported: 3 created")
    assert Configuration.objects.get(identifier="writer").fallback_identifiers() == ["writer-backup"]


def test_the_governance_log_fits_1280_px(log_in, live_server, superuser, screenshots):
    """English beside the open navigation; German once the navigation is folded away (docs/decisions.md)."""
    from governance.models import GovernanceEvent, UserProfile

    for decision, check in (("reported", "field"), ("blocked", "term_list"), ("not_checked", "rules_judge")):
        GovernanceEvent.objects.create(correlation_id=f"c-{decision}-0123456789", decision=decision, check_name=check,
                                       configuration="demo-writer", mode="report",
                                       detail={"list": "Demo brand words (writer)"})
    page = log_in(superuser)
    page.set_viewport_size({"width": 1280, "height": 900})
    overflow = "() => document.querySelector('#result_list').scrollWidth - document.querySelector('.results').clientWidth"
    page.goto(f"{live_server.url}/admin/governance/governanceevent/")
    page.screenshot(path=str(screenshots / "governance-log-1280-en.png"), full_page=True)
    assert page.evaluate(overflow) <= 0

    UserProfile.objects.update_or_create(user=superuser, defaults={"language": "de"})
    page.goto(f"{live_server.url}/admin/governance/governanceevent/")
    expect(page.locator("#result_list")).to_contain_text("Gestoppt")
    page.click("#toggle-nav-sidebar")
    page.screenshot(path=str(screenshots / "governance-log-1280-de.png"), full_page=True)
    assert page.evaluate(overflow) <= 0
