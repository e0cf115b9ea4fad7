"""Issue 41: one source for the policy document's structure. governance/policy/schema.py is the import's first
check, the OpenAPI component of the operations that take a document, the schema served at
/api/v1/policy/schema.json and the file an editor's YAML language server reads (policies/policy.schema.json).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from governance.policy import schema as policy_schema
from governance.policy.format import SECTIONS

ROOT = Path(__file__).resolve().parent.parent.parent
SHARED_EXAMPLE = Path("/work/shared/policy-example.yaml")
POLICY_FILES = sorted((ROOT / "policies").glob("*.yaml")) + ([SHARED_EXAMPLE] if SHARED_EXAMPLE.exists() else [])
CHECKED_IN = ROOT / "policies" / "policy.schema.json"


def validator():
    return policy_schema.validator()  # the import's own


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(policy_schema.schema())


@pytest.mark.parametrize("path", POLICY_FILES, ids=lambda p: p.name)
def test_the_schema_validates_every_policy_file(path):
    document = yaml.safe_load(path.read_text())
    assert [e.message for e in validator().iter_errors(document)] == []


def test_the_policy_files_name_the_schema_for_editors():
    for path in sorted((ROOT / "policies").glob("*.yaml")):
        assert path.read_text().splitlines()[0] == "# yaml-language-server: $schema=policy.schema.json", path


def test_the_checked_in_schema_is_the_source():
    """policies/policy.schema.json is written by `manage.py policy_schema`; a change to the source shows here."""
    assert json.loads(CHECKED_IN.read_text()) == policy_schema.published(), \
        "run: .venv/bin/python manage.py policy_schema > policies/policy.schema.json"


def test_each_section_and_record_key_is_the_readers():
    schema = policy_schema.schema()
    assert tuple(schema["properties"]) == SECTIONS
    for name, keys in policy_schema.KEY_LISTS.items():
        section, _, member = name.partition(".")
        node = schema["properties"][section]["items"]
        if member:
            node = node["properties"][member]
        assert tuple(node["properties"]) == keys, name


def _check_jsonschema() -> list[str] | None:
    found = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))
    return [found] if Path(found).exists() else None


def test_check_jsonschema_reads_the_policy_files_with_the_schema(tmp_path):
    """What an editor's YAML language server does with the `$schema` line, from the command line."""
    command = _check_jsonschema()
    if command is None:
        pytest.skip("check-jsonschema is not installed (requirements-dev.txt)")
    files = [str(p) for p in POLICY_FILES]
    good = subprocess.run([*command, "--schemafile", str(CHECKED_IN), *files], capture_output=True, text=True,
                          timeout=120, env={**os.environ})
    assert good.returncode == 0, good.stdout + good.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("providers:\n  - name: ''\n    route: openai\n")
    bad = subprocess.run([*command, "--schemafile", str(CHECKED_IN), str(broken)], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1 and "providers" in bad.stdout + bad.stderr, bad.stdout + bad.stderr


# --- the import: what the schema refuses it refuses, at the path; what it allows it reads ---

@pytest.mark.django_db
@pytest.mark.parametrize("document, path", [
    ({"providers": [{"name": "", "route": "openai"}]}, "providers[0].name"),
    ({"providers": [{"name": None, "route": "openai"}]}, "providers[0].name"),
    ({"term_lists": [{"name": None, "configurations": ["x"]}]}, "term_lists[0].name"),
    ({"term_lists": [{"name": " ", "configurations": ["x"]}]}, "term_lists[0].name"),
    ({"examples": [{"name": "", "configuration": "x", "text": "t", "expect": {"outcome": "allowed"}}]},
     "examples[0].name"),
    ({"snippets": [{"identifier": "a", "name": None}]}, "snippets[0].name"),
    ({"configurations": [{"identifier": "a", "provider": "p", "model": "m", "fallbacks": ["b", "b"]}]},
     "configurations[0].fallbacks"),
    ({"examples": [{"name": "e", "configuration": "x", "text": "t",
                    "expect": {"outcome": "allowed", "absent": [{"check": {}}]}}]}, "examples[0].expect.absent[0]"),
    ({"providers": [{"name": "p", "route": "openai", "api_base": "not a url"}]}, "providers[0].api_base"),
    ({"snippets": [{"identifier": "a", "name": "x\u0000"}]}, "snippets[0].name"),
    ({"examples": [{"name": "e", "configuration": "x", "text": "t", "from_task": "not-a-uuid",
                    "expect": {"outcome": "allowed"}}]}, "examples[0].from_task"),
])
def test_what_the_schema_refuses_the_import_refuses_at_its_path(document, path):
    from governance.policy import PolicyInvalid, import_policy

    assert not validator().is_valid(document)
    with pytest.raises(PolicyInvalid) as refused:
        import_policy(document, dry_run=True)
    assert refused.value.structural
    assert any(p == path or p.startswith((f"{path}.", f"{path}[")) for p in refused.value.errors), \
        refused.value.errors


@pytest.mark.django_db
def test_a_schema_valid_document_with_a_reference_to_nothing_is_refused_as_such():
    from governance.policy import PolicyInvalid, import_policy

    document = {"configurations": [{"identifier": "a", "provider": "nowhere", "model": "m"}]}
    assert validator().is_valid(document)
    with pytest.raises(PolicyInvalid) as refused:
        import_policy(document, dry_run=True)
    assert not refused.value.structural
    assert list(refused.value.errors) == ["configurations[0].provider"]


# --- over the API ---

@pytest.fixture
def admin_api(make_consumer):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_consumer('ops', is_admin=True)[1]}")
    return client


@pytest.mark.django_db
def test_the_schema_is_served_without_a_token(client):
    answer = client.get("/api/v1/policy/schema.json")
    assert answer.status_code == 200
    served = answer.json()
    assert served["$id"] == "http://testserver/api/v1/policy/schema.json"
    assert {k: v for k, v in served.items() if k != "$id"} == \
        {k: v for k, v in policy_schema.schema().items() if k != "$id"}


@pytest.mark.django_db
def test_the_openapi_component_is_the_policy_schema(client):
    document = client.get("/api/v1/schema/?format=json").json()
    put = document["paths"]["/api/v1/policy"]["put"]
    body = put["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["providers"]["items"]["properties"]["name"]["pattern"] == policy_schema.SLUG
    assert "422" in put["responses"] and "400" in put["responses"]
    for path in ("/api/v1/policy/test", "/api/v1/policy/drafts"):
        assert "422" in document["paths"][path]["post"]["responses"], path


@pytest.mark.django_db
def test_put_policy_answers_400_for_structure_and_422_for_a_reference_to_nothing(admin_api):
    structure = admin_api.put("/api/v1/policy", {"providers": [{"name": "", "route": "openai"}]}, format="json")
    assert structure.status_code == 400, structure.content
    assert "providers[0].name" in structure.json()["error"]["fields"]
    reference = admin_api.put("/api/v1/policy", {"configurations": [
        {"identifier": "a", "provider": "nowhere", "model": "m"}]}, format="json")
    assert reference.status_code == 422, reference.content
    assert reference.json()["error"]["code"] == "invalid_policy"
    assert list(reference.json()["error"]["fields"]) == ["configurations[0].provider"]


@pytest.mark.django_db
def test_a_yaml_draft_is_refused_with_422_since_no_schema_says_what_a_text_holds(admin_api):
    unparsable = admin_api.post("/api/v1/policy/test", {"draft": "\x8a"}, format="json")
    assert unparsable.status_code == 422, unparsable.content
    broken = admin_api.post("/api/v1/policy/drafts", {"title": "t", "document": "providers: [{name: ''}]"},
                            format="json")
    assert broken.status_code == 422, broken.content
    null = admin_api.post("/api/v1/policy/drafts", {"title": "t", "document": None}, format="json")
    assert null.status_code == 400, null.content
