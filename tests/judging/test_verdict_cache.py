"""The verdict cache (SPEC §12.4): judges in a policy test go through litellm to the test provider once;
the same test again asks none; one changed rule line asks again. Live screenings only when allowed."""
import pytest
from django.core.cache import caches

from governance.models import PolicyExample
from governance.policy import release
from governance.policy.testing import screen_example
from judging import cache as verdict_cache
from judging.rulesets import rule_set_for
from tests.judging.conftest import RULE_LINES, TEXT, UNIQUE_WORDS, judge_requests, verdict

pytestmark = pytest.mark.django_db

PASSAGE = "we ship your order tomorrow"


@pytest.fixture
def example(ruled):
    return PolicyExample.objects.create(
        name="promise-reported", configuration="newsroom", text=TEXT, expect_outcome="allowed_with_hints",
        expect_findings=[{"check": "rules_judge", "snippet": "tone", "rule": 3}])


def test_second_run_is_served_from_the_cache_and_a_changed_rule_line_asks_again(example, snippets, provider_server):
    provider_server.set_default(verdict((2, PASSAGE)))
    first = release.test_policy()
    assert first.ok, first.as_dict()
    assert first.judges == {"calls": 1, "cache_hits": 0, "cost": first.judges["cost"]}
    assert first.judges["cost"] > 0  # the provider's prices apply to the judge call
    assert len(judge_requests(provider_server)) == 1  # through litellm, to the local test provider

    second = release.test_policy()
    assert second.ok
    assert (second.judges["calls"], second.judges["cache_hits"]) == (0, 1)
    assert len(judge_requests(provider_server)) == 1
    # The finding rebuilt from the cache points at the same passage of the text.
    assert second.result_of("promise-reported").found == [{"check": "rules_judge", "snippet": "tone", "rule": 3}]

    tone, legal = snippets
    legal.body = "Do not call a product free of charge."
    legal.save()
    third = release.test_policy()
    assert (third.judges["calls"], third.judges["cache_hits"]) == (1, 0)
    assert len(judge_requests(provider_server)) == 2


def test_live_judges_mode_asks_again_and_skip_asks_none(example, provider_server):
    provider_server.set_default(verdict((2, PASSAGE)))
    release.test_policy()
    assert release.test_policy(judges="live").judges["calls"] == 1
    skipped = release.test_policy(judges="skip")
    assert skipped.judges["calls"] == 0 and skipped.ok
    assert skipped.result_of("promise-reported").not_checked == [{"check": "rules_judge", "snippet": "tone", "rule": 3}]
    assert len(judge_requests(provider_server)) == 2


def test_a_cached_verdict_is_marked_in_checks_and_events_and_the_cache_holds_no_text(example, judge, provider_server):
    provider_server.set_default(verdict((2, PASSAGE)))
    screen_example(example, "cached")
    screening = screen_example(example, "cached")
    check = next(c for c in screening.checks if c["check"] == "rules_judge")
    assert check == {"check": "rules_judge", "result": "reported", "cached": True}
    event = next(e for e in screening.events if e["check_name"] == "rules_judge")
    assert event["detail"]["judges"] == [{"judge": "judge", "choice": "deny", "rules": [2], "cached": True}]
    key = verdict_cache.key_for(judge, rule_set_for(example_configuration(example)), TEXT, 0.9)
    stored = repr(caches["verdicts"].get(key))
    assert "deny" in stored
    assert not any(word in stored for word in [*UNIQUE_WORDS, PASSAGE])


def example_configuration(example):
    from governance.models import Configuration

    return Configuration.objects.get(identifier=example.configuration)


def test_live_screenings_reuse_verdicts_only_when_the_configuration_allows(api, ruled, provider_server):
    provider_server.set_default(verdict((2, PASSAGE)))
    for _ in range(2):
        body = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json").json()
        assert body["outcome"] == "allowed_with_hints"
        assert "cached" not in next(c for c in body["checks"] if c["check"] == "rules_judge")
    assert len(judge_requests(provider_server)) == 2
    ruled.judge_cache_seconds = 300
    ruled.save()
    first = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json").json()
    second = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json").json()
    assert len(judge_requests(provider_server)) == 3
    assert next(c for c in second["checks"] if c["check"] == "rules_judge")["cached"] is True
    assert second["hints"][0]["rule"]["line"] == RULE_LINES[1]
    assert second["hints"][0]["passage"] == PASSAGE == first["hints"][0]["passage"]
