"""Chat and decision families never translate into each other (SPEC §6.4): a chat configuration on a
decision provider, or the reverse, is refused at save (model clean, admin) and at policy import."""
import pytest
from django.core.exceptions import ValidationError

from governance import policy
from governance.models import Configuration, Provider
from governance.records.writes import save_record
from tests.governance.test_admin import change_url, configuration_form, superuser, superuser_client  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def decisions(db):
    return Provider.objects.create(name="jev", kind="decision", route="typesafe", trust_zone="external_global")


@pytest.fixture
def chat(db):
    return Provider.objects.create(name="writer", kind="chat", route="openai", trust_zone="local")


@pytest.fixture
def decider(decisions):
    return Configuration.objects.create(identifier="decider", provider=decisions, model="jev-latest")


@pytest.fixture
def writer(chat):
    return Configuration.objects.create(identifier="writer", provider=chat, model="gpt")


@pytest.mark.parametrize("field,value", [
    ("system_prompt", "You write news."), ("temperature", 0.7), ("max_tokens", 200), ("context_tags", ["style"]),
    ("rule_mode", "report"),
])
def test_a_decision_configuration_with_chat_settings_is_refused_at_save(decider, field, value):
    setattr(decider, field, value)
    with pytest.raises(ValidationError) as refused:
        decider.full_clean()
    assert refused.value.message_dict == {field: [
        f"A decision configuration only judges: it cannot have {field} (provider jev is of kind decision)."]}


def test_a_decision_configuration_cannot_escalate(decider, writer):
    decider.escalation = writer
    with pytest.raises(ValidationError) as refused:
        decider.full_clean()
    assert list(refused.value.message_dict) == ["escalation"]


def test_an_escalation_is_a_chat_configuration(writer, decider):
    writer.escalation = decider
    with pytest.raises(ValidationError) as refused:
        writer.full_clean()
    assert refused.value.message_dict == {"escalation": [
        "Escalation decider is a decision configuration; an escalation writes a text, so it must be a chat "
        "configuration."]}


def test_fallbacks_stay_in_their_family_both_ways(writer, decider, superuser):  # noqa: F811
    with pytest.raises(ValidationError) as refused:
        save_record(superuser, writer, {"fallbacks": ["decider"]})
    assert refused.value.message_dict == {"fallbacks": [
        "Fallback decider is a decision configuration; a chat configuration falls back only to chat configurations."]}
    with pytest.raises(ValidationError) as refused:
        save_record(superuser, decider, {"fallbacks": ["writer"]})
    assert list(refused.value.message_dict) == ["fallbacks"]
    assert writer.fallback_identifiers() == [] and decider.fallback_identifiers() == []


def test_a_decision_configuration_that_only_judges_is_accepted(decider, decisions, superuser):  # noqa: F811
    Configuration.objects.create(identifier="decider-2", provider=decisions, model="jev-2")
    save_record(superuser, decider, {"fallbacks": ["decider-2"], "timeout": 10})  # judging settings only: accepted
    Provider.objects.create(name="w", route="openai")
    desk = save_record(superuser, Configuration, {  # a chat configuration may be judged by a decision judge
        "identifier": "desk", "provider": "w", "model": "m", "rule_mode": "block", "rule_judges": ["decider"],
        "system_prompt": "Write."})
    assert desk.judge_identifiers() == ["decider"]


def test_a_provider_cannot_change_kind_under_its_chat_configurations(chat, writer):
    writer.system_prompt = "Write."
    writer.save()
    chat.kind = "decision"
    with pytest.raises(ValidationError) as refused:
        chat.full_clean()
    assert refused.value.message_dict == {
        "kind": ["Configurations writer would mix chat and decision settings under this kind."]}


def test_the_admin_refuses_a_chat_configuration_on_a_decision_provider(superuser_client, decider):  # noqa: F811
    response = superuser_client.post(change_url(decider), configuration_form(decider, system_prompt="Write news."))
    assert response.status_code == 200  # the form again, with the error
    assert "A decision configuration only judges: it cannot have system_prompt" in response.content.decode()
    decider.refresh_from_db()
    assert decider.system_prompt == ""


# --- policy import, with the error paths ---
def document():
    return {
        "providers": [
            {"name": "jev", "kind": "decision", "route": "typesafe"},
            {"name": "writer", "kind": "chat", "route": "openai"},
        ],
        "configurations": [
            {"identifier": "decider", "provider": "jev", "model": "jev-latest", "system_prompt": "Write news.",
             "temperature": 0.5, "rules": {"mode": "block", "judges": ["decider-2"]}, "fallbacks": ["writer-a"]},
            {"identifier": "writer-a", "provider": "writer", "model": "gpt", "escalation": "decider",
             "fallbacks": ["decider-2"]},
            {"identifier": "decider-2", "provider": "jev", "model": "jev-2"},
        ],
    }


def test_import_refuses_mixed_families_with_their_paths():
    with pytest.raises(policy.PolicyInvalid) as refused:
        policy.import_policy(document())
    errors = refused.value.errors
    assert sorted(errors) == [
        "configurations[0].fallbacks[0]", "configurations[0].rules.mode", "configurations[0].system_prompt",
        "configurations[0].temperature", "configurations[1].escalation", "configurations[1].fallbacks[0]",
    ]
    assert errors["configurations[1].fallbacks[0]"] == [
        "Fallback decider-2 is a decision configuration; a chat configuration falls back only to chat configurations."]
    assert not Configuration.objects.exists()  # nothing written


def test_import_judges_the_kind_the_document_gives_a_stored_provider(writer):
    writer.system_prompt = "Write."
    writer.save()
    # The document turns the stored chat provider into a decision one; its stored configuration is named too.
    doc = {"providers": [{"name": "writer", "kind": "decision", "route": "typesafe"}],
           "configurations": [{"identifier": "writer", "provider": "writer", "model": "gpt",
                               "system_prompt": "Write."}]}
    with pytest.raises(policy.PolicyInvalid) as refused:
        policy.import_policy(doc)
    assert list(refused.value.errors) == ["configurations[0].system_prompt"]


def test_a_clean_document_with_a_decision_judge_imports():
    doc = document()
    doc["configurations"][0] = {"identifier": "decider", "provider": "jev", "model": "jev-latest",
                                "fallbacks": ["decider-2"]}
    doc["configurations"][1] = {"identifier": "writer-a", "provider": "writer", "model": "gpt",
                                "rules": {"mode": "block", "judges": ["decider"], "min_confidence": 0.8}}
    policy.import_policy(doc)
    assert Configuration.objects.get(identifier="writer-a").rule_judges == ["decider"]
