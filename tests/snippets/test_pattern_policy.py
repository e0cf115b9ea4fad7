"""The policy file's pattern_rules section (SPEC §11.2): exactly as policy-example.yaml shows it."""
import copy

import pytest
import yaml

from governance import policy
from governance.models import PolicyVersion
from snippets.models import PatternRule
from tests.governance.test_policy import EXAMPLE_YAML

pytestmark = pytest.mark.django_db


def rules_only() -> dict:
    return {"pattern_rules": yaml.safe_load(EXAMPLE_YAML)["pattern_rules"]}


def test_the_example_imports_with_defaults_for_keys_left_out():
    policy.import_policy(rules_only())
    guarantee = PatternRule.objects.get(identifier="legal.no-guarantee")
    assert guarantee.severity == "critical" and guarantee.is_active  # is_active left out: default true
    assert guarantee.satisfied_pattern == r"(?i)\bno guarantee\b"
    assert guarantee.correct_samples == ["We give no guarantee of success.", "Results vary."]
    formal = PatternRule.objects.get(identifier="tone.formal-address")
    assert formal.violation_pattern == "" and formal.source == ""
    assert formal.no_verdict_reason.startswith("Formality depends on context")


def test_export_writes_every_key_in_the_examples_order_and_round_trips():
    policy.import_policy(rules_only())
    exported = policy.export_policy()["pattern_rules"]
    assert [r["identifier"] for r in exported] == ["legal.no-guarantee", "style.no-click-here", "tone.formal-address"]
    for record in exported:
        assert tuple(record) == policy.PATTERN_RULE_KEYS
    click = exported[1]
    assert click == {**yaml.safe_load(EXAMPLE_YAML)["pattern_rules"][0], "no_verdict_reason": None}
    version = PolicyVersion.current()
    report = policy.import_policy({"pattern_rules": copy.deepcopy(exported)})
    assert not report.has_changes and PolicyVersion.current() == version
    # Through YAML too: what export_policy writes, import reads back without a change.
    again = yaml.safe_load(policy.export_yaml())
    assert not policy.import_policy(again).has_changes


def test_a_change_is_reported_by_key_and_prune_removes_what_the_file_no_longer_names():
    policy.import_policy(rules_only())
    document = rules_only()
    document["pattern_rules"][0]["statement"] = "Link text never reads “click here”."
    del document["pattern_rules"][2]
    report = policy.import_policy(document, prune=True)
    assert report.changed_keys == {"pattern_rules:style.no-click-here": ["statement"]}
    assert report.removed == ["pattern_rules:tone.formal-address"]
    assert set(PatternRule.objects.values_list("identifier", flat=True)) == {
        "style.no-click-here", "legal.no-guarantee"}
    assert PatternRule.objects.get(identifier="style.no-click-here").history.count() == 2


def test_bad_values_are_reported_at_their_paths():
    document = rules_only()
    document["pattern_rules"][0]["severity"] = "urgent"
    document["pattern_rules"][0]["wrong_samples"] = ["ok", 7]
    document["pattern_rules"][1]["identifier"] = "no spaces allowed"
    document["pattern_rules"][2]["colour"] = "blue"
    with pytest.raises(policy.PolicyInvalid) as caught:
        policy.import_policy(document)
    errors = caught.value.errors
    assert errors["pattern_rules[0].severity"] == ["Choose one of: critical, normal."]
    assert errors["pattern_rules[0].wrong_samples[1]"] == [str(policy.MSG_NOT_STRING)]
    assert "pattern_rules[1].identifier" in errors
    assert errors["pattern_rules[2].colour"] == [str(policy.MSG_UNKNOWN_KEY)]
    assert not PatternRule.objects.exists()
