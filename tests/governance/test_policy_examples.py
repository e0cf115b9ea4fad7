"""Policy examples (SPEC §12.1) in the policy file, and policy test runs (SPEC §12.2) through the command."""
import copy
import json
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from governance import policy
from governance.models import Configuration, PolicyExample, PolicyVersion

EXAMPLE_FILE = Path("/work/shared/policy-example.yaml")

pytestmark = pytest.mark.django_db


def example_document() -> dict:
    """The normative example, judges on a reachable provider left aside (the test provider is used below)."""
    return yaml.safe_load(EXAMPLE_FILE.read_text(encoding="utf-8"))


def small_policy(provider, *, forbidden=("Rabatt*",), mode="block") -> dict:
    return {
        "configurations": [{"identifier": "newsroom", "provider": provider.name, "model": "test-model",
                            "rules": {"mode": "report", "tags": ["legal"]}}],
        "term_lists": [{"name": "Brand words", "configurations": ["newsroom"], "forbidden": list(forbidden),
                        "mode": mode}],
        "pattern_rules": [{
            "identifier": "legal.no-guarantee", "statement": "Never call an outcome guaranteed.", "tags": ["legal"],
            "violation_pattern": r"(?i)\bguarantee(d|s)?\b", "satisfied_pattern": r"(?i)\bno guarantee\b",
            "wrong_samples": ["Success is guaranteed."], "correct_samples": ["We give no guarantee of success."]}],
        "examples": [
            {"name": "discount-word-blocked", "configuration": "newsroom",
             "text": "Jetzt mit Rabattaktion für jeden Kunden der ACME.",
             "expect": {"outcome": "blocked", "findings": [{"check": "term_list", "list": "Brand words",
                                                            "term": "Rabatt*"}]}},
            {"name": "plain-news-allowed", "configuration": "newsroom",
             "text": NEWS,
             "expect": {"outcome": "allowed", "absent": [{"check": "pattern_rules", "rule": "legal.no-guarantee"}]}},
        ],
    }


# Pattern rules and judges read finished text only (30 words or more).
NEWS = ("ACME opens a new office in the harbour district on Monday. The mayor and forty guests attend the "
        "opening, and the company says it will hire twelve people from the region over the coming year.")


def run(*args) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("test_policy", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    except CommandError as exc:
        code = exc.returncode
        err.write(str(exc))
    return code, out.getvalue(), err.getvalue()


# --- the examples section --------------------------------------------------------------------


def test_policy_example_file_imports_exports_and_round_trips_with_its_examples():
    report = policy.import_policy(example_document())
    assert {"examples:discount-word-blocked", "examples:plain-news-allowed"} <= set(report.created)
    first = PolicyExample.objects.get(name="discount-word-blocked")
    assert first.expect_outcome == "blocked" and first.language == "de"
    assert first.expect_findings == [{"check": "term_list", "list": "Brand words", "term": "Rabatt*"}]
    exported = policy.export_policy()
    assert list(exported) == ["providers", "configurations", "snippets", "term_lists", "pattern_rules", "examples"]
    sample = example_document()["examples"]
    for record in exported["examples"]:
        # The example's keys, in its order, every key present.
        assert [k for k in record if k in sample[0]] == list(sample[0])
        assert list(record) == list(policy.EXAMPLE_KEYS)
        assert list(record["expect"]) == ["outcome", "findings", "absent"]
    text = policy.export_yaml()
    assert "        - {check: term_list, list: Brand words, term: Rabatt*}" in text
    again = policy.import_policy(yaml.safe_load(text))
    assert not again.has_changes
    assert policy.export_yaml() == text


def test_examples_change_no_policy_version():
    policy.import_policy({k: v for k, v in example_document().items() if k != "examples"})
    version = PolicyVersion.current()
    policy.import_policy({"examples": example_document()["examples"]})
    assert PolicyExample.objects.count() == 2
    assert PolicyVersion.current() == version


def test_unknown_names_in_an_example_are_errors_at_their_path(provider):
    document = small_policy(provider)
    bad = copy.deepcopy(document)
    bad["examples"][0].update(configuration="nowhere", also=["elsewhere"])
    bad["examples"][0]["expect"]["findings"] = [
        {"check": "term_list", "list": "No such list", "term": "x"},
        {"check": "term_list", "list": "Brand words", "term": "Skonto"},
        {"check": "rules_judge", "snippet": "ghost", "rule": 1},
        {"check": "pattern_rules", "rule": "legal.nothing"},
        {"check": "judge"},
        {"check": "term_list", "list": "Brand words", "colour": "red"},
    ]
    bad["examples"][1]["expect"] = {"outcome": "maybe"}
    del bad["examples"][1]["text"]
    with pytest.raises(policy.PolicyInvalid) as refused:
        policy.import_policy(bad)
    errors = refused.value.errors
    assert errors["examples[0].configuration"] == ["Unknown configuration: nowhere."]
    assert errors["examples[0].also[0]"] == ["Unknown configuration: elsewhere."]
    assert errors["examples[0].expect.findings[0].list"] == ["Unknown term list: No such list."]
    assert errors["examples[0].expect.findings[1].term"] == ["Term list Brand words has no term Skonto."]
    assert errors["examples[0].expect.findings[2].snippet"] == ["Unknown snippet: ghost."]
    assert errors["examples[0].expect.findings[3].rule"] == ["Unknown pattern rule: legal.nothing."]
    assert "examples[0].expect.findings[4].check" in errors
    assert errors["examples[0].expect.findings[5].colour"] == ["Unknown key."]
    assert "examples[1].expect.outcome" in errors
    assert errors["examples[1].text"] == ["An example needs a text or tool calls."]
    assert not PolicyExample.objects.exists()


def test_a_kept_example_round_trips_its_review_fields(provider):
    document = small_policy(provider)
    document["examples"][1].update(kept_by="editor", kept_at="2026-11-30T09:15:00+00:00",
                                   from_task="6f1d2c0e-4a53-4c1b-9a57-1c2f6b0d9e11")
    policy.import_policy(document)
    kept = PolicyExample.objects.get(name="plain-news-allowed")
    assert kept.kept_by == "editor" and str(kept.from_task) == "6f1d2c0e-4a53-4c1b-9a57-1c2f6b0d9e11"
    record = next(e for e in policy.export_policy()["examples"] if e["name"] == "plain-news-allowed")
    assert record["kept_at"] == "2026-11-30T09:15:00+00:00"
    assert not policy.import_policy(yaml.safe_load(policy.export_yaml())).has_changes


# --- test runs through the command -----------------------------------------------------------


def test_test_policy_passes_and_prints_both_formats(provider):
    policy.import_policy(small_policy(provider))
    code, out, _err = run("--judges", "skip")
    assert code == 0, out
    assert "discount-word-blocked" in out and "2 passed, 0 failed" in out
    assert "term_list:Brand words:Rabatt*" in out
    code, out, _err = run("--format", "json")
    assert code == 0
    data = json.loads(out)
    assert (data["passed"], data["failed"]) == (2, 0)
    row = next(r for r in data["rules"] if r["rule"] == "term_list:Brand words:Rabatt*")
    assert (row["true_positive"], row["false_positive"], row["false_negative"], row["true_negative"]) == (1, 0, 0, 1)
    assert (row["precision"], row["recall"]) == (1.0, 1.0)


def test_a_failing_example_exits_1_and_says_what_differed(provider):
    document = small_policy(provider)
    document["examples"][1]["text"] = NEWS + " Success is guaranteed."
    policy.import_policy(document)
    code, out, _err = run("--format", "json", "--judges", "skip")
    assert code == 1
    failed = next(e for e in json.loads(out)["examples"] if e["name"] == "plain-news-allowed")
    assert failed["passed"] is False
    assert failed["outcome"] == "allowed_with_hints"
    assert failed["unexpected"] == [{"check": "pattern_rules", "rule": "legal.no-guarantee"}]
    row = next(r for r in json.loads(out)["rules"] if r["rule"] == "pattern_rules:legal.no-guarantee")
    assert (row["false_positive"], row["precision"]) == (1, 0.0)


def test_errors_exit_3(provider, tmp_path):
    policy.import_policy(small_policy(provider))
    assert run("--only", "no-such-example")[0] == 3
    draft = tmp_path / "draft.yaml"
    draft.write_text("configurations: [{identifier: x}]\n", encoding="utf-8")
    code, _out, err = run("--draft", str(draft))
    assert code == 3 and "configurations[0].provider" in err


def test_a_draft_is_tested_and_nothing_is_written(provider, tmp_path):
    policy.import_policy(small_policy(provider))
    version = PolicyVersion.current()
    draft = small_policy(provider, forbidden=("Rabatt*", "harbour"))
    path = tmp_path / "draft.yaml"
    path.write_text(yaml.safe_dump(draft), encoding="utf-8")
    code, out, _err = run("--draft", str(path), "--format", "json", "--judges", "skip")
    assert code == 1
    data = json.loads(out)
    assert data["draft"] is True
    failed = next(e for e in data["examples"] if e["name"] == "plain-news-allowed")
    assert failed["outcome"] == "blocked"
    assert PolicyVersion.current() == version
    assert "harbour" not in Configuration.objects.get().term_lists.get().forbidden
    # The current policy is read again afterwards, not the draft's cached copies.
    assert run("--judges", "skip")[0] == 0
