"""The policy file shipped in the repository (policies/example.yaml, explained in docs/policy.md)
imports as it is, and shows every key the format has: whatever an export writes, the example holds."""
from pathlib import Path

import pytest
import yaml
from django.conf import settings

from governance import policy

pytestmark = pytest.mark.django_db

EXAMPLE = Path(settings.BASE_DIR) / "policies" / "example.yaml"


def keys(value, prefix=""):
    """Every key path of a record: `budget.daily_cost`, `rules.mode`, …"""
    found = set()
    for key, item in value.items():
        found.add(prefix + key)
        if isinstance(item, dict):
            found |= keys(item, f"{prefix}{key}.")
    return found


def test_the_shipped_example_imports_and_exports_every_key_it_shows():
    document = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    report = policy.import_policy(document)
    assert report.created and not report.changed
    assert policy.import_policy(document).changed == []  # idempotent
    exported = policy.export_policy()
    assert list(document) == [section for section in exported if exported[section]]
    for section, records in exported.items():
        if not records:
            continue
        shown = set().union(*(keys(record) for record in document[section]))
        assert keys(records[0]) <= shown, section  # no key of the format is missing from the example


def test_the_policy_reference_names_every_section_and_the_example():
    reference = (Path(settings.BASE_DIR) / "docs" / "policy.md").read_text(encoding="utf-8")
    assert "policies/example.yaml" in reference
    for section in yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")):
        assert f"`{section}`" in reference
