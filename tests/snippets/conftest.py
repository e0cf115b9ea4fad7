"""Fixtures for pattern rules: the example's rules, a configuration checking them, finished texts."""
import pytest

# Thirty-odd words that break no rule below: appended so a text counts as finished (SPEC §3).
FILLER = (
    "The council met on Tuesday to discuss the new bus timetable, the repairs to the old bridge, "
    "the library's opening hours and the plans for a small park beside the river near the school."
)


def finished(sentence: str) -> str:
    return f"{sentence} {FILLER}"


@pytest.fixture
def rules(db):
    """The rules of policy-example.yaml: one plain, one with a satisfied pattern, one without a pattern."""
    from snippets.models import PatternRule

    return {
        "click": PatternRule.objects.create(
            identifier="style.no-click-here", statement='Link text never says "click here".', tags=["house-style"],
            violation_pattern=r"(?i)\bclick here\b", wrong_samples=["For details, click here."],
            correct_samples=["Read the full report on our site."], source="https://www.w3.org/QA/Tips/noClickHere"),
        "guarantee": PatternRule.objects.create(
            identifier="legal.no-guarantee", statement="Never call an outcome guaranteed.", tags=["legal"],
            severity="critical", violation_pattern=r"(?i)\bguarantee(d|s)?\b",
            satisfied_pattern=r"(?i)\bno guarantee\b", wrong_samples=["Success is guaranteed."],
            correct_samples=["We give no guarantee of success.", "Results vary."]),
        "formal": PatternRule.objects.create(
            identifier="tone.formal-address", statement="Address the reader formally.", tags=["legal"],
            no_verdict_reason="Formality depends on context a pattern cannot see."),
    }


def set_mode(configuration, mode, tags=("house-style", "legal"), default="block"):
    configuration.rule_mode = mode
    configuration.rule_tags = list(tags)
    configuration.rule_default = default
    configuration.save()
    return configuration


def screen(api, text, **body):
    body.setdefault("configuration", "newsroom")
    response = api.post("/api/v1/screenings", {"text": text, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def check_of(body, name):
    return next(c for c in body["checks"] if c["check"] == name)
