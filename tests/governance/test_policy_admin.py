"""Policy import and export in the admin (issue 11, SPEC §1): administrators only; a dry run, then apply."""
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from governance import policy
from governance.models import Configuration, Provider
from tests.governance.test_admin import (  # noqa: F401  (fixtures)
    desk, editor_client, gateway, judges, policy_editor, superuser, superuser_client,
)

IMPORT = reverse("gavel_policy_import")
EXPORT = reverse("gavel_policy_export")

DOCUMENT = """
providers:
  - {name: local, kind: chat, route: ollama, trust_zone: local}
configurations:
  - identifier: writer
    provider: local
    model: qwen
    fallbacks: [writer-backup]
  - {identifier: writer-backup, provider: local, model: qwen-small}
"""


def test_export_downloads_the_policy_as_yaml(superuser_client, desk):
    response = superuser_client.get(EXPORT)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/yaml")
    assert response["Content-Disposition"].startswith('attachment; filename="gavel-policy-')
    document = yaml.safe_load(response.content)
    assert document == policy.export_policy()


def test_import_shows_the_dry_run_then_applies_on_confirmation(superuser_client, db):
    dry = superuser_client.post(IMPORT, {"text": DOCUMENT})
    assert dry.status_code == 200
    html = dry.content.decode()
    assert "Dry run: nothing was written yet" in html
    assert "3 created, 0 changed, 0 removed, 0 unchanged." in html
    assert "providers:local" in html and "configurations:writer-backup" in html
    assert not Provider.objects.filter(name="local").exists()

    applied = superuser_client.post(IMPORT, {"text": dry.context["form"].cleaned_data["text"], "_apply": "Apply"},
                                    follow=True)
    assert "Policy imported: 3 created, 0 changed, 0 removed, 0 unchanged." in applied.content.decode()
    assert Configuration.objects.get(identifier="writer").fallback_identifiers() == ["writer-backup"]


def test_an_uploaded_file_works_like_a_pasted_one(superuser_client, db):
    upload = SimpleUploadedFile("policy.yaml", DOCUMENT.encode(), content_type="application/yaml")
    response = superuser_client.post(IMPORT, {"upload": upload})
    assert "3 created" in response.content.decode()


def test_every_error_is_shown_with_its_path_and_nothing_is_written(superuser_client, db):
    broken = DOCUMENT.replace("fallbacks: [writer-backup]", "fallbacks: [ghost]").replace("route: ollama, ", "")
    response = superuser_client.post(IMPORT, {"text": broken, "_apply": "Apply"})
    html = response.content.decode()
    assert "The document has 2 errors; nothing was written." in html
    assert "<code>providers[0].route</code>" in html
    assert "<code>configurations[0].fallbacks[0]</code>" in html
    assert not Configuration.objects.exists()


def test_a_document_that_is_no_yaml_is_a_field_error(superuser_client, db):
    response = superuser_client.post(IMPORT, {"text": "providers: [unclosed"})
    assert response.context["form"].errors["text"][0].startswith("The document does not parse as YAML")


def test_a_policy_editor_gets_the_admin_403_naming_why(editor_client, db):
    for url in (IMPORT, EXPORT):
        response = editor_client.get(url)
        assert response.status_code == 403
        assert "Only an administrator (superuser) may import or export the policy file" in response.content.decode()


def test_the_admin_home_links_the_policy_file_for_administrators_only(superuser_client, editor_client):
    assert IMPORT in superuser_client.get(reverse("admin:index")).content.decode()
    assert IMPORT not in editor_client.get(reverse("admin:index")).content.decode()


def test_a_refused_apply_reshows_the_same_replay_with_full_task_ids(superuser_client, provider):
    """Issue 27: after the gate refused an apply, the report said 0 texts screened one click after it listed
    the texts that change; the refused report is the dry run's report, ids whole and linked."""
    import copy

    from governance.models import PolicyVersion
    from tests.governance.test_policy_examples import small_policy
    from tests.governance.test_policy_release import make_tasks

    current = small_policy(provider)
    policy.import_policy(current)
    tasks = make_tasks(8, {1, 5})
    # "harbour" is in every replayed text and in the passing example plain-news-allowed: a regression.
    draft = copy.deepcopy(current)
    draft["term_lists"][0]["forbidden"].append("harbour")
    text = yaml.safe_dump(draft, allow_unicode=True)
    version = PolicyVersion.current()

    dry = superuser_client.post(IMPORT, {"text": text}).content.decode()
    refused = superuser_client.post(IMPORT, {"text": text, "_apply": "Apply"}).content.decode()
    assert PolicyVersion.current() == version
    assert "The draft makes 1 passing example(s) fail: plain-news-allowed." in refused
    for html in (dry, refused):
        assert "8 retained texts screened under both policies" in html
        assert "delivered → blocked (8)" in html
        for task in tasks:
            assert f'href="{reverse("review:task", args=[task.pk])}"><code>{task.pk}</code></a>' in html
    assert "Apply although passing examples would fail" in refused
