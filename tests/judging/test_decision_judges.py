"""Decision judges end to end (SPEC §6.2, §6.4, §6.7), through POST /api/v1/screenings against the
local provider server, which answers System One requests as a decision model would.

What the decision model received is read back from the server's request log.
"""
import json
import math

import pytest

from governance.models import Configuration, GovernanceEvent, Provider
from judging.decisions import CRITERIA
from tests.judging.conftest import JUDGE_MODEL, RULE_LINES, TEXT, UNIQUE_WORDS, set_rules, verdict

pytestmark = pytest.mark.django_db

DECIDER_MODEL = "decider-model"
NO_PASSAGE_2 = f"Rule 2 (“{RULE_LINES[1]}”, snippet tone) is violated; the judge names no passage."


@pytest.fixture
def decision_provider(db, provider_server):
    return Provider.objects.create(
        name="decisions-test", kind="decision", route="hosted_vllm", api_base=provider_server.base_url,
        api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=5, price_per_mtok_in=1, price_per_mtok_out=2,
    )


@pytest.fixture
def decider(decision_provider):
    return Configuration.objects.create(identifier="decider", provider=decision_provider, model=DECIDER_MODEL)


@pytest.fixture
def decided(configuration, decider, snippets):
    """`newsroom` checking the three `style` rules with the decision judge alone, in block mode."""
    return set_rules(configuration, "block", judges=["decider"])


def choice(option, confidence=0.97, probabilities=None):
    if probabilities is None:
        rest = round((1 - confidence) / 2, 6)
        probabilities = {"allow": rest, "deny": rest, "pass": rest}
        probabilities[option] = confidence
    return {"type": "choice", "choice": option, "confidence": confidence, "probabilities": probabilities}


def decision(*answers, **extra):
    """A scripted System One answer: one answer per rule, in rule order (None leaves a rule unanswered)."""
    given = {f"rule_{n}": a for n, a in enumerate(answers, 1) if a is not None}
    return {"for_model": DECIDER_MODEL, "decision": {"answers": given}, **extra}


def screen(client, text=TEXT):
    response = client.post("/api/v1/screenings", {"configuration": "newsroom", "text": text}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def rules_check(body):
    return next(c for c in body["checks"] if c["check"] == "rules_judge")


def judge_event():
    (event,) = GovernanceEvent.objects.filter(check_name="rules_judge")
    return event


def decider_requests(server):
    return [r for r in server.decision_requests if r.model == DECIDER_MODEL]


# --- the request: one per text, one choice question per rule, the text as data in the state ---
@pytest.mark.parametrize("route,base,path", [
    ("hosted_vllm", "{base_url}", "/v1/systemone"),  # an independent DecisionsApi service, by its base URL
    ("typesafe", "{url}", "/v1/systemone"),  # a hosted System One provider, its base URL overridden
    ("openrouter", "{url}/api", "/api/alpha/decisions"),
])
def test_the_exact_request_the_decision_model_receives(api, decided, decision_provider, provider_server, route,
                                                       base, path):
    decision_provider.route = route
    decision_provider.api_base = base.format(base_url=provider_server.base_url, url=provider_server.url)
    decision_provider.save()
    provider_server.script([decision(choice("allow"), choice("allow"), choice("allow"))])

    body = screen(api)

    assert body["outcome"] == "allowed"
    assert rules_check(body) == {"check": "rules_judge", "result": "passed"}
    (request,) = provider_server.requests  # one request for the whole text, nothing else asked
    assert request.path == path
    assert request.headers["authorization"] == "Bearer test-key-not-secret"
    assert request.body == {
        "model": DECIDER_MODEL,
        "state": {"text_under_review": TEXT},
        "questions": {
            f"rule_{n}": {"type": "choice", "instructions": line, "criteria": CRITERIA}
            for n, line in enumerate(RULE_LINES, 1)
        },
    }
    assert set(CRITERIA) == {"allow", "deny", "pass"}


def test_the_decision_call_counts_usage_and_cost_on_the_judging_configuration(api, decided, decider,
                                                                             provider_server):
    from governance.models import UsageDay

    provider_server.script([decision(choice("allow"), choice("allow"), choice("allow"),
                                     usage={"input_tokens": 300, "output_tokens": 3})])
    screen(api)
    usage = UsageDay.objects.get(configuration=decider)
    assert (usage.requests, usage.tokens) == (1, 303)
    assert float(usage.cost) == pytest.approx((300 * 1 + 3 * 2) / 1_000_000)


# --- a deny blocks, naming the rule and no passage ---
def test_a_deny_blocks_naming_the_rule_and_no_passage(api, decided, provider_server):
    provider_server.script([decision(choice("allow"), choice("deny", 0.96), choice("allow"))])

    body = screen(api)

    assert body["outcome"] == "blocked" and "text" not in body
    assert body["block"] == {"check": "rules_judge", "message": NO_PASSAGE_2, "stored_message": NO_PASSAGE_2}
    assert rules_check(body) == {"check": "rules_judge", "result": "blocked"}
    event = judge_event()
    assert (event.decision, event.mode) == ("blocked", "block")
    # The audit keeps the option and the confidence of every question; never the text.
    assert event.detail["judges"] == [{
        "judge": "decider", "choice": "deny", "rules": [2],
        "answers": [{"rule": 1, "choice": "allow", "confidence": 0.97},
                    {"rule": 2, "choice": "deny", "confidence": 0.96},
                    {"rule": 3, "choice": "allow", "confidence": 0.97}],
    }]
    assert event.detail["rules"] == [{"number": 2, "line": RULE_LINES[1], "snippet": "tone", "line_no": 3}]
    assert not any(word in json.dumps(event.detail) for word in UNIQUE_WORDS)


def test_in_report_mode_a_deny_is_a_hint_without_passage(api, decided, provider_server):
    set_rules(decided, "report")
    provider_server.script([decision(choice("allow"), choice("deny"), choice("deny"))])

    body = screen(api)

    assert body["outcome"] == "allowed_with_hints" and body["text"] == TEXT
    assert [(h["rule"]["number"], h["passage"], h["start"], h["end"]) for h in body["hints"]] == [
        (2, None, None, None), (3, None, None, None)]
    assert body["hints"][0]["message"] == NO_PASSAGE_2
    assert judge_event().decision == "reported"


def test_the_deny_message_is_in_the_readers_language(api, decided, provider_server):
    provider_server.script([decision(choice("allow"), choice("deny"), choice("allow"))])
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json",
                        HTTP_ACCEPT_LANGUAGE="de")
    assert "nennt keine Textstelle" in response.json()["block"]["message"]


# --- confidence ---
def test_confidence_is_not_the_probability_of_allow(api, decided, provider_server):
    # Confidence 0.95 with p(allow) = 0.40, where allow is still the most probable option: an allow.
    weak = choice("allow", 0.95, {"allow": 0.40, "deny": 0.35, "pass": 0.25})
    provider_server.script([decision(weak, weak, weak)])

    body = screen(api)

    assert body["outcome"] == "allowed"
    assert rules_check(body) == {"check": "rules_judge", "result": "passed"}


def test_low_confidence_passes_to_the_next_judge(api, decided, judge, provider_server):
    set_rules(decided, "block", judges=["decider", "judge"])
    # 0.85 is below newsroom's min_confidence (0.9): rule 2's deny counts as pass, so the chat judge decides.
    provider_server.script([decision(choice("allow"), choice("deny", 0.85), choice("allow")), verdict()])

    body = screen(api)

    assert body["outcome"] == "allowed"
    assert [r.model for r in provider_server.requests] == [DECIDER_MODEL, JUDGE_MODEL]


def test_low_confidence_with_no_next_judge_is_a_failed_check_with_reason_uncertain(api, decided, provider_server):
    provider_server.script([decision(choice("allow"), choice("deny", 0.85), choice("allow"))])

    body = screen(api)

    assert body["outcome"] == "blocked"
    assert rules_check(body) == {"check": "rules_judge", "result": "blocked", "reason": "uncertain"}
    assert body["block"]["message"] == ("The rules of newsroom could not be checked (the judge was not confident "
                                        "enough), so the text was stopped.")
    assert judge_event().detail["judges"][0]["answers"][1] == {"rule": 2, "choice": "deny", "confidence": 0.85}


def test_min_confidence_is_the_judged_configurations_own(api, decided, provider_server):
    decided.min_confidence = 0.8
    decided.save()
    provider_server.script([decision(choice("allow"), choice("deny", 0.85), choice("allow"))])
    assert screen(api)["block"]["message"] == NO_PASSAGE_2


def test_a_chosen_pass_is_a_failed_check(api, decided, provider_server):
    set_rules(decided, "report")
    provider_server.script([decision(choice("allow"), choice("pass"), choice("allow"))])
    body = screen(api)
    assert rules_check(body) == {"check": "rules_judge", "result": "not_checked", "reason": "undecided"}
    assert body["hints"][0]["message"] == "The rules of newsroom were not checked: the judge could not decide."


# --- every validation sentence of §6.4 has a failing case that becomes unusable ---
GOOD = choice("allow")
UNUSABLE_ANSWERS = {
    "a question without an answer": (GOOD, None, GOOD),
    "an answer that is not a choice": (GOOD, {"type": "noul", "noul": 0.1}, GOOD),
    "an option that is not one of the three": (GOOD, choice("maybe", 0.97, {"allow": 0.97, "deny": 0.02,
                                                                               "pass": 0.01}), GOOD),
    "a probability key missing": (GOOD, choice("allow", 0.97, {"allow": 0.97, "deny": 0.03}), GOOD),
    "a probability key too many": (GOOD, choice("allow", 0.9, {"allow": 0.9, "deny": 0.05, "pass": 0.05,
                                                               "maybe": 0.0}), GOOD),
    "a probability above 1": (GOOD, choice("allow", 0.97, {"allow": 1.2, "deny": -0.1, "pass": -0.1}), GOOD),
    "a probability that is not finite": (GOOD, choice("allow", 0.97, {"allow": math.inf, "deny": 0.0,
                                                                      "pass": 0.0}), GOOD),
    "probabilities that do not sum to 1": (GOOD, choice("allow", 0.97, {"allow": 0.6, "deny": 0.2,
                                                                        "pass": 0.1}), GOOD),
    "a confidence that is not finite": (GOOD, choice("allow", math.nan, {"allow": 0.97, "deny": 0.02,
                                                                         "pass": 0.01}), GOOD),
    "a confidence above 1": (GOOD, choice("allow", 1.5, {"allow": 0.97, "deny": 0.02, "pass": 0.01}), GOOD),
    "no confidence at all": (GOOD, {"type": "choice", "choice": "allow",
                                    "probabilities": {"allow": 0.97, "deny": 0.02, "pass": 0.01}}, GOOD),
    "a chosen option that is not the most probable": (GOOD, choice("allow", 0.97, {"allow": 0.2, "deny": 0.7,
                                                                                   "pass": 0.1}), GOOD),
}


@pytest.mark.parametrize("case", list(UNUSABLE_ANSWERS))
def test_a_breach_makes_the_answer_unusable_and_blocks_in_block_mode(api, decided, provider_server, case):
    provider_server.script([decision(*UNUSABLE_ANSWERS[case])])

    body = screen(api)

    assert body["outcome"] == "blocked", case
    assert rules_check(body) == {"check": "rules_judge", "result": "blocked", "reason": "unusable"}
    assert len(decider_requests(provider_server)) == 1  # no retry of an unusable answer
    (fact,) = judge_event().detail["judges"]
    assert (fact["choice"], fact["reason"]) == ("pass", "unusable")
    assert "answers" not in fact  # nothing of a broken answer is believed
    assert fact["problem"]


def test_a_chosen_option_that_is_not_the_most_probable_is_unusable_even_when_it_would_allow(api, decided, judge,
                                                                                           provider_server):
    set_rules(decided, "block", judges=["decider", "judge"])
    wrong = choice("allow", 0.97, {"allow": 0.2, "deny": 0.7, "pass": 0.1})
    provider_server.script([decision(GOOD, wrong, GOOD), verdict((2, "we ship your order tomorrow"))])

    body = screen(api)

    # The decision judge's answer was unusable, so the chat judge decided: a deny with its passage.
    assert body["block"]["message"].startswith(f"Rule 2 (“{RULE_LINES[1]}”, snippet tone) is violated by:")
    facts = judge_event().detail["judges"]
    assert facts[0] == {"judge": "decider", "choice": "pass", "reason": "unusable", "problem": "not_most_probable"}
    assert facts[1]["choice"] == "deny"


# --- chat and decision judges in one chain (§6.2) ---
def test_a_chat_judge_that_fails_hands_over_to_a_decision_judge(api, decided, judge, provider_server):
    set_rules(decided, "block", judges=["judge", "decider"])
    provider_server.script([{"for_model": JUDGE_MODEL, "text": "not json"},
                            decision(choice("allow"), choice("allow"), choice("deny"))])

    body = screen(api)

    assert [r.model for r in provider_server.requests] == [JUDGE_MODEL, DECIDER_MODEL]
    assert body["block"]["message"] == f"Rule 3 (“{RULE_LINES[2]}”, snippet legal) is violated; the judge names no passage."


def test_a_decision_allow_ends_the_chain(api, decided, judge, provider_server):
    set_rules(decided, "block", judges=["decider", "judge"])
    provider_server.script([decision(choice("allow"), choice("allow"), choice("allow"))])
    assert screen(api)["outcome"] == "allowed"
    assert [r.model for r in provider_server.requests] == [DECIDER_MODEL]


def test_a_provider_error_is_a_failed_check_with_reason_error(api, decided, provider_server):
    provider_server.script([{"for_model": DECIDER_MODEL, "status": 400}])
    assert rules_check(screen(api)) == {"check": "rules_judge", "result": "blocked", "reason": "error"}


def test_a_completion_through_a_decision_configuration_is_refused(make_consumer, decider, provider_server):
    from rest_framework.test import APIClient

    _consumer, token = make_consumer("decider-app", [decider])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.post("/api/v1/completions", {"configuration": "decider", "messages": [
        {"role": "user", "content": "Write."}]}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "configuration": ["decider is a decision configuration: it judges texts and writes none."]}
    assert provider_server.requests == []


def test_each_configuration_of_a_call_uses_its_own_min_confidence(make_consumer, decided, provider, provider_server):
    from rest_framework.test import APIClient

    set_rules(decided, "report", judges=["decider"])  # min_confidence 0.9
    desk = set_rules(Configuration.objects.create(identifier="desk", provider=provider, model="test-model",
                                                  min_confidence=0.6), "report", judges=["decider"])
    _consumer, token = make_consumer("both", [decided, desk])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    deny = decision(choice("allow"), choice("deny", 0.7), choice("allow"))
    provider_server.script([deny, deny])

    body = client.post("/api/v1/screenings", {"configuration": "newsroom", "also": ["desk"], "text": TEXT},
                       format="json").json()

    # One question set per threshold: the same answer is a pass for newsroom and a deny for desk.
    assert len(decider_requests(provider_server)) == 2
    by_configuration = {h["configuration"]: h for h in body["hints"]}
    assert (by_configuration["newsroom"]["type"], by_configuration["newsroom"]["reason"]) == ("not_checked",
                                                                                              "uncertain")
    assert (by_configuration["desk"]["type"], by_configuration["desk"]["message"]) == ("violation", NO_PASSAGE_2)
