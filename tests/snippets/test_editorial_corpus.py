"""The editorial starter corpus (policies/editorial-starter.yaml, docs/editorial-corpus.md) is a
policy file that imports, passes `validate_rules --strict` with no cross-hit, and whose every rule
is complete: samples both ways, a source, a reason where there is no pattern."""
import io
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command

from snippets.models import PatternRule
from tests.snippets.test_pattern_validation import run_validate, table

CORPUS = Path(settings.BASE_DIR) / "policies" / "editorial-starter.yaml"
DOCS = Path(settings.BASE_DIR) / "docs" / "editorial-corpus.md"


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    document = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    assert list(document) == ["pattern_rules"], "the corpus file holds pattern rules only"
    return document["pattern_rules"]


def test_every_rule_has_two_samples_each_way_a_source_and_a_language(corpus):
    identifiers = [rule["identifier"] for rule in corpus]
    assert len(identifiers) == len(set(identifiers))
    for rule in corpus:
        name = rule["identifier"]
        assert name.startswith("editorial."), name
        assert len(rule["wrong_samples"]) >= 2 and len(rule["correct_samples"]) >= 2, name
        assert rule.get("source", "").strip(), name
        assert "editorial" in rule["tags"] and {"en", "de"} & set(rule["tags"]), name
    with_pattern = [rule for rule in corpus if rule.get("violation_pattern")]
    without = [rule for rule in corpus if not rule.get("violation_pattern")]
    assert len(with_pattern) >= 30
    assert len(without) >= 5
    assert all(rule.get("no_verdict_reason", "").strip() for rule in without)
    # Both languages are served by machine checks, not only by the rules a pattern cannot decide.
    for language in ("en", "de"):
        assert sum(language in rule["tags"] for rule in with_pattern) >= 10, language


@pytest.mark.django_db
def test_the_corpus_imports_idempotently_and_passes_validate_rules_strict(corpus):
    out = io.StringIO()
    call_command("import_policy", str(CORPUS), stdout=out)
    assert f"{len(corpus)} created, 0 changed" in out.getvalue()
    assert set(PatternRule.objects.values_list("identifier", flat=True)) == {r["identifier"] for r in corpus}

    code, out = run_validate("--strict")
    assert code == 0, out
    assert table(out) == {
        "rules checked": len(corpus),
        "faults": 0,
        "cross-hits": 0,
        "rules without a verdict": sum(not rule.get("violation_pattern") for rule in corpus),
    }

    again = io.StringIO()
    call_command("import_policy", str(CORPUS), stdout=again)
    assert f"0 created, 0 changed, 0 removed, {len(corpus)} unchanged." in again.getvalue()


@pytest.mark.django_db
def test_a_sample_that_collides_with_the_corpus_fails_strict(corpus):
    """The strict run above could fail: a correct sample another corpus rule flags is a cross-hit."""
    call_command("import_policy", str(CORPUS), stdout=io.StringIO())
    click_here = next(rule for rule in corpus if rule["identifier"] == "editorial.click-here")
    PatternRule.objects.create(
        identifier="house.colliding", statement="A rule whose correct sample says click here.",
        no_verdict_reason="Only its samples matter here.",
        wrong_samples=["x", "y"], correct_samples=["Fine.", click_here["wrong_samples"][0]],
    )
    code, out = run_validate("--strict")
    assert code == 2
    assert "CROSS-HIT editorial.click-here flags correct sample 2 of house.colliding" in out.splitlines()
    assert table(out)["cross-hits"] == 1


def test_the_docs_name_every_rule(corpus):
    docs = DOCS.read_text(encoding="utf-8")
    missing = [r["identifier"] for r in corpus if f"`{r['identifier'].removeprefix('editorial.')}`" not in docs]
    assert not missing, f"docs/editorial-corpus.md does not list {missing}"
