"""Policy examples in the admin: policy editors write them, checked like the policy file's section (SPEC §12.1)."""
import pytest
from django.contrib.auth.models import Permission

from governance import policy
from governance.models import PolicyExample
from tests.governance.test_admin import editor_client, policy_editor, superuser, superuser_client  # noqa: F401
from tests.governance.test_policy_examples import NEWS, small_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def example_editor(policy_editor):
    policy_editor.user_permissions.add(*Permission.objects.filter(
        codename__in=["add_policyexample", "change_policyexample", "view_policyexample"]))
    return policy_editor


def form(**values) -> dict:
    data = {"name": "harbour-news", "configuration": "newsroom", "also": "[]", "kind": "completion", "site": "",
            "language": "", "format": "text", "text": NEWS, "tool_calls": "[]", "expect_outcome": "allowed",
            "expect_findings": "[]", "expect_absent": "[]", "note": ""}
    data.update(values)
    return data


def test_a_policy_editor_writes_an_example_and_unknown_names_are_refused(example_editor, editor_client, provider):
    policy.import_policy(small_policy(provider))
    url = "/admin/governance/policyexample/add/"
    page = editor_client.post(url, form(configuration="nowhere", expect_absent=(
        '[{"check": "pattern_rules", "rule": "legal.nothing"}]')))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Unknown configuration: nowhere." in html and "Unknown pattern rule: legal.nothing." in html
    assert not PolicyExample.objects.filter(name="harbour-news").exists()
    page = editor_client.post(url, form(expect_absent='[{"check": "pattern_rules", "rule": "legal.no-guarantee"}]'))
    assert page.status_code == 302, page.content.decode()[:2000]
    saved = PolicyExample.objects.get(name="harbour-news")
    assert saved.expect_absent == [{"check": "pattern_rules", "rule": "legal.no-guarantee"}]


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
