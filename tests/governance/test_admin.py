"""The Django admin as people use it: lists, filters, search, list-as-text fields, the append-only log.

The people (superuser, policy editor) and the policy records are fixtures the
admin-only tests and the browser tests import from here.
"""
import re

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from governance.admin import ListTextField, OrderedConfigurationsField, TagListField
from governance.models import Configuration, Consumer, GovernanceEvent, JudgeLink, Provider, set_links
from snippets.models import Snippet
from tests.governance.drafted import PUBLISH

# What a policy editor may do (SPEC §1): edit policy records, read the log and consumers.
EDITOR_PERMISSIONS = (
    "add_configuration", "change_configuration", "view_configuration",
    "add_provider", "change_provider", "view_provider",
    "add_snippet", "change_snippet", "view_snippet",
    "view_consumer", "view_governanceevent",
    "change_mcpserver", "view_mcpserver",
)


# --- People -------------------------------------------------------------------


# Without a password (force_login needs none): hashing one costs most of a test's time.
@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.org", None)


@pytest.fixture
def policy_editor(db):
    user = User.objects.create_user("editor", "editor@example.org", None, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=EDITOR_PERMISSIONS))
    return user


@pytest.fixture
def superuser_client(superuser):
    client = Client()
    client.force_login(superuser)
    return client


@pytest.fixture
def editor_client(policy_editor):
    client = Client()
    client.force_login(policy_editor)
    return client


# --- Policy records -----------------------------------------------------------


@pytest.fixture
def gateway(db):
    return Provider.objects.create(
        name="gateway", kind="chat", route="openai", api_base="https://llm.example.org/v1",
        api_key_env="GATEWAY_API_KEY", trust_zone="private_hosted", timeout=20,
    )


@pytest.fixture
def judges(gateway):
    return [
        Configuration.objects.create(identifier="judge-a", provider=gateway, model="judge-model"),
        Configuration.objects.create(identifier="judge-b", provider=gateway, model="judge-model"),
    ]


@pytest.fixture
def desk(gateway, judges):
    """A configuration whose admin-only fields all hold non-default values."""
    desk = Configuration.objects.create(
        identifier="desk", provider=gateway, model="writer-model", system_prompt="Write plainly.",
        context_tags=["house-style"], rule_mode="report", rule_tags=["style", "tone"],
        rule_default="allow", min_confidence=0.8, escalation=judges[1],
    )
    set_links(desk, "fallbacks", [judges[1]])
    set_links(desk, "rule_judges", [judges[0]])
    return desk


@pytest.fixture
def snippet(db):
    return Snippet.objects.create(
        identifier="house-style", name="House style", tags=["style", "tone"],
        body="Use short sentences.\n\n  Never promise delivery dates.  \nName the source of a figure.",
    )


@pytest.fixture
def event(db):
    return GovernanceEvent.objects.create(
        correlation_id="corr-1234567890abcdef", decision="blocked", check_name="term_list",
        configuration="desk", provider="gateway", model="writer-model", actor="editor", mode="block",
        detail={"list": "Competitors", "terms": ["Acme", "Globex"]},
    )


def configuration_form(config: Configuration, **overrides) -> dict:
    """The POST body of the configuration change form, as the page would send it."""
    data = {
        "identifier": config.identifier,
        "provider": config.provider_id,
        "model": config.model,
        "system_prompt": config.system_prompt,
        "temperature": "" if config.temperature is None else config.temperature,
        "max_tokens": "" if config.max_tokens is None else config.max_tokens,
        "timeout": config.timeout,
        # Picked configurations are sent by primary key, in chain order (one value each).
        "fallbacks": [c.pk for c in config.ordered_fallbacks()],
        "budget_daily_requests": config.budget_daily_requests,
        "budget_daily_tokens": config.budget_daily_tokens,
        "budget_daily_cost": config.budget_daily_cost,
        "context_tags": ", ".join(config.context_tags),
        "rule_mode": config.rule_mode,
        "rule_tags": ", ".join(config.rule_tags),
        "rule_judges": [c.pk for c in config.ordered_judges()],
        "rule_default": config.rule_default,
        "min_confidence": config.min_confidence,
        "escalation": config.escalation_id or "",
        "_save": "Save",
    }
    data.update(overrides)
    return data


def change_url(obj) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def changelist_url(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def pks(*identifiers) -> list[int]:
    found = dict(Configuration.objects.filter(identifier__in=identifiers).values_list("identifier", "pk"))
    return [found[name] for name in identifiers]


def selected_options(html: str, name: str) -> list[str]:
    """The labels of the selected options of the select called `name`, in page order."""
    select = re.search(rf'<select[^>]*name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, f"no select named {name}"
    return re.findall(r"<option[^>]*selected[^>]*>([^<]*)</option>", select.group(1))


def input_value(html: str, name: str) -> str:
    """The value attribute of the text input called `name` in a rendered form."""
    tag = re.search(rf'<input[^>]*name="{name}"[^>]*>', html)
    assert tag, f"no input named {name}"
    value = re.search(r'value="([^"]*)"', tag.group(0))
    return value.group(1) if value else ""


# --- Lists, filters, search ---------------------------------------------------


@pytest.fixture
def everything(desk, snippet, event, make_consumer):
    consumer, _token = make_consumer("newsroom-app", [desk])
    return {"provider": desk.provider, "configuration": desk, "consumer": consumer, "event": event,
            "snippet": snippet}


CHANGELISTS = [
    (Provider, {"q": "gateway", "kind__exact": "chat", "trust_zone__exact": "private_hosted"}, "gateway"),
    (Configuration, {"q": "desk", "rule_mode__exact": "report", "provider__kind__exact": "chat"}, "desk"),
    (Consumer, {"q": "newsroom", "is_admin__exact": "0", "revoked_at__isempty": "1"}, "newsroom-app"),
    (GovernanceEvent, {"q": "corr-1234567890abcdef", "decision__exact": "blocked", "check_name__exact": "term_list"},
     "corr-1234567"),
    (Snippet, {"q": "house", "is_active__exact": "1", "tag": "style"}, "house-style"),
]


@pytest.mark.parametrize(("model", "query", "expected"), CHANGELISTS, ids=lambda v: getattr(v, "__name__", None))
def test_changelist_renders_with_filters_and_search(superuser_client, everything, model, query, expected):
    plain = superuser_client.get(changelist_url(model))
    assert plain.status_code == 200
    html = plain.content.decode()
    assert 'id="changelist-filter"' in html
    assert 'id="searchbar"' in html

    filtered = superuser_client.get(changelist_url(model), query)
    assert filtered.status_code == 200
    assert expected in filtered.content.decode()
    assert filtered.context["cl"].result_count == 1


@pytest.mark.parametrize("key", ["provider", "configuration", "consumer", "event", "snippet"])
def test_change_page_renders(superuser_client, everything, key):
    response = superuser_client.get(change_url(everything[key]))
    assert response.status_code == 200


def test_search_that_matches_nothing_lists_nothing(superuser_client, everything):
    response = superuser_client.get(changelist_url(Configuration), {"q": "no-such-thing"})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0


def test_snippet_tag_filter_matches_whole_tags_only(superuser_client, snippet):
    Snippet.objects.create(identifier="lifestyle-desk", name="Lifestyle", tags=["lifestyle"], body="Be warm.")
    response = superuser_client.get(changelist_url(Snippet), {"tag": "style"})
    assert [s.identifier for s in response.context["cl"].result_list] == ["house-style"]


def test_configuration_changelist_shows_lists_as_text(superuser_client, desk):
    html = superuser_client.get(changelist_url(Configuration)).content.decode()
    assert "style, tone" in html
    assert "judge-a" in html
    assert "By provider kind" in html and "By provider trust zone" in html


# --- Comma-separated list fields ----------------------------------------------


def test_list_text_field_round_trips():
    field = ListTextField(required=False)
    assert field.prepare_value(["judge-a", "judge-b"]) == "judge-a, judge-b"
    assert field.clean(" judge-a ,judge-b,, judge-a,\n") == ["judge-a", "judge-b"]
    assert field.clean("") == []
    assert field.clean(field.prepare_value(["x", "y"])) == ["x", "y"]


def test_tag_list_field_lower_cases_and_deduplicates():
    assert TagListField(required=False).clean("Style, TONE , style") == ["style", "tone"]


@pytest.mark.django_db
def test_ordered_configurations_field_keeps_the_order_given(judges):
    field = OrderedConfigurationsField(JudgeLink._meta.get_field("judge"))
    a, b = judges
    assert field.clean([str(b.pk), str(a.pk)]) == [b, a]
    assert field.clean([]) == []
    with pytest.raises(Exception) as refused:
        field.clean([str(a.pk), "999999"])
    assert "Select a valid choice" in str(refused.value)


def test_configuration_form_shows_chains_in_order_and_tags_as_text(superuser_client, desk, judges):
    set_links(desk, "rule_judges", [judges[1], judges[0]])
    html = superuser_client.get(change_url(desk)).content.decode()
    assert input_value(html, "rule_tags") == "style, tone"
    assert selected_options(html, "rule_judges") == ["judge-b", "judge-a"]
    assert selected_options(html, "fallbacks") == ["judge-b"]
    assert input_value(html, "context_tags") == "house-style"
    # The pickers search configurations as the person types (the admin's autocomplete).
    assert 'data-ajax--url="/admin/autocomplete/"' in html


def test_configuration_chains_are_saved_in_the_order_picked(superuser_client, desk, judges):
    other = Configuration.objects.create(identifier="spare", provider=desk.provider, model="m")
    response = superuser_client.post(change_url(desk), configuration_form(
        desk, fallbacks=pks("spare", "judge-b"), rule_judges=pks("judge-b", "judge-a"),
        rule_tags="Tone,  STYLE, tone, ", context_tags="", **PUBLISH,
    ))
    assert response.status_code == 302, response.content.decode()[:2000]
    desk.refresh_from_db()
    assert desk.fallback_identifiers() == ["spare", "judge-b"]
    assert desk.judge_identifiers() == ["judge-b", "judge-a"]
    assert desk.rule_tags == ["tone", "style"]
    assert desk.context_tags == []
    # And back, in the same order.
    html = superuser_client.get(change_url(desk)).content.decode()
    assert input_value(html, "rule_tags") == "tone, style"
    assert selected_options(html, "rule_judges") == ["judge-b", "judge-a"]
    assert other.pk in [c.pk for c in desk.ordered_fallbacks()]


def test_an_unknown_configuration_is_refused_and_nothing_is_saved(superuser_client, desk):
    response = superuser_client.post(change_url(desk), configuration_form(
        desk, model="changed-model", fallbacks=[*pks("judge-a"), 999999],
    ))
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    desk.refresh_from_db()
    assert desk.model == "writer-model"
    assert desk.fallback_identifiers() == ["judge-b"]
    assert desk.judge_identifiers() == ["judge-a"]


def test_a_configuration_cannot_fall_back_to_itself(superuser_client, desk):
    # The picker does not offer the configuration itself; a forged value is still refused.
    response = superuser_client.post(change_url(desk), configuration_form(desk, fallbacks=[desk.pk]))
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert desk.fallback_identifiers() == ["judge-b"]


def test_snippet_tags_round_trip(superuser_client, snippet):
    html = superuser_client.get(change_url(snippet)).content.decode()
    assert input_value(html, "tags") == "style, tone"
    response = superuser_client.post(change_url(snippet), {
        "identifier": snippet.identifier, "name": snippet.name, "tags": "Voice, STYLE , voice",
        "data_class": "", "is_active": "on", "sort": "0", "body": snippet.body, **PUBLISH,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    snippet.refresh_from_db()
    assert snippet.tags == ["voice", "style"]


def test_snippet_change_page_numbers_lines_as_rules_cite_them(superuser_client, snippet):
    html = superuser_client.get(change_url(snippet)).content.decode()
    # Line 2 is empty: it is no rule, and line 3 keeps its own number.
    assert re.findall(r"<li value='(\d+)'>([^<]*)</li>", html) == [
        ("1", "Use short sentences."),
        ("3", "Never promise delivery dates."),
        ("4", "Name the source of a figure."),
    ]
    assert "3 rules." in html


def test_snippet_add_page_explains_numbering_comes_after_saving(superuser_client, db):
    response = superuser_client.get(reverse("admin:snippets_snippet_add"))
    assert response.status_code == 200
    assert "Save the snippet to see its lines numbered." in response.content.decode()


# --- Consumers ----------------------------------------------------------------


def test_consumers_cannot_be_added_in_the_admin(superuser_client, db):
    assert superuser_client.get(reverse("admin:governance_consumer_add")).status_code == 403
    html = superuser_client.get(changelist_url(Consumer)).content.decode()
    assert reverse("admin:governance_consumer_add") not in html


def test_revoke_action_revokes_tokens(superuser_client, desk, make_consumer):
    keep, _ = make_consumer("keep-app", [desk])
    drop, _ = make_consumer("drop-app", [desk])
    response = superuser_client.post(changelist_url(Consumer), {
        "action": "revoke", "_selected_action": [drop.pk],
    })
    assert response.status_code == 302
    drop.refresh_from_db()
    keep.refresh_from_db()
    assert drop.revoked_at is not None and not drop.is_active
    assert keep.revoked_at is None


def test_consumers_filter_by_configuration(superuser_client, desk, judges, make_consumer):
    make_consumer("desk-app", [desk])
    make_consumer("judge-app", [judges[0]])
    response = superuser_client.get(changelist_url(Consumer), {"configurations__id__exact": desk.pk})
    assert response.status_code == 200
    assert [c.name for c in response.context["cl"].result_list] == ["desk-app"]


def test_consumer_page_never_shows_the_token_hash(superuser_client, make_consumer, desk):
    consumer, token = make_consumer("desk-app", [desk])
    html = superuser_client.get(change_url(consumer)).content.decode()
    assert consumer.token_hash not in html
    assert token not in html


def test_policy_editor_can_view_but_not_change_consumers(editor_client, make_consumer, desk):
    consumer, _ = make_consumer("desk-app", [desk])
    assert editor_client.get(change_url(consumer)).status_code == 200
    response = editor_client.post(change_url(consumer), {"name": "desk-app", "is_admin": "on",
                                                         "configurations": [desk.pk], "throttle_rate": ""})
    assert response.status_code == 403
    consumer.refresh_from_db()
    assert consumer.is_admin is False


# --- Governance log -----------------------------------------------------------


def test_governance_event_detail_is_pretty_printed(superuser_client, event):
    html = superuser_client.get(change_url(event)).content.decode()
    assert '<pre class="gavel-json">' in html
    assert '&quot;terms&quot;: [\n    &quot;Acme&quot;,' in html
    assert 'name="decision"' not in html


def test_governance_events_cannot_be_added(superuser_client, db):
    assert superuser_client.get(reverse("admin:governance_governanceevent_add")).status_code == 403
    response = superuser_client.post(reverse("admin:governance_governanceevent_add"), {
        "correlation_id": "forged", "decision": "blocked", "check_name": "term_list",
    })
    assert response.status_code == 403
    assert not GovernanceEvent.objects.filter(correlation_id="forged").exists()


def test_governance_events_cannot_be_changed(superuser_client, event):
    response = superuser_client.post(change_url(event), {
        "correlation_id": event.correlation_id, "decision": "reported", "check_name": "term_list",
        "configuration": "elsewhere", "_save": "Save",
    })
    assert response.status_code == 403
    event.refresh_from_db()
    assert (event.decision, event.configuration) == ("blocked", "desk")


def test_governance_events_cannot_be_deleted(superuser_client, event):
    delete_url = reverse("admin:governance_governanceevent_delete", args=[event.pk])
    assert superuser_client.get(delete_url).status_code == 403
    assert superuser_client.post(delete_url, {"post": "yes"}).status_code == 403
    # Nor through the changelist's bulk action, which is not offered at all.
    html = superuser_client.get(changelist_url(GovernanceEvent)).content.decode()
    assert "delete_selected" not in html
    superuser_client.post(changelist_url(GovernanceEvent), {
        "action": "delete_selected", "_selected_action": [event.pk], "post": "yes",
    })
    assert GovernanceEvent.objects.filter(pk=event.pk).exists()


def test_correlation_link_lists_every_event_of_one_screening(superuser_client, event):
    GovernanceEvent.objects.create(correlation_id=event.correlation_id, decision="reported",
                                   check_name="pattern_rules", configuration="desk")
    GovernanceEvent.objects.create(correlation_id="other-screening", decision="reported",
                                   check_name="pattern_rules", configuration="desk")
    html = superuser_client.get(changelist_url(GovernanceEvent)).content.decode()
    assert f'href="?q={event.correlation_id}"' in html
    response = superuser_client.get(changelist_url(GovernanceEvent), {"q": event.correlation_id})
    assert response.context["cl"].result_count == 2
