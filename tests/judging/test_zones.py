"""Trust zones (SPEC §7), sentence by sentence: the pure arithmetic, then records, then the API.

A judge that may not read a text is not asked (the provider server sees no request) and the
check fails with reason `zone`.
"""
import pytest

from governance.models import Configuration, GovernanceEvent, Provider, set_links
from judging import zones
from judging.admin_warnings import configuration_warnings, zone_warnings
from judging.zones_service import judging_zone, text_zone
from snippets.models import Snippet
from tests.judging.conftest import JUDGE_MODEL, TEXT, judge_requests, set_rules, verdict

ZONES = ["local", "private_hosted", "external_eu", "external_global"]
CLASSES = ["public_content", "editor_content", "source_code", "internal_configuration", "system_diagnostics",
           "secret_adjacent"]


# --- "Zones, most trusted first … Each admits data up to a ceiling" (pure) ---
def test_zones_and_data_classes_in_their_order():
    assert list(zones.TRUST_ZONES) == ZONES
    assert list(zones.DATA_CLASSES) == CLASSES


@pytest.mark.parametrize("zone,ceiling", [
    ("local", "secret_adjacent"), ("private_hosted", "system_diagnostics"),
    ("external_eu", "internal_configuration"), ("external_global", "editor_content"),
])
def test_each_zone_admits_up_to_its_ceiling_and_nothing_above(zone, ceiling):
    top = CLASSES.index(ceiling)
    for index, data_class in enumerate(CLASSES):
        assert zones.admits(zone, [data_class]) is (index <= top), (zone, data_class)


def test_a_blank_data_class_places_no_constraint_and_an_unknown_one_is_refused():
    assert zones.admits("external_global", ["", "", "public_content"])
    assert zones.refused_data_classes("external_global", ["", "secret_adjacent", "made_up", "secret_adjacent"]) == [
        "secret_adjacent", "made_up"]


# --- "A judge never sends text to a less trusted place than where it was written" (pure) ---
@pytest.mark.parametrize("judge_zone", ZONES)
@pytest.mark.parametrize("text_zone_", ZONES)
def test_a_judge_reads_only_text_written_no_more_trusted_than_itself(judge_zone, text_zone_):
    assert zones.may_read(judge_zone, text_zone_) is (ZONES.index(judge_zone) <= ZONES.index(text_zone_))


# --- "the least trusted zone among … (an unknown zone counts as external_global)" (pure) ---
def test_the_judging_side_is_the_least_trusted_zone_it_reaches():
    assert zones.least_trusted(["local"]) == "local"
    assert zones.least_trusted(["local", "external_eu", "private_hosted"]) == "external_eu"
    assert zones.least_trusted(["local", None]) == "external_global"
    assert zones.least_trusted(["local", "somewhere"]) == "external_global"


# --- "The judged side's zone is … served_by, else the configuration's own provider; when neither is
#      known or the provider declares no zone, the text counts as written in local" (pure) ---
@pytest.mark.parametrize("served,own,expected", [
    ("external_eu", "local", "external_eu"),  # the serving provider decides
    ("local", "external_global", "local"),
    (None, "private_hosted", "private_hosted"),  # not known: the configuration's own provider
    (None, None, "local"),  # neither known
    ("", "external_global", "local"),  # the serving provider declares no zone: local, not the configuration's
    (None, "", "local"),  # the configuration's provider declares none
    ("bogus", "external_eu", "local"),
])
def test_the_judged_side(served, own, expected):
    assert zones.written_zone(served, own) == expected


# --- the same sentences over records ---
@pytest.fixture
def make_provider(db, provider_server):
    def make(name, zone, kind="chat"):
        return Provider.objects.create(name=name, kind=kind, route="openai", api_base=provider_server.base_url,
                                       api_key_env="PROVIDER_TEST_API_KEY", trust_zone=zone, timeout=5)

    return make


@pytest.fixture
def make_judge(db, make_provider, provider_key):
    def make(identifier, zone, fallbacks=(), kind="chat"):
        provider = make_provider(f"p-{identifier}", zone, kind)
        configuration = Configuration.objects.create(identifier=identifier, provider=provider, model=JUDGE_MODEL)
        set_links(configuration, "fallbacks", list(fallbacks))
        return configuration

    return make


def test_the_judging_side_counts_every_provider_its_fallbacks_reach(make_judge):
    make_judge("eu-backup", "external_eu")
    make_judge("global-backup", "external_global")
    primary = make_judge("primary", "local", fallbacks=["eu-backup"])
    assert judging_zone(primary) == "external_eu"
    set_links(primary, "fallbacks", ["eu-backup", "global-backup"])
    assert judging_zone(primary) == "external_global"
    set_links(primary, "fallbacks", [])
    assert judging_zone(primary) == "local"


def test_a_fallback_that_cannot_be_reached_does_not_count(make_judge):
    # A fallback of the other kind (saving refuses one; a provider's kind changed in the shell still
    # makes one) is never tried by the completion service.
    make_judge("decider", "external_global", kind="decision")
    primary = make_judge("primary", "private_hosted", fallbacks=["decider"])
    assert judging_zone(primary) == "private_hosted"


def test_a_judge_whose_provider_declares_no_zone_counts_as_external_global(make_judge):
    assert judging_zone(make_judge("blank", "")) == "external_global"
    make_judge("blank-backup", "")
    assert judging_zone(make_judge("primary", "local", fallbacks=["blank-backup"])) == "external_global"


def test_the_judged_side_over_records(make_provider, configuration):
    eu = make_provider("eu", "external_eu")
    blank = make_provider("blank", "")
    assert text_zone(None, configuration) == "local"  # the configuration's own provider (local)
    assert text_zone(eu, configuration) == "external_eu"
    assert text_zone(blank, configuration) == "local"
    configuration.provider = eu
    assert text_zone(None, configuration) == "external_eu"
    assert text_zone(blank, configuration) == "local"  # declared none, whatever the configuration's says
    assert text_zone(None, None) == "local"


# --- through the API: the judge is not asked; a failed check with reason `zone` ---
def screen(api, **body):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def rules_check(body):
    return next(c for c in body["checks"] if c["check"] == "rules_judge")


@pytest.fixture
def zoned(api, configuration, snippets, make_provider):
    """`newsroom` (written in its provider's zone, local) in report mode; judges set per test."""
    set_rules(configuration, "report", judges=[])
    return configuration


def use_judge(configuration, judge, mode="report", **kw):
    return set_rules(configuration, mode, judges=[judge.identifier], **kw)


def test_a_less_trusted_judge_is_not_asked_and_the_check_fails_with_reason_zone(api, zoned, make_judge,
                                                                                provider_server):
    use_judge(zoned, make_judge("far", "external_global"))
    body = screen(api)
    assert judge_requests(provider_server) == []
    assert body["outcome"] == "allowed_with_hints"
    (hint,) = body["hints"]
    assert (hint["type"], hint["reason"]) == ("not_checked", "zone")
    assert hint["message"] == "The rules of newsroom were not checked: no judge may read this text (trust zone)."
    event = GovernanceEvent.objects.get(check_name="rules_judge")
    assert event.decision == "not_checked" and event.detail["reason"] == "zone"
    assert event.detail["judges"] == [{"judge": "far", "choice": "pass", "reason": "zone"}]


def test_in_block_mode_a_zone_refusal_blocks(api, zoned, make_judge, provider_server):
    use_judge(zoned, make_judge("far", "external_eu"), mode="block")
    body = screen(api)
    assert judge_requests(provider_server) == []
    assert body["outcome"] == "blocked"
    assert body["block"]["message"] == ("The rules of newsroom could not be checked (no judge may read this text "
                                        "(trust zone)), so the text was stopped.")
    assert rules_check(body) == {"check": "rules_judge", "result": "blocked", "reason": "zone"}


def test_text_served_by_a_less_trusted_provider_may_go_to_an_equally_trusted_judge(api, zoned, make_judge,
                                                                                   make_provider, provider_server):
    use_judge(zoned, make_judge("eu-judge", "external_eu"))
    make_provider("eu-writer", "external_eu")
    provider_server.script([verdict()])
    body = screen(api, served_by="eu-writer")
    assert len(judge_requests(provider_server)) == 1
    assert body["outcome"] == "allowed"
    assert rules_check(body) == {"check": "rules_judge", "result": "passed"}


def test_served_by_wins_over_the_configuration_in_the_other_direction_too(api, zoned, make_judge,
                                                                          make_provider, provider_server):
    eu = make_provider("eu-home", "external_eu")
    zoned.provider = eu
    zoned.save()
    use_judge(zoned, make_judge("eu-judge", "external_eu"))
    provider_server.script([verdict()])
    assert screen(api)["outcome"] == "allowed"  # written in external_eu by its own provider
    assert len(judge_requests(provider_server)) == 1
    make_provider("home", "local")
    body = screen(api, served_by="home")  # served locally: an EU judge may not read it
    assert len(judge_requests(provider_server)) == 1
    assert body["hints"][0]["reason"] == "zone"


def test_a_serving_provider_without_a_zone_means_local(api, zoned, make_judge, make_provider, provider_server):
    zoned.provider = make_provider("global-home", "external_global")
    zoned.save()
    use_judge(zoned, make_judge("eu-judge", "external_eu"))
    make_provider("anonymous", "")
    body = screen(api, served_by="anonymous")
    assert judge_requests(provider_server) == []
    assert body["hints"][0]["reason"] == "zone"


def test_a_judge_whose_fallback_is_less_trusted_is_not_asked(api, zoned, make_judge, provider_server):
    make_judge("global-backup", "external_global")
    use_judge(zoned, make_judge("home-judge", "local", fallbacks=["global-backup"]))
    body = screen(api)
    assert judge_requests(provider_server) == []
    assert body["hints"][0]["reason"] == "zone"


def test_a_snippets_data_class_above_the_judges_ceiling_keeps_it_from_being_asked(api, zoned, snippets,
                                                                                   make_judge, make_provider,
                                                                                   provider_server):
    tone, _legal = snippets
    make_provider("eu-writer", "external_eu")
    use_judge(zoned, make_judge("eu-judge", "external_eu"))
    tone.data_class = "internal_configuration"  # the EU ceiling: admitted
    tone.save()
    provider_server.script([verdict()])
    assert screen(api, served_by="eu-writer")["outcome"] == "allowed"
    assert len(judge_requests(provider_server)) == 1
    tone.data_class = "system_diagnostics"  # above it
    tone.save()
    body = screen(api, served_by="eu-writer")
    assert len(judge_requests(provider_server)) == 1
    assert body["hints"][0]["reason"] == "zone"
    assert GovernanceEvent.objects.filter(decision="not_checked", detail__reason="zone").count() == 1


def test_a_data_class_outside_the_rule_set_places_no_constraint(api, zoned, make_judge, make_provider,
                                                               provider_server):
    Snippet.objects.create(identifier="secret", name="Secret", body="A line.", tags=["ops"],
                           data_class="secret_adjacent")
    make_provider("eu-writer", "external_eu")
    use_judge(zoned, make_judge("eu-judge", "external_eu"))
    provider_server.script([verdict()])
    assert screen(api, served_by="eu-writer")["outcome"] == "allowed"


def test_a_refused_judge_passes_to_the_next_one_in_the_chain(api, zoned, make_judge, provider_server):
    far = make_judge("far", "external_global")
    near = make_judge("near", "local")
    set_rules(zoned, "block", judges=[far.identifier, near.identifier])
    provider_server.script([verdict((1, "Hey buddy"))])
    body = screen(api)
    assert len(judge_requests(provider_server)) == 1
    assert body["outcome"] == "blocked"
    event = GovernanceEvent.objects.get(check_name="rules_judge")
    assert event.detail["judges"] == [{"judge": "far", "choice": "pass", "reason": "zone"},
                                      {"judge": "near", "choice": "deny", "rules": [1]}]
    assert event.detail["judge"] == "near"


# --- the admin warning ---
def test_the_admin_warns_about_judges_that_can_never_run(zoned, make_judge, snippets):
    tone, _ = snippets
    make_judge("global-backup", "external_global")
    make_judge("home", "local", fallbacks=["global-backup"])
    make_judge("eu", "external_eu")
    make_judge("fine", "local")
    set_rules(zoned, "block", judges=["home", "fine"])
    assert zone_warnings(zoned) == [
        "Judge home can never judge texts of newsroom: its zone (external_global, counting its fallbacks) is less "
        "trusted than local, where newsroom writes."]
    tone.data_class = "internal_configuration"
    tone.save()
    zoned.provider.trust_zone = "external_eu"
    zoned.provider.save()
    set_rules(zoned, "block", judges=["eu", "fine", "home"])
    # eu: written in external_eu and internal_configuration admitted there, so no warning; home: both.
    assert configuration_warnings(zoned) == [
        "Judge home can never judge texts of newsroom: its zone (external_global, counting its fallbacks) is less "
        "trusted than external_eu, where newsroom writes.",
        "Judge home can never judge the rules of newsroom: its zone (external_global, counting its fallbacks) does "
        "not admit the data class internal_configuration of snippet tone."]


def test_the_admin_warns_about_a_chain_without_judges_not_about_decision_judges(zoned, make_judge):
    # A judge that does not exist can no longer be named: chains are relations (issue 11).
    make_judge("decider", "local", kind="decision")
    set_rules(zoned, "report", judges=["decider"])
    assert configuration_warnings(zoned) == []
    set_rules(zoned, "report", judges=[])
    assert configuration_warnings(zoned) == [
        "newsroom checks rules (mode report) but names no judge, so its rules are never checked."]
    set_rules(zoned, "off", judges=[])
    assert configuration_warnings(zoned) == []


def test_no_warning_for_judges_that_can_run(zoned, make_judge):
    make_judge("fine", "local")
    set_rules(zoned, "block", judges=["fine"])
    assert configuration_warnings(zoned) == []
