"""The hot path's per-process copies (issue 10): configurations and their judge and fallback links are
read once per policy version, and every edit that changes them is seen by the very next screening."""
import pytest

from governance.models import Configuration, Provider, set_links
from tests.judging.conftest import JUDGE_MODEL, TEXT, judge_requests, set_rules, verdict

pytestmark = pytest.mark.django_db


def screen(api, identifier="newsroom"):
    response = api.post("/api/v1/screenings", {"configuration": identifier, "text": TEXT}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_judge_added_to_the_chain_is_asked_by_the_next_screening(api, configuration, judge, snippets,
                                                                   provider_server):
    set_rules(configuration, "block", judges=[])
    provider_server.set_default(verdict())
    first = screen(api)
    assert judge_requests(provider_server) == []
    assert first["outcome"] == "blocked"  # rules with no judge: not checked, block mode stops

    set_links(configuration, "rule_judges", [judge])
    assert screen(api)["outcome"] == "allowed"
    assert len(judge_requests(provider_server)) == 1


def test_a_judge_removed_from_the_chain_is_not_asked_again(api, configuration, judge, snippets, provider_server):
    set_rules(configuration, "report", judges=[judge.identifier])
    provider_server.set_default(verdict())
    screen(api)
    screen(api)  # the links come from this process's copy now
    assert len(judge_requests(provider_server)) == 2

    set_links(configuration, "rule_judges", [])
    screen(api)
    assert len(judge_requests(provider_server)) == 2


def test_a_judges_model_changed_is_used_by_the_next_screening(api, configuration, judge, snippets,
                                                              provider_server):
    set_rules(configuration, "report", judges=[judge.identifier])
    provider_server.set_default(verdict())
    screen(api)
    judge.model = "other-judge-model"
    judge.save()  # bumps the policy version: the chain's copy of the judge is read again
    screen(api)
    assert [r.model for r in provider_server.chat_requests][-2:] == [JUDGE_MODEL, "other-judge-model"]


def test_a_fallback_added_is_tried_by_the_next_screening(api, configuration, judge, snippets, provider_server,
                                                         provider):
    set_rules(configuration, "report", judges=[judge.identifier])
    backup = Configuration.objects.create(identifier="backup-judge", provider=provider, model="backup-model")
    provider_server.set_default(verdict())
    screen(api)
    provider_server.script([{"status": 503, "for_model": JUDGE_MODEL}])
    set_links(judge, "fallbacks", [backup])
    result = screen(api)
    assert [r.model for r in provider_server.chat_requests][-2:] == [JUDGE_MODEL, "backup-model"]
    assert result["outcome"] == "allowed"


def test_a_configuration_renamed_is_unknown_under_its_old_name_at_once(api, configuration):
    screen(api)
    configuration.identifier = "desk"
    configuration.save()
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_configuration"
    assert screen(api, "desk")["outcome"] == "allowed"


def test_a_judges_provider_edit_is_seen_by_the_next_screening(api, configuration, judge, snippets, provider_server,
                                                               make_consumer):
    """The text is written in a zone of its own provider (`desk`'s, still local); only the judge's
    provider changes."""
    local = Provider.objects.create(name="desk-provider", route="openai", trust_zone="local")
    desk = Configuration.objects.create(identifier="desk", provider=local, model="writer")
    set_rules(desk, "report", judges=[judge.identifier])
    api.consumer.configurations.add(desk)
    provider_server.set_default(verdict())
    screen(api, "desk")
    asked = len(judge_requests(provider_server))
    # The judge's provider moves to a zone below the text's: the judge may no longer read it.
    provider = Provider.objects.get(pk=judge.provider_id)
    provider.trust_zone = "public"
    provider.save()  # bumps the policy version
    screen(api, "desk")
    assert len(judge_requests(provider_server)) == asked
