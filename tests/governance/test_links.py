"""Judge chains and fallbacks as relations (issue 11): renames cannot orphan them, and an edit that changes how
another configuration is judged is an administrator's, confirmed with its consequences listed."""
import re

import pytest
import yaml
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import call_command
from django.urls import reverse

from governance import policy
from governance.models import Configuration, Provider, set_links
from governance.records.writes import save_record
from termlists.models import TermList
from tests.governance.test_admin import (  # noqa: F401  (fixtures)
    change_url, configuration_form, desk, editor_client, gateway, judges, policy_editor, superuser, superuser_client,
)
from tests.governance.test_admin_only import as_the_page_sends_it, provider_post
from governance.records.permissions import ADMIN_ONLY_FIELDS
from tests.governance.drafted import PUBLISH


def judge_page_sends(model, data: dict) -> dict:
    """What a policy editor's page of a judge sends: no admin-only field, its budget caps included."""
    return {name: value for name, value in data.items() if name not in ADMIN_ONLY_FIELDS[model._meta.label_lower]}

MUST_ASK = "An administrator must make this change."


@pytest.fixture
def newsroom(gateway, judges):
    """`newsroom` judged by judge-a (block mode), falling back to `spare`, escalating to judge-a, with a term list."""
    spare = Configuration.objects.create(identifier="spare", provider=gateway, model="m")
    newsroom = Configuration.objects.create(identifier="newsroom", provider=gateway, model="m", rule_mode="block",
                                            rule_tags=["style"], escalation=judges[0])
    set_links(newsroom, "rule_judges", [judges[0], judges[1]])
    set_links(newsroom, "fallbacks", [spare])
    TermList.objects.create(name="Brand words", forbidden="Kunde").configurations.set([newsroom, judges[0]])
    return newsroom


def judge_a_form(**overrides):
    judge = Configuration.objects.get(identifier="judge-a")
    return configuration_form(judge, **overrides)


# --- Must show 2: a rename by an administrator -------------------------------------------------


def test_an_administrator_renames_a_judge_and_every_chain_and_the_export_follow(superuser_client, newsroom):
    judge = Configuration.objects.get(identifier="judge-a")
    url = change_url(judge)

    # First the consequences, nothing saved yet.
    page = superuser_client.post(url, judge_a_form(identifier="judge-alpha"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Confirm a change that affects other configurations" in html
    assert "Configuration “newsroom” names “judge-a” as a judge: its policy would name the new identifier." in html
    assert "Configuration “newsroom” names “judge-a” as its escalation" in html
    assert Configuration.objects.filter(identifier="judge-a").exists()

    # Then the confirmation the page sends: every field as before, and the confirming key.
    confirmed = superuser_client.post(url, {**judge_a_form(identifier="judge-alpha"), "_gavel_confirmed": "1",
                                            **PUBLISH})
    assert confirmed.status_code == 302, confirmed.content.decode()[:2000]

    newsroom.refresh_from_db()
    assert newsroom.judge_identifiers() == ["judge-alpha", "judge-b"]
    assert newsroom.escalation.identifier == "judge-alpha"
    exported = policy.export_policy()
    by_id = {c["identifier"]: c for c in exported["configurations"]}
    assert by_id["newsroom"]["rules"]["judges"] == ["judge-alpha", "judge-b"]
    assert by_id["newsroom"]["escalation"] == "judge-alpha"
    assert by_id["newsroom"]["fallbacks"] == ["spare"]
    assert [t["configurations"] for t in exported["term_lists"]] == [["judge-alpha", "newsroom"]]
    assert re.findall(r"judge-a(?![\w-])", yaml.safe_dump(exported)) == []
    # And the export imports back to the same policy: nothing changes.
    report = policy.import_policy(exported)
    assert report.changed == [] and report.created == []


def test_the_export_command_names_the_new_identifier(newsroom, superuser, capsys):
    save_record(superuser, Configuration.objects.get(identifier="spare"), {"identifier": "spare-two"})
    call_command("export_policy")
    document = yaml.safe_load(capsys.readouterr().out)
    (exported,) = [c for c in document["configurations"] if c["identifier"] == "newsroom"]
    assert exported["fallbacks"] == ["spare-two"]


# --- A policy editor's indirect changes are refused, naming the affected configuration ----------


def test_a_policy_editor_cannot_rename_a_judge(editor_client, newsroom):
    judge = Configuration.objects.get(identifier="judge-a")
    response = editor_client.post(change_url(judge), judge_page_sends(
        Configuration, judge_a_form(identifier="judge-alpha")))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["identifier"]
    (message,) = errors["identifier"]
    assert "Configuration “newsroom” names “judge-a” as a judge" in message
    assert message.endswith(MUST_ASK)
    assert Configuration.objects.filter(identifier="judge-a").exists()


def test_a_policy_editor_cannot_move_a_judge_to_another_provider(editor_client, newsroom):
    far = Provider.objects.create(name="far", route="openai", trust_zone="external_global")
    response = editor_client.post(change_url(Configuration.objects.get(identifier="judge-a")), judge_page_sends(
        Configuration, judge_a_form(provider=far.pk)))
    assert response.status_code == 200
    (message,) = response.context["adminform"].form.errors["provider"]
    assert "Configuration “newsroom” names “judge-a” as a judge: a new provider changes" in message
    assert MUST_ASK in message
    assert Configuration.objects.get(identifier="judge-a").provider.name == "gateway"


def test_a_policy_editor_cannot_change_a_judges_fallbacks(editor_client, newsroom):
    spare = Configuration.objects.get(identifier="spare")
    response = editor_client.post(change_url(Configuration.objects.get(identifier="judge-a")), judge_page_sends(
        Configuration, judge_a_form(fallbacks=[spare.pk])))
    assert response.status_code == 200
    (message,) = response.context["adminform"].form.errors["fallbacks"]
    assert "its fallbacks count towards the judge's trust zone" in message and MUST_ASK in message
    assert Configuration.objects.get(identifier="judge-a").fallback_identifiers() == []


def test_a_policy_editor_cannot_change_the_kind_of_a_judges_provider(editor_client, newsroom, gateway):
    response = editor_client.post(change_url(gateway), as_the_page_sends_it(
        Provider, provider_post(gateway, kind="decision")))
    assert response.status_code == 200
    messages = response.context["adminform"].form.errors["kind"]
    assert any("Configuration “newsroom” names “judge-a” (provider gateway) as a judge" in m for m in messages)
    assert all(m.endswith(MUST_ASK) for m in messages)
    gateway.refresh_from_db()
    assert gateway.kind == "chat"


def test_a_policy_editor_may_still_edit_what_changes_nobody_else(editor_client, newsroom):
    judge = Configuration.objects.get(identifier="judge-a")
    response = editor_client.post(change_url(judge), judge_page_sends(Configuration, judge_a_form(model="m2")))
    assert response.status_code == 302, response.content.decode()[:2000]
    spare = Configuration.objects.get(identifier="spare")  # named by newsroom as a fallback only
    assert save_record(editor_client_user(editor_client), spare, {"model": "m3"}).model == "m3"


def editor_client_user(client):
    from django.contrib.auth.models import User

    return User.objects.get(pk=client.session["_auth_user_id"])


@pytest.mark.parametrize("changes", [{"identifier": "renamed"}, {"provider": "other"}, {"fallbacks": ["spare"]}],
                         ids=["rename", "provider", "fallbacks"])
def test_the_service_layer_refuses_the_same_edits(policy_editor, newsroom, gateway, changes):
    Provider.objects.create(name="other", route="openai")
    judge = Configuration.objects.get(identifier="judge-a")
    with pytest.raises(PermissionDenied) as refused:
        save_record(policy_editor, judge, changes)
    assert "Configuration “newsroom”" in str(refused.value) and MUST_ASK in str(refused.value)
    assert Configuration.objects.filter(identifier="judge-a", provider=gateway).exists()


def test_the_service_layer_refuses_a_policy_editor_a_provider_kind_that_others_depend_on(policy_editor, newsroom,
                                                                                         gateway):
    with pytest.raises(PermissionDenied) as refused:
        save_record(policy_editor, gateway, {"kind": "decision"})
    assert "Configuration “newsroom”" in str(refused.value)


def test_the_change_page_says_who_depends_on_this_configuration(editor_client, newsroom):
    html = editor_client.get(change_url(Configuration.objects.get(identifier="judge-a"))).content.decode()
    assert "Other configurations depend on this one: newsroom (its escalation), newsroom (a judge)." in html


def test_an_administrators_provider_change_is_confirmed_first(superuser_client, newsroom, gateway):
    data = provider_post(gateway, trust_zone="external_global")
    page = superuser_client.post(change_url(gateway), data)
    assert page.status_code == 200
    assert "newsroom" in page.context["affected"]
    gateway.refresh_from_db()
    assert gateway.trust_zone == "private_hosted"
    assert superuser_client.post(change_url(gateway), {**data, "_gavel_confirmed": "1", **PUBLISH}).status_code == 302
    gateway.refresh_from_db()
    assert gateway.trust_zone == "external_global"


# --- Links the policy refuses, for everyone ------------------------------------------------------


@pytest.fixture
def decider(db):
    provider = Provider.objects.create(name="jev", kind="decision", route="typesafe")
    return Configuration.objects.create(identifier="decider", provider=provider, model="jev-1")


def test_a_decision_configuration_is_no_chat_fallback(superuser, newsroom, decider):
    with pytest.raises(ValidationError) as refused:
        save_record(superuser, newsroom, {"fallbacks": ["spare", "decider"]})
    # One message, the model's own (governance.models.families), not one per check.
    assert refused.value.message_dict == {"fallbacks": [
        "Fallback decider is a decision configuration; a chat configuration falls back only to chat configurations."]}
    assert newsroom.fallback_identifiers() == ["spare"]


def test_a_fallback_loop_is_refused(superuser, newsroom):
    spare = Configuration.objects.get(identifier="spare")
    with pytest.raises(ValidationError) as refused:
        save_record(superuser, spare, {"fallbacks": ["newsroom"]})
    assert refused.value.message_dict == {"fallbacks": [
        "“newsroom” already falls back to “spare”: fallbacks are one hop, and a loop is refused. Remove one of the "
        "two."]}


def test_two_configurations_judging_each_other_in_block_mode_are_refused(superuser, newsroom):
    judge = Configuration.objects.get(identifier="judge-a")
    with pytest.raises(ValidationError) as refused:
        save_record(superuser, judge, {"rule_judges": ["newsroom"]})
    assert refused.value.message_dict["rule_judges"] == [
        "“newsroom” already has “judge-a” as a judge: two configurations that judge each other in block mode could "
        "stop each other's judges. Remove one of the two, or leave block mode."]
    # In report mode on both sides it is allowed.
    save_record(superuser, newsroom, {"rule_mode": "report"})
    save_record(superuser, judge, {"rule_judges": ["newsroom"]})
    assert judge.judge_identifiers() == ["newsroom"]
    # And neither may then switch to block mode.
    with pytest.raises(ValidationError):
        save_record(superuser, Configuration.objects.get(identifier="newsroom"), {"rule_mode": "block"})


def test_a_provider_kind_that_would_mix_families_is_refused(superuser, newsroom, gateway):
    other = Provider.objects.create(name="other", route="openai")
    save_record(superuser, Configuration.objects.get(identifier="spare"), {"provider": other})
    with pytest.raises(ValidationError) as refused:
        save_record(superuser, other, {"kind": "decision"})
    assert list(refused.value.message_dict) == ["kind"]
    assert "a fallback must be of the same kind" in refused.value.message_dict["kind"][0]


def test_the_help_text_says_fallbacks_are_one_hop(superuser_client, newsroom):
    html = superuser_client.get(change_url(newsroom)).content.decode()
    assert "One hop: a fallback's own fallbacks are never tried." in html


def test_the_policy_import_refuses_the_same_links_at_their_paths(newsroom, decider):
    document = {"configurations": [
        {"identifier": "a", "provider": "gateway", "model": "m", "fallbacks": ["b", "decider"]},
        {"identifier": "b", "provider": "gateway", "model": "m", "fallbacks": ["a"],
         "rules": {"mode": "block", "judges": ["c"]}},
        {"identifier": "c", "provider": "gateway", "model": "m", "rules": {"mode": "report", "judges": ["b"]}},
    ]}
    with pytest.raises(policy.PolicyInvalid) as refused:
        policy.import_policy(document)
    errors = refused.value.errors
    assert set(errors) == {"configurations[0].fallbacks[0]", "configurations[0].fallbacks[1]",
                           "configurations[1].fallbacks[0]", "configurations[1].rules.judges[0]",
                           "configurations[2].rules.judges[0]"}
    assert "a loop is refused" in errors["configurations[0].fallbacks[0]"][0]
    assert errors["configurations[0].fallbacks[1]"] == [
        "Fallback decider is a decision configuration; a chat configuration falls back only to chat configurations."]
    assert "judge each other in block mode" in errors["configurations[2].rules.judges[0]"][0]
    assert not Configuration.objects.filter(identifier__in=["a", "b", "c"]).exists()


def test_the_policy_import_links_forward_references_in_order(gateway):
    policy.import_policy({"providers": [{"name": "p", "route": "openai"}], "configurations": [
        {"identifier": "writer", "provider": "p", "model": "m", "fallbacks": ["backup-2", "backup-1"],
         "rules": {"mode": "report", "judges": ["judge-2", "judge-1"]}},
        *[{"identifier": name, "provider": "p", "model": "m"} for name in ("backup-1", "backup-2", "judge-1",
                                                                           "judge-2")],
    ]})
    writer = Configuration.objects.get(identifier="writer")
    assert writer.fallback_identifiers() == ["backup-2", "backup-1"]
    assert writer.judge_identifiers() == ["judge-2", "judge-1"]
    # Reordering is a change, and the only one.
    report = policy.import_policy({"configurations": [
        {"identifier": "writer", "provider": "p", "model": "m", "fallbacks": ["backup-1", "backup-2"],
         "rules": {"mode": "report", "judges": ["judge-2", "judge-1"]}}]})
    assert report.changed_keys == {"configurations:writer": ["fallbacks"]}
    assert Configuration.objects.get(identifier="writer").fallback_identifiers() == ["backup-1", "backup-2"]


def test_old_assignments_fail_loudly(newsroom):
    with pytest.raises(TypeError):
        newsroom.rule_judges = ["judge-b"]
    with pytest.raises(TypeError):
        Configuration(identifier="x", fallbacks=["spare"])
    assert newsroom.rule_judges == ["judge-a", "judge-b"]  # a read-only view of the relation


def test_reading_a_chain_costs_no_query_per_judge(newsroom, django_assert_max_num_queries):
    with django_assert_max_num_queries(1):
        assert [j.provider.name for j in newsroom.ordered_judges()] == ["gateway", "gateway"]


# --- The data migration -------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_the_migration_turns_identifier_lists_into_links():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("governance")
    before = [("governance", "0004_task")]
    try:
        executor.migrate(before)
        old = executor.loader.project_state(before).apps
        provider = old.get_model("governance", "Provider").objects.create(name="p", route="openai")
        make = old.get_model("governance", "Configuration").objects.create
        make(identifier="judge", provider=provider, model="m")
        make(identifier="backup", provider=provider, model="m")
        make(identifier="writer", provider=provider, model="m", rule_judges=["judge", "ghost", "judge"],
             fallbacks=["backup", "writer"])
        executor = MigrationExecutor(connection)
        executor.migrate(latest)
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    writer = Configuration.objects.get(identifier="writer")
    # The orphan and the repeat are dropped (they judged as "always passes" before); the rest keeps its order.
    assert writer.judge_identifiers() == ["judge"]
    assert writer.fallback_identifiers() == ["backup"]
