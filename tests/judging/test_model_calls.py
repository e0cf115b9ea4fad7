"""The judge's model call is handed in (judging/model_calls.py): judges ask what governance installed."""
from types import SimpleNamespace

import pytest

from governance.errors import BudgetExceeded, ProviderTimedOut
from governance.runs import calls as call_service
from judging import model_calls, zones_service
from judging.decisions import DecisionJudge, question_key
from judging.judgement import ALLOW, DENY, JUDGE_TIMEOUT_CAP, PASS, JudgeContext
from judging.judges import ChatJudge
from judging.rulesets_pure import Rule, RuleSet

TEXT = "We ship tomorrow."
RULES = RuleSet("newsroom", (Rule(1, "Never promise a delivery date.", "legal", "Legal", 1),), ())
CONTEXT = JudgeContext(correlation_id="corr-1", actor="tester")


def provider(zone):
    return SimpleNamespace(trust_zone=zone)


class Recorder:
    """Model calls that answer from a script and remember what they were asked."""

    def __init__(self, reply=None, error=None, chain=()):
        self.reply, self.error, self.chain, self.asked = reply, error, list(chain), []

    def call_model(self, configuration, messages, **options):
        self.asked.append(("call_model", configuration, messages, options))
        if self.error:
            raise self.error
        return self.reply, configuration

    def call_decision(self, configuration, questions, state, **options):
        self.asked.append(("call_decision", configuration, (questions, state), options))
        if self.error:
            raise self.error
        return self.reply, configuration

    def chain_of(self, configuration):
        return self.chain


@pytest.fixture
def installed(monkeypatch):
    def install(calls):
        monkeypatch.setattr(model_calls, "_installed", None)
        model_calls.install(calls)
        return calls
    return install


JUDGE = SimpleNamespace(identifier="judge-one")


def test_governance_installs_its_call_service_at_start_up():
    assert model_calls.installed() is call_service
    assert isinstance(call_service, model_calls.ModelCalls)


def test_a_chat_judge_asks_the_installed_calls(installed):
    calls = installed(Recorder(reply=SimpleNamespace(text='{"violations": []}', cost=0.25)))
    decision = ChatJudge(JUDGE).decide(RULES, TEXT, CONTEXT)
    assert (decision.choice, decision.cost) == (ALLOW, 0.25)
    ((kind, configuration, messages, options),) = calls.asked
    assert kind == "call_model" and configuration is JUDGE
    sent = "\n".join(message["content"] for message in messages)
    assert TEXT in sent and RULES.rules[0].line in sent
    assert options["correlation_id"] == "corr-1" and options["actor"] == "tester"
    assert options["timeout_cap"] == JUDGE_TIMEOUT_CAP and options["temperature"] == 0
    assert options["own_system_prompt"] is False


def test_a_decision_judge_asks_the_installed_calls(installed):
    answers = {question_key(1): {"type": "choice", "choice": "deny", "confidence": 0.99,
                                 "probabilities": {"allow": 0.005, "deny": 0.99, "pass": 0.005}}}
    calls = installed(Recorder(reply=SimpleNamespace(answers=answers, cost=0.5)))
    decision = DecisionJudge(JUDGE).decide(RULES, TEXT, CONTEXT)
    assert decision.choice == DENY and [f.rule.number for f in decision.violations] == [1]
    ((kind, configuration, (questions, state), options),) = calls.asked
    assert kind == "call_decision" and configuration is JUDGE
    assert list(questions) == [question_key(1)] and state == {"text_under_review": TEXT}
    assert options == {"correlation_id": "corr-1", "actor": "tester", "timeout_cap": JUDGE_TIMEOUT_CAP}


@pytest.mark.parametrize("error, reason", [
    (ProviderTimedOut("timed out"), "timeout"),
    (BudgetExceeded("over budget"), "budget"),
])
def test_what_the_installed_calls_raise_is_a_pass_with_its_reason(installed, error, reason):
    installed(Recorder(error=error))
    for judge in (ChatJudge(JUDGE), DecisionJudge(JUDGE)):
        decision = judge.decide(RULES, TEXT, CONTEXT)
        assert (decision.choice, decision.reason) == (PASS, reason)


def test_a_judge_asked_before_anything_is_installed_passes_with_error(monkeypatch):
    monkeypatch.setattr(model_calls, "_installed", None)
    with pytest.raises(RuntimeError):
        model_calls.installed()
    assert ChatJudge(JUDGE).decide(RULES, TEXT, CONTEXT).reason == "error"


def test_install_refuses_calls_that_lack_a_method(installed):
    with pytest.raises(TypeError, match="chain_of"):
        installed(SimpleNamespace(call_model=print, call_decision=print))


def test_the_judging_zone_counts_the_chain_the_installed_calls_name(installed):
    judge = SimpleNamespace(provider=provider("local"))
    installed(Recorder(chain=[judge, SimpleNamespace(provider=provider("external_eu"))]))
    assert zones_service.judging_zone(judge) == "external_eu"
    installed(Recorder(chain=[judge]))
    assert zones_service.judging_zone(judge) == "local"
