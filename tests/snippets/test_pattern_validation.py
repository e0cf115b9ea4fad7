"""Must show 1 of issue 9: the validator is honest. A deliberately broken rule of each fault kind is
refused by the admin form, by import_policy (with its path) and by validate_rules; a cross-hit is
reported, and fails under --strict. Also the admin's list, filters, search and history."""
import io

import pytest
import yaml
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from governance import policy
from snippets.models import PatternRule
from tests.governance.drafted import PUBLISH

pytestmark = pytest.mark.django_db

ADD = "/admin/snippets/patternrule/add/"
CHANGELIST = "/admin/snippets/patternrule/"

GOOD = {
    "identifier": "legal.no-guarantee", "statement": "Never call an outcome guaranteed.", "tags": ["legal"],
    "severity": "critical", "violation_pattern": r"(?i)\bguarantee(d|s)?\b",
    "satisfied_pattern": r"(?i)\bno guarantee\b", "wrong_samples": ["Success is guaranteed.", "Guarantees apply."],
    "correct_samples": ["We give no guarantee of success.", "Results vary."], "source": "legal 4.2",
}
# Each broken the way its fault names: (changes, field, index of the sample, message).
BROKEN = {
    "wrong_not_matched": ({"wrong_samples": ["Success is guaranteed.", "Success is certain."]},
                          "wrong_samples", 1, "wrong sample 2 is not matched"),
    "correct_flagged": ({"correct_samples": ["Guaranteed success.", "Results vary."]},
                        "correct_samples", 0, "correct sample 1 is flagged"),
    "satisfied_clears_wrong": ({"wrong_samples": ["Success is guaranteed.", "Guarantees apply.",
                                                  "No guarantee? It is guaranteed!"]},
                               "wrong_samples", 2, "the satisfied pattern clears wrong sample 3"),
}


@pytest.fixture
def admin_client(db):
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw-root-123"))
    return client


def form_data(rule: dict) -> dict:
    return {
        "identifier": rule["identifier"], "statement": rule["statement"], "tags": ", ".join(rule["tags"]),
        "severity": rule["severity"], "violation_pattern": rule["violation_pattern"] or "",
        "satisfied_pattern": rule.get("satisfied_pattern") or "", "wrong_samples": "\n".join(rule["wrong_samples"]),
        "correct_samples": "\n".join(rule["correct_samples"]), "source": rule.get("source", ""),
        "no_verdict_reason": rule.get("no_verdict_reason", ""), "is_active": "on",
    }


def broken(kind: str) -> dict:
    return {**GOOD, **BROKEN[kind][0]}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_the_admin_refuses_each_fault_naming_the_sample(admin_client, kind):
    _, field, _, message = BROKEN[kind]
    response = admin_client.post(ADD, form_data(broken(kind)))
    assert response.status_code == 200  # the form again, not a redirect
    assert response.context["adminform"].form.errors[field] == [message]
    assert not PatternRule.objects.exists()


def test_the_admin_saves_a_good_rule_samples_one_per_line_with_history(admin_client):
    response = admin_client.post(ADD, {**form_data(GOOD), **PUBLISH})
    assert response.status_code == 302, response.context["adminform"].form.errors
    rule = PatternRule.objects.get()
    assert rule.wrong_samples == GOOD["wrong_samples"] and rule.correct_samples == GOOD["correct_samples"]
    assert rule.history.count() == 1
    page = admin_client.get(f"/admin/snippets/patternrule/{rule.pk}/change/")
    assert "Success is guaranteed.\nGuarantees apply." in page.text


def test_the_admin_refuses_a_pattern_that_does_not_compile_and_a_rule_without_reason(admin_client):
    response = admin_client.post(ADD, form_data({**GOOD, "violation_pattern": "(unclosed"}))
    assert response.context["adminform"].form.errors["violation_pattern"][0].startswith(
        "Not a valid regular expression:")
    response = admin_client.post(ADD, form_data({**GOOD, "violation_pattern": "", "satisfied_pattern": "",
                                                 "wrong_samples": [], "correct_samples": []}))
    assert "no_verdict_reason" in response.context["adminform"].form.errors


def test_the_admin_lists_filters_and_searches(admin_client):
    PatternRule.objects.create(**{**GOOD})
    PatternRule.objects.create(identifier="tone.formal", statement="Address the reader formally.", tags=["tone"],
                               no_verdict_reason="Context.", is_active=False)
    page = admin_client.get(CHANGELIST).text
    assert "legal.no-guarantee" in page and "tone.formal" in page
    by_tag = admin_client.get(CHANGELIST, {"tag": "tone"}).text
    assert "tone.formal" in by_tag and "legal.no-guarantee" not in by_tag
    by_severity = admin_client.get(CHANGELIST, {"severity__exact": "critical"}).text
    assert "legal.no-guarantee" in by_severity and "tone.formal" not in by_severity
    inactive = admin_client.get(CHANGELIST, {"is_active__exact": "0"}).text
    assert "tone.formal" in inactive and "legal.no-guarantee" not in inactive
    found = admin_client.get(CHANGELIST, {"q": "formally"}).text
    assert "tone.formal" in found and "legal.no-guarantee" not in found


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_import_policy_refuses_each_fault_at_its_path(kind):
    _, field, index, message = BROKEN[kind]
    document = {"pattern_rules": [{"identifier": "tone.formal", "statement": "Be formal.",
                                   "no_verdict_reason": "Context."}, broken(kind)]}
    with pytest.raises(policy.PolicyInvalid) as caught:
        policy.import_policy(document)
    assert caught.value.errors == {f"pattern_rules[1].{field}[{index}]": [message]}
    assert not PatternRule.objects.exists()


def test_import_policy_command_prints_the_path(kind="correct_flagged"):
    err = io.StringIO()
    text = yaml.safe_dump({"pattern_rules": [broken(kind)]})
    with pytest.raises(CommandError):
        call_command("import_policy", "-", stdin=io.StringIO(text), stdout=io.StringIO(), stderr=err)
    assert err.getvalue().strip() == "pattern_rules[0].correct_samples[0]: correct sample 1 is flagged"


def test_import_refuses_a_bad_pattern_and_a_missing_reason_at_their_paths():
    document = {"pattern_rules": [
        {**GOOD, "satisfied_pattern": "[z"},
        {"identifier": "tone.formal", "statement": "Be formal.", "violation_pattern": None},
    ]}
    with pytest.raises(policy.PolicyInvalid) as caught:
        policy.import_policy(document)
    errors = caught.value.errors
    assert errors["pattern_rules[0].satisfied_pattern"][0].startswith("Not a valid regular expression:")
    assert errors["pattern_rules[1].no_verdict_reason"] == [
        "Say why no machine check exists: a rule without a violation pattern needs a reason."]


def run_validate(*args) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("validate_rules", *args, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


def table(out: str) -> dict:
    rows = {}
    for line in out.splitlines():
        label, _, value = line.rpartition("  ")
        if value.strip().isdigit() and not line.startswith(("FAULT", "CROSS-HIT")):
            rows[label.strip()] = int(value)
    return rows


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_validate_rules_reports_each_fault_and_exits_non_zero(kind):
    _, field, index, message = BROKEN[kind]
    PatternRule.objects.bulk_create([PatternRule(**broken(kind))])  # stored past validation, as an old rule
    PatternRule.objects.create(identifier="tone.formal", statement="Be formal.", no_verdict_reason="Context.")
    code, out = run_validate()
    assert code == 1
    assert f"FAULT     legal.no-guarantee.{field}[{index}]: {message}" in out.splitlines()
    assert table(out) == {"rules checked": 2, "faults": 1, "cross-hits": 0, "rules without a verdict": 1}


def test_validate_rules_reports_a_cross_hit_and_fails_only_under_strict():
    PatternRule.objects.create(**GOOD)
    PatternRule.objects.create(identifier="style.no-click-here", statement='No "click here".',
                               violation_pattern=r"(?i)\bclick here\b", wrong_samples=["Click here."],
                               correct_samples=["Read the report.", "It is guaranteed to work."])
    code, out = run_validate()
    assert code == 0
    assert "CROSS-HIT legal.no-guarantee flags correct sample 2 of style.no-click-here" in out.splitlines()
    assert table(out) == {"rules checked": 2, "faults": 0, "cross-hits": 1, "rules without a verdict": 0}
    code, _ = run_validate("--strict")
    assert code == 2


def test_validate_rules_passes_a_clean_library_even_strict():
    PatternRule.objects.create(**GOOD)
    code, out = run_validate("--strict")
    assert code == 0 and table(out)["faults"] == 0
