"""Policy examples in the admin: policy editors write them, checked like the policy file's section (SPEC §12.1)."""
import pytest
from django.contrib.auth.models import Permission

from governance import policy
from governance.models import PolicyExample
from tests.governance.test_admin import editor_client, policy_editor, superuser, superuser_client  # noqa: F401
from tests.governance.drafted import draft_record
from tests.governance.test_policy_examples import NEWS, small_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def example_editor(policy_editor):
    policy_editor.user_permissions.add(*Permission.objects.filter(
        codename__in=["add_policyexample", "change_policyexample", "view_policyexample"]))
    return policy_editor


def rows(field: str, findings: list[tuple[str, str, str]]) -> dict:
    """The finding rows as the form posts them: (check, list/snippet/rule, term/line), plus an empty row."""
    data = {}
    for index, (check, target, detail) in enumerate([*findings, ("", "", "")]):
        data.update({f"{field}-{index}-check": check, f"{field}-{index}-target": target,
                     f"{field}-{index}-detail": detail})
    return data


def form(findings=(), absent=(), **values) -> dict:
    data = {"name": "harbour-news", "configuration": "newsroom", "kind": "completion", "site": "",
            "language": "", "format": "text", "text": NEWS, "tool_calls": "[]", "expect_outcome": "allowed",
            "note": "", **rows("expect_findings", list(findings)), **rows("expect_absent", list(absent))}
    data.update(values)
    return data


def test_a_policy_editor_writes_an_example_and_unknown_names_are_refused(example_editor, editor_client, provider):
    policy.import_policy(small_policy(provider))
    url = "/admin/governance/policyexample/add/"
    page = editor_client.post(url, form(configuration="nowhere", absent=[("pattern_rules", "legal.nothing", "")]))
    assert page.status_code == 200
    html = page.content.decode()
    # The errors name what exists (issue 27), not only what does not.
    assert "Unknown configuration: nowhere. Choose one of: newsroom." in html
    assert "Row 1: Unknown pattern rule: legal.nothing. Choose one of: legal.no-guarantee." in html
    assert not PolicyExample.objects.filter(name="harbour-news").exists()
    page = editor_client.post(url, form(absent=[("pattern_rules", "legal.no-guarantee", "")]))
    assert page.status_code == 302, page.content.decode()[:2000]
    # Into the editor's draft (SPEC §12.5), in the policy file's terms.
    saved = draft_record(example_editor, "examples", "harbour-news")
    assert saved["expect"]["absent"] == [{"check": "pattern_rules", "rule": "legal.no-guarantee"}]
    assert not PolicyExample.objects.filter(name="harbour-news").exists()


def test_editors_test_the_policy_without_a_draft_and_never_see_the_history(example_editor, editor_client, provider):
    policy.import_policy(small_policy(provider))
    page = editor_client.get("/admin/policy/test/")
    assert page.status_code == 200 and 'name="draft"' not in page.content.decode()
    page = editor_client.post("/admin/policy/test/", {"judges": "skip", "only": ""})
    assert "2 passed, 0 failed" in page.content.decode()
    assert editor_client.post("/admin/policy/test/", {"judges": "skip", "draft": "examples: []"}).status_code == 403
    assert editor_client.get("/admin/policy/history/").status_code == 403


def test_a_draft_with_errors_is_listed_on_the_test_page(superuser_client, provider):
    policy.import_policy(small_policy(provider))
    page = superuser_client.post("/admin/policy/test/", {"judges": "skip", "draft": "configurations: [{identifier: x}]"})
    html = page.content.decode()
    assert "The draft has errors; nothing was tested." in html and "configurations[0].provider" in html


# --- the form made for people (issue 27) -----------------------------------------------------


def test_the_form_offers_what_exists_and_its_help_names_only_existing_lists(example_editor, editor_client, provider):
    policy.import_policy(small_policy(provider))
    html = editor_client.get("/admin/governance/policyexample/add/").content.decode()
    assert '<select name="configuration"' in html and '<option value="newsroom">newsroom</option>' in html
    assert '<select name="kind"' in html and '<option value="queued_task">' in html
    # The finding pickers: the list, its term, the pattern rule, each an option of a select.
    assert 'name="expect_findings-0-target"' in html and 'name="expect_findings-0-detail"' in html
    assert '<option value="Brand words" data-check="term_list">' in html
    assert '<option value="Rabatt*" data-check="term_list" data-target="Brand words">' in html
    assert '<option value="legal.no-guarantee" data-check="pattern_rules">' in html
    assert "term lists Brand words; snippets —; pattern rules legal.no-guarantee" in html
    assert "raw JSON" not in html and '{"check": "term_list"' not in html


def test_picked_findings_are_stored_in_the_policy_file_shape(example_editor, editor_client, provider):
    policy.import_policy(small_policy(provider))
    url = "/admin/governance/policyexample/add/"
    refused = editor_client.post(url, form(expect_outcome="blocked", text="Jetzt mit Rabattaktion.",
                                           findings=[("term_list", "Brand words", "Skonto")]))
    assert "Row 1: Term list Brand words has no term Skonto. Its terms: Rabatt*." in refused.content.decode()
    saved = editor_client.post(url, form(expect_outcome="blocked", text="Jetzt mit Rabattaktion.",
                                         findings=[("term_list", "Brand words", "Rabatt*"), ("field", "", "")]))
    assert saved.status_code == 302, saved.content.decode()[:3000]
    record = draft_record(example_editor, "examples", "harbour-news")
    assert record["expect"]["findings"] == [{"check": "term_list", "list": "Brand words", "term": "Rabatt*"},
                                            {"check": "field"}]
    # A stored example's findings are shown again as picked rows.
    example = PolicyExample.objects.get(name="discount-word-blocked")
    html = editor_client.get(f"/admin/governance/policyexample/{example.pk}/change/").content.decode()
    assert '<option value="Rabatt*" selected data-check="term_list" data-target="Brand words">' in html
    assert '<option value="term_list" selected>' in html


def test_try_it_shows_what_the_current_policy_says_and_saves_nothing(example_editor, editor_client, provider):
    from governance.models import PolicyVersion

    policy.import_policy(small_policy(provider))
    version, count = PolicyVersion.current(), PolicyExample.objects.count()
    page = editor_client.post("/admin/governance/policyexample/add/", form(
        name="discount", text="Jetzt mit Rabattaktion für jeden Kunden.", expect_outcome="allowed",
        findings=[("term_list", "Brand words", "Rabatt*")], _try="Try it", try_judges="skip"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Outcome: blocked (expected: delivered)." in html and "The example would fail." in html
    assert '<tr class="try-found"><td><code>Brand words Rabatt* (term_list)</code>' in html
    assert "Term lists: stopped the text" in html and "No judge was asked." in html
    assert "Pattern rules: did not run (an earlier check stopped the text)" in html
    assert 'value="Jetzt mit Rabattaktion für jeden Kunden."' in html or "Jetzt mit Rabattaktion für jeden Kunden.</textarea>" in html
    assert PolicyExample.objects.count() == count and PolicyVersion.current() == version
