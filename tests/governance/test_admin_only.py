"""Admin-only fields (SPEC §2.3) on every write path: the admin, the service layer, the REST API.

Every test reads governance.records.permissions.ADMIN_ONLY_FIELDS, so a field added to
that list is covered here (and the forged values below must name it).
"""
import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils.text import capfirst

from governance.admin import ConfigurationAdmin
from governance.api.auth import IsAdminConsumer
from governance.models import Configuration, Consumer, PolicyVersion, Provider
from governance.records.permissions import ADMIN_ONLY_FIELDS, WHILE_JUDGING
from governance.records.writes import save_record
from tests.governance.test_admin import (  # noqa: F401  (fixtures)
    superuser_client, change_url, configuration_form, desk, editor_client, gateway, judges, policy_editor, superuser,
)
from tests.governance.drafted import PUBLISH, draft_record

# The budget caps are admin-only only on a configuration another one judges with (test_security.py).
CONFIGURATION_LOCKED = tuple(n for n in ADMIN_ONLY_FIELDS["governance.configuration"] if n not in WHILE_JUDGING)
PROVIDER_LOCKED = ADMIN_ONLY_FIELDS["governance.provider"]


def forged_configuration_post(escalation_pk, judge_pk=0) -> dict:
    """Form values for every admin-only configuration field, each different from the `desk` fixture's
    (given judge-a as `escalation_pk` and judge-b as `judge_pk`)."""
    return {
        "context_tags": "forged", "rule_mode": "block", "rule_tags": "forged, other", "rule_judges": [judge_pk],
        "rule_default": "block", "min_confidence": "0.1", "escalation": escalation_pk, "judge_cache_seconds": "3600",
        "read_tools": "save_page",
        "mcp_servers": "forged-server", "approve_tools": "forged_tool", "deny_tools": "forged_tool",
        "mcp_results": "off",
    }


# The same, as plain data for the service layer.
FORGED_CONFIGURATION = {
    "context_tags": ["forged"], "rule_mode": "block", "rule_tags": ["forged", "other"], "rule_judges": ["judge-b"],
    "rule_default": "block", "min_confidence": 0.1, "escalation": "judge-a", "judge_cache_seconds": 3600,
    "read_tools": ["save_page"],
    "mcp_servers": ["forged-server"], "approve_tools": ["forged_tool"], "deny_tools": ["forged_tool"],
    "mcp_results": "off",
}
FORGED_PROVIDER = {
    "route": "anthropic", "api_base": "https://exfiltrate.example.com/v1", "api_key_env": "STOLEN_API_KEY",
    "trust_zone": "external_global",
}


def test_forged_values_cover_every_admin_only_field():
    # A field added to the one list without a forged value here would go untested.
    assert set(FORGED_CONFIGURATION) == set(CONFIGURATION_LOCKED)
    assert set(forged_configuration_post(0)) == set(CONFIGURATION_LOCKED)
    assert set(FORGED_PROVIDER) == set(PROVIDER_LOCKED)


def snapshot(obj, names) -> dict:
    """The stored values of `names`, read fresh from the database (a chain as its identifiers)."""
    fresh = type(obj).objects.get(pk=obj.pk)
    links = {"rule_judges": "judge_identifiers", "fallbacks": "fallback_identifiers"}
    return {name: getattr(fresh, links[name])() if name in links else getattr(fresh, fresh._meta.get_field(name).attname)
            for name in names}


def provider_post(provider, **overrides) -> dict:
    data = {
        "name": provider.name, "kind": provider.kind, "timeout": provider.timeout,
        "price_per_mtok_in": provider.price_per_mtok_in or "", "price_per_mtok_out": provider.price_per_mtok_out or "",
        "route": provider.route, "api_base": provider.api_base, "api_key_env": provider.api_key_env,
        "trust_zone": provider.trust_zone, "max_concurrency": provider.max_concurrency,
        "requests_per_minute": provider.requests_per_minute, "tokens_per_minute": provider.tokens_per_minute,
        "_save": "Save",
    }
    data.update(overrides)
    return data


def as_the_page_sends_it(model, data: dict) -> dict:
    """A POST body without the admin-only fields: a policy editor's page shows them as text, not inputs."""
    # (The budget caps are inputs here: the records these tests edit judge for no other configuration.)
    return {name: value for name, value in data.items()
            if name not in ADMIN_ONLY_FIELDS[model._meta.label_lower] or name in WHILE_JUDGING}


def stored_row(obj) -> dict:
    """Every stored column of the record, and a configuration's chains, read fresh from the database."""
    row = type(obj).objects.filter(pk=obj.pk).values().get()
    if isinstance(obj, Configuration):
        row["chains"] = snapshot(obj, ["rule_judges", "fallbacks"])
    return row


def readonly_text(html: str, label: str) -> str | None:
    """The text shown read-only beside `label` on an admin change page, tags stripped."""
    match = re.search(rf'<label>{re.escape(label)}:</label>\s*<div class="readonly">(.*?)</div>', html, re.S)
    return re.sub(r"<[^>]+>", "", match.group(1)).strip() if match else None


def label_of(model, name: str) -> str:
    if name == "rule_judges":  # a relation of its own (JudgeLink), labelled by the form
        return "Rule judges"
    return str(capfirst(model._meta.get_field(name).verbose_name))


# --- (a) The admin ----------------------------------------------------------------


def test_superuser_edits_admin_only_configuration_fields(superuser_client, superuser, desk, judges):
    forged = forged_configuration_post(judges[0].pk, judges[1].pk)
    response = superuser_client.post(change_url(desk), configuration_form(desk, **forged, **PUBLISH))
    assert response.status_code == 302, response.content.decode()[:2000]
    desk.refresh_from_db()
    assert desk.context_tags == ["forged"]
    assert desk.rule_mode == "block"
    assert desk.rule_tags == ["forged", "other"]
    assert desk.judge_identifiers() == ["judge-b"]
    assert desk.rule_default == "block"
    assert desk.min_confidence == pytest.approx(0.1)
    assert desk.escalation == judges[0]
    # Saved and published: a release from the administrator's draft, which the governance log names.
    from governance.models import GovernanceEvent

    assert GovernanceEvent.objects.get(decision="draft_published").actor == f"user:{superuser.username}"


def test_superuser_edits_admin_only_provider_fields(superuser_client, gateway):
    response = superuser_client.post(change_url(gateway), provider_post(gateway, **FORGED_PROVIDER, **PUBLISH))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert snapshot(gateway, PROVIDER_LOCKED) == FORGED_PROVIDER


def test_superuser_sees_admin_only_fields_as_inputs(superuser_client, desk):
    html = superuser_client.get(change_url(desk)).content.decode()
    for name in CONFIGURATION_LOCKED:
        assert f'name="{name}"' in html, name
    assert re.search(r'<select name="rule_mode"', html)


# Fields that are not admin-only, so a policy editor gets them as inputs (a provider has no `model`).
# A consumer is changed by administrators only: a policy editor reads it, every field read-only.
EDITABLE_INPUTS = {"governance.configuration": ("model", "timeout"), "governance.provider": ("name", "timeout"),
                   "governance.consumer": (), "governance.mcpserver": ("name", "timeout")}


def record_of(model_label, desk):
    if model_label == "governance.consumer":
        consumer = Consumer(name="kinds-reader")
        consumer.issue_token()
        consumer.save()
        return consumer
    if model_label == "governance.mcpserver":
        from governance.models import McpServer

        return McpServer.objects.create(name="cms", url="http://127.0.0.1:9/mcp",
                                        headers_env={"Authorization": "CMS_MCP_TOKEN"})
    return desk if model_label == "governance.configuration" else desk.provider


@pytest.mark.parametrize("model_label", sorted(ADMIN_ONLY_FIELDS))
def test_policy_editor_sees_admin_only_fields_read_only(editor_client, desk, model_label):
    record = record_of(model_label, desk)
    html = editor_client.get(change_url(record)).content.decode()
    # The page is a form the editor may use: the record's ordinary fields are inputs.
    for name in EDITABLE_INPUTS[model_label]:
        assert f'name="{name}"' in html, f"{name} is not an input"
    for name in (n for n in ADMIN_ONLY_FIELDS[model_label] if n not in WHILE_JUDGING):  # desk judges for none
        assert not re.search(rf'name="{name}"', html), f"{name} is an input"
        assert readonly_text(html, label_of(type(record), name)) is not None, f"{name} is not shown"


def test_policy_editor_reads_the_stored_values(editor_client, desk):
    html = editor_client.get(change_url(desk)).content.decode()
    assert readonly_text(html, "Rule mode") == "report"
    assert readonly_text(html, "Rule tags") == "style, tone"
    assert readonly_text(html, "Rule judges") == "judge-a"
    assert readonly_text(html, "Context tags") == "house-style"
    assert readonly_text(html, "Rule default") == "allow"
    assert readonly_text(html, "Min confidence") == "0.8"
    assert readonly_text(html, "Escalation") == "judge-b"
    assert "<select name=\"rule_mode\"" not in html


def test_policy_editor_saves_the_fields_the_page_offers(editor_client, policy_editor, desk, judges):
    before, live = snapshot(desk, CONFIGURATION_LOCKED), stored_row(desk)
    response = editor_client.post(change_url(desk), as_the_page_sends_it(Configuration, configuration_form(
        desk, model="new-model", system_prompt="Write warmly.", fallbacks=[judges[0].pk],
    )))
    assert response.status_code == 302, response.content.decode()[:2000]
    # Into the editor's draft (SPEC §12.5); the admin-only values as they were, the live row untouched.
    record = draft_record(policy_editor, "configurations", "desk")
    assert (record["model"], record["system_prompt"], record["fallbacks"]) == ("new-model", "Write warmly.", ["judge-a"])
    assert record["rules"]["judges"] == ["judge-a"] and record["context_tags"] == ["house-style"]
    assert record["escalation"] == "judge-b" and record["rules"]["mode"] == "report"
    assert snapshot(desk, CONFIGURATION_LOCKED) == before and stored_row(desk) == live


def test_policy_editor_saves_a_provider_as_the_page_offers_it(editor_client, policy_editor, gateway):
    before = snapshot(gateway, PROVIDER_LOCKED)
    page = as_the_page_sends_it(Provider, provider_post(gateway, timeout=45))
    response = editor_client.post(change_url(gateway), page)
    assert response.status_code == 302, response.content.decode()[:2000]
    record = draft_record(policy_editor, "providers", "gateway")
    assert record["timeout"] == 45
    assert {name: record[name] for name in PROVIDER_LOCKED} == before
    gateway.refresh_from_db()
    assert gateway.timeout == 20


@pytest.mark.parametrize("name", CONFIGURATION_LOCKED)
def test_forged_configuration_post_is_refused_whole(editor_client, desk, judges, name):
    # One forged field is enough; the ordinary change beside it is not saved either.
    before = stored_row(desk)
    forged = {name: forged_configuration_post(judges[0].pk, judges[1].pk)[name]}
    response = editor_client.post(change_url(desk), {
        **as_the_page_sends_it(Configuration, configuration_form(desk, model="new-model")), **forged,
    })
    assert response.status_code == 403
    assert stored_row(desk) == before


def test_forged_configuration_post_of_the_stored_values_is_refused_too(editor_client, desk):
    # The browser never sends these fields, so naming them is forging, whatever the value.
    before = stored_row(desk)
    response = editor_client.post(change_url(desk), configuration_form(desk, model="new-model"))
    assert response.status_code == 403
    assert stored_row(desk) == before


@pytest.mark.parametrize("name", PROVIDER_LOCKED)
def test_forged_provider_post_is_refused_whole(editor_client, gateway, name):
    before = stored_row(gateway)
    response = editor_client.post(change_url(gateway), {
        **as_the_page_sends_it(Provider, provider_post(gateway, timeout=45)), name: FORGED_PROVIDER[name],
    })
    assert response.status_code == 403
    assert stored_row(gateway) == before


ADD_FORM = {
    "identifier": "fresh", "model": "fresh-model", "system_prompt": "", "temperature": "", "max_tokens": "",
    "timeout": 0, "budget_daily_requests": 0, "budget_daily_tokens": 0, "budget_daily_cost": 0,
    "_save": "Save",
}


def test_policy_editor_adds_a_configuration_with_the_defaults(editor_client, policy_editor, gateway):
    response = editor_client.post(reverse("admin:governance_configuration_add"), {**ADD_FORM, "provider": gateway.pk})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Configuration.objects.filter(identifier="fresh").exists()  # a draft's addition, not live
    record = draft_record(policy_editor, "configurations", "fresh")
    defaults = Configuration()
    assert record["context_tags"] == defaults.context_tags and record["read_tools"] == defaults.read_tools
    assert record["rules"] == {"mode": defaults.rule_mode, "tags": defaults.rule_tags, "judges": [],
                               "default": defaults.rule_default, "min_confidence": defaults.min_confidence}
    assert record["escalation"] is None


def test_forged_add_is_refused(editor_client, gateway, judges):
    response = editor_client.post(reverse("admin:governance_configuration_add"), {
        **ADD_FORM, "provider": gateway.pk, **forged_configuration_post(judges[0].pk, judges[1].pk),
    })
    assert response.status_code == 403
    assert not Configuration.objects.filter(identifier="fresh").exists()


def test_forged_revert_is_refused(editor_client, policy_editor, desk, judges):
    # Reverting to a past version is a change POST too.
    version = desk.history.latest()
    url = reverse("admin:governance_configuration_simple_history", args=[desk.pk, version.history_id])
    page = as_the_page_sends_it(Configuration, configuration_form(desk, model="reverted-model"))
    before = stored_row(desk)
    response = editor_client.post(url, {**page, "rule_mode": "block"})
    assert response.status_code == 403
    assert stored_row(desk) == before
    # The same revert without the forged field goes through, into the editor's draft.
    assert editor_client.post(url, page).status_code == 302
    assert draft_record(policy_editor, "configurations", "desk")["model"] == "reverted-model"
    assert stored_row(desk) == before


def test_policy_editor_cannot_add_a_provider(editor_client, db):
    # Its route is admin-only, and a provider without a route reaches nothing.
    url = reverse("admin:governance_provider_add")
    assert editor_client.get(url).status_code == 403
    forged = {"name": "rogue", "kind": "chat", "route": "openai", "timeout": 5}
    assert editor_client.post(url, forged).status_code == 403
    assert not Provider.objects.filter(name="rogue").exists()


def test_a_judge_in_a_chain_cannot_be_deleted_so_the_chain_cannot_break(editor_client, desk):
    # Chains are relations (issue 11): the row a chain points at is protected, and the editor's save goes on.
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        Configuration.objects.filter(identifier="judge-a").delete()
    response = editor_client.post(change_url(desk), as_the_page_sends_it(Configuration, configuration_form(
        desk, model="new-model",
    )))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Configuration.objects.get(pk=desk.pk).judge_identifiers() == ["judge-a"]


def test_admin_save_refuses_even_when_the_form_forgets_to_lock(editor_client, desk, judges, monkeypatch):
    # Second line of defence: were a field left editable by mistake, and the
    # forged POST let through, the save still goes through writes.save_record,
    # which compares with the stored row.
    monkeypatch.setattr(ConfigurationAdmin, "refuse_forged_post", lambda self, request, object_id=None: None)
    monkeypatch.setattr(ConfigurationAdmin, "get_readonly_fields", lambda self, request, obj=None: ())
    monkeypatch.setattr(ConfigurationAdmin, "get_fieldsets", lambda self, request, obj=None: [
        (None, {"fields": [f.name for f in Configuration._meta.concrete_fields if f.editable and not f.primary_key]})
    ])
    before = snapshot(desk, CONFIGURATION_LOCKED)
    response = editor_client.post(change_url(desk), configuration_form(
        desk, model="sneaky-model", **forged_configuration_post(judges[0].pk, judges[1].pk)
    ))
    assert response.status_code == 403
    desk.refresh_from_db()
    assert desk.model == "writer-model"
    assert snapshot(desk, CONFIGURATION_LOCKED) == before


# --- (b) The service layer --------------------------------------------------------


@pytest.mark.parametrize("name", CONFIGURATION_LOCKED)
def test_service_refuses_a_policy_editor_each_configuration_field(policy_editor, desk, name):
    before = snapshot(desk, CONFIGURATION_LOCKED + ("model",))
    with pytest.raises(PermissionDenied) as refused:
        save_record(policy_editor, Configuration.objects.get(pk=desk.pk),
                    {"model": "other-model", name: FORGED_CONFIGURATION[name]})
    # The field as a person knows it (its label), and what to do.
    assert str(refused.value) == (f"Only an administrator may change: {label_of(Configuration, name)}. Ask an "
                                  "administrator to make this change, or leave these fields as they are.")
    assert snapshot(desk, CONFIGURATION_LOCKED + ("model",)) == before


@pytest.mark.parametrize("name", PROVIDER_LOCKED)
def test_service_refuses_a_policy_editor_each_provider_field(policy_editor, gateway, name):
    before = snapshot(gateway, PROVIDER_LOCKED)
    with pytest.raises(PermissionDenied):
        save_record(policy_editor, Provider.objects.get(pk=gateway.pk), {name: FORGED_PROVIDER[name]})
    assert snapshot(gateway, PROVIDER_LOCKED) == before


def test_service_accepts_a_superuser(superuser, desk, judges):
    saved = save_record(superuser, Configuration.objects.get(pk=desk.pk), dict(FORGED_CONFIGURATION))
    assert saved.pk == desk.pk
    stored = snapshot(desk, CONFIGURATION_LOCKED)
    assert stored == {**FORGED_CONFIGURATION, "escalation": judges[0].pk}
    assert desk.judge_identifiers() == ["judge-b"]


def test_service_lets_a_policy_editor_change_the_other_fields(policy_editor, desk):
    save_record(policy_editor, desk, {"model": "other-model", "fallbacks": ["judge-a"], "budget_daily_requests": 50})
    desk.refresh_from_db()
    assert (desk.model, desk.fallback_identifiers(), desk.budget_daily_requests) == ("other-model", ["judge-a"], 50)


def test_service_lets_a_policy_editor_resend_unchanged_admin_only_values(policy_editor, desk):
    # As a form or a policy file would send them: spelled differently, meaning the same.
    save_record(policy_editor, desk, {
        "model": "other-model", "context_tags": ["House-Style"], "rule_mode": "report", "rule_tags": ["STYLE ", "tone"],
        "rule_judges": ["judge-a"], "rule_default": "allow", "min_confidence": "0.8", "escalation": "judge-b",
    })
    desk.refresh_from_db()
    assert desk.model == "other-model"
    assert desk.rule_tags == ["style", "tone"]


def test_service_compares_with_the_stored_row_not_a_stale_copy(superuser, policy_editor, desk):
    stale = Configuration.objects.get(pk=desk.pk)
    save_record(superuser, Configuration.objects.get(pk=desk.pk), {"rule_mode": "block"})
    # Saving the stale copy would put `report` back: that is an admin-only change.
    with pytest.raises(PermissionDenied):
        save_record(policy_editor, stale, {"model": "other-model"})
    desk.refresh_from_db()
    assert (desk.rule_mode, desk.model) == ("block", "writer-model")


def test_service_creates_a_configuration_from_plain_data(policy_editor, gateway):
    created = save_record(policy_editor, Configuration, {
        "identifier": "fresh", "provider": "gateway", "model": "fresh-model", "rule_mode": "off",
    })
    assert created.pk and created.provider == gateway and created.rule_mode == "off"


def test_service_refuses_a_policy_editor_creating_with_admin_only_values(policy_editor, gateway):
    with pytest.raises(PermissionDenied):
        save_record(policy_editor, Configuration, {
            "identifier": "fresh", "provider": "gateway", "model": "fresh-model", "rule_mode": "block",
        })
    with pytest.raises(PermissionDenied):
        save_record(policy_editor, Provider, {"name": "rogue", "kind": "chat", "route": "openai"})
    assert not Configuration.objects.filter(identifier="fresh").exists()
    assert not Provider.objects.filter(name="rogue").exists()


def test_service_lets_a_superuser_create_a_provider(superuser, db):
    created = save_record(superuser, Provider, {"name": "local", "route": "ollama", "trust_zone": "local"})
    assert Provider.objects.get(pk=created.pk).route == "ollama"


@pytest.mark.parametrize("actor", [
    pytest.param(lambda: None, id="nobody"),
    pytest.param(lambda: Consumer(name="admin-app", is_admin=True), id="administrator-consumer"),
    pytest.param(lambda: User.objects.create_user("gone", is_superuser=True, is_staff=True, is_active=False),
                 id="inactive-superuser"),
])
def test_service_refuses_anyone_but_an_active_superuser(desk, actor):
    with pytest.raises(PermissionDenied):
        save_record(actor(), desk, {"rule_mode": "block"})
    assert snapshot(desk, ["rule_mode"]) == {"rule_mode": "report"}


def test_service_validates_before_saving(superuser, desk):
    with pytest.raises(ValidationError) as invalid:
        save_record(superuser, desk, {"rule_judges": ["judge-a", "ghost"], "escalation": "phantom", "color": "red"})
    errors = invalid.value.message_dict
    assert errors["rule_judges"] == ["Unknown configuration: ghost"]
    assert errors["escalation"] == ["Unknown configuration: phantom"]
    assert errors["color"] == ["Unknown field."]
    assert snapshot(desk, ["rule_judges", "escalation"]) == {
        "rule_judges": ["judge-a"], "escalation": desk.escalation_id,
    }


def test_service_refuses_before_it_validates(policy_editor, desk):
    # A refused write says it is refused, even when the value is also invalid.
    with pytest.raises(PermissionDenied):
        save_record(policy_editor, desk, {"escalation": "phantom"})
    with pytest.raises(PermissionDenied):
        save_record(policy_editor, desk, {"min_confidence": "very"})


# --- (c) The REST API: PUT /api/v1/policy --------------------------------------


POLICY_DOCUMENT = {
    "providers": [{"name": "local-test", "kind": "chat", "route": "anthropic", "trust_zone": "external_global"}],
    "configurations": [{"identifier": "newsroom", "provider": "local-test", "model": "test-model",
                        "rules": {"mode": "block", "tags": ["style"]}}],
}


def policy_state() -> dict:
    return {
        "version": PolicyVersion.current(),
        "providers": list(Provider.objects.order_by("pk").values()),
        "configurations": list(Configuration.objects.order_by("pk").values()),
    }


def assert_forbidden(response):
    assert response.status_code == 403
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "fields"}
    assert body["error"]["code"] == "forbidden"
    assert body["error"]["message"] == str(IsAdminConsumer.message)
    assert body["error"]["fields"] == {}


def test_put_policy_refuses_a_consumer_that_is_not_an_administrator(api):
    before = policy_state()
    response = api.put("/api/v1/policy", data=json.dumps(POLICY_DOCUMENT), content_type="application/json")
    assert_forbidden(response)
    assert policy_state() == before


def test_put_policy_refuses_a_yaml_document_too(api):
    before = policy_state()
    document = "configurations:\n  - identifier: newsroom\n    rules: {mode: block}\n"
    response = api.put("/api/v1/policy", data=document, content_type="application/yaml")
    assert_forbidden(response)
    assert policy_state() == before


def test_get_policy_refuses_a_consumer_that_is_not_an_administrator(api):
    assert_forbidden(api.get("/api/v1/policy"))


# --- Consumer.kinds (SPEC §3): granted by an administrator only ----------------------------------------

def test_a_superuser_grants_kinds_in_the_admin_and_a_forged_post_of_an_editor_is_refused(
        superuser_client, editor_client, desk):
    consumer = Consumer(name="labeller")
    consumer.issue_token()
    consumer.save()
    assert consumer.kinds == ["completion"]
    html = superuser_client.get(change_url(consumer)).content.decode()
    assert 'name="kinds" value="internal"' in html and 'name="kinds" value="image_description"' in html
    post = {"name": "labeller", "configurations": [desk.pk], "kinds": ["internal"], "throttle_rate": "",
            "blocks_as": "refusal", "hints_as": "member",
            "_save": "Save"}
    forged = editor_client.post(change_url(consumer), post)
    assert forged.status_code == 403
    assert Consumer.objects.get(pk=consumer.pk).kinds == ["completion"]
    response = superuser_client.post(change_url(consumer), post)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Consumer.objects.get(pk=consumer.pk).kinds == ["completion", "internal"]
    superuser_client.post(change_url(consumer), {**post, "kinds": []})
    assert Consumer.objects.get(pk=consumer.pk).kinds == ["completion"]
