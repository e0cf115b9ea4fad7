"""Fixes for a reviewer's findings: the tests each fix makes pass, and a few guarding what must not change."""
import io
import json
import logging

import pytest
from django.contrib import admin
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.handlers.asgi import ASGIRequest
from django.core.management import call_command
from django.core.validators import RegexValidator
from django.db.models import ProtectedError, QuerySet
from django.middleware.common import CommonMiddleware
from django.test import Client, RequestFactory, override_settings
from django.urls import get_resolver, reverse
from django.utils.html import escape
from rest_framework.test import APIClient

from governance import policy
from governance.admin import ConfigurationAdmin
from governance.api.views import ScreeningsView
from governance.models import THROTTLE_RATE_RE, Configuration, Consumer, PolicyVersion, set_links
from governance.records.writes import configuration_delete_blockers
from termlists.models import TermList
from tests.governance.test_admin import gateway, superuser, superuser_client  # noqa: F401  (fixtures)
from tests.governance.test_api_errors import admin_api, assert_error  # noqa: F401  (admin_api: a fixture)
from tests.governance.drafted import PUBLISH

pytestmark = pytest.mark.django_db


# --- 1. No Django error page (and no trace) under /api/ or /healthz, whatever raised -----------


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/api/v1/schema/", "/api/v1/screenings", "/healthz/"])
def test_a_disallowed_host_is_a_json_400(path, debug):  # GET /healthz is the probe: tests/governance/test_health_probe.py
    with override_settings(DEBUG=debug):
        response = Client().get(path, HTTP_HOST="evil.example")
    assert_error(response, 400, "bad_request")


def explode(*args, **kwargs):
    raise RuntimeError("secret in /srv/gavel/governance/settings.py")


@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("debug", [False, True])
def test_an_error_in_a_middleware_is_a_json_500_logged_with_the_request_id(monkeypatch, caplog, debug, propagate):
    monkeypatch.setattr(CommonMiddleware, "process_request", explode)
    with override_settings(DEBUG=debug, DEBUG_PROPAGATE_EXCEPTIONS=propagate), caplog.at_level(logging.ERROR):
        response = Client(raise_request_exception=False).get("/api/v1/schema/", HTTP_X_REQUEST_ID="req-42")
    assert_error(response, 500, "server_error")
    assert "secret" not in response.content.decode()
    assert response["X-Request-ID"] == "req-42"
    assert any("req-42" in record.getMessage() for record in caplog.records if record.name.startswith("gavel."))


def test_pages_outside_the_json_paths_stay_django_pages(monkeypatch):
    monkeypatch.setattr(CommonMiddleware, "process_request", explode)
    response = Client(raise_request_exception=False).get("/admin/login/")
    assert response.status_code == 500
    assert not response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize("status, code", [(400, "bad_request"), (403, "forbidden"), (404, "not_found"),
                                          (500, "server_error")])
def test_djangos_error_handlers_answer_json_under_the_api(status, code):
    handler = get_resolver().resolve_error_handler(status)
    for path in ("/api/v1/screenings", "/healthz"):
        request = RequestFactory().get(path)
        response = handler(request) if status == 500 else handler(request, Exception("inside"))
        response["X-Request-ID"] = "set by the middleware"
        assert_error(response, status, code)
    page = RequestFactory().get("/admin/")
    response = handler(page) if status == 500 else handler(page, Exception("inside"))
    assert response.status_code == status
    assert not response["Content-Type"].startswith("application/json")


# --- 2. An unreadable `since` is a 400 naming the field --------------------------------------------


@pytest.mark.parametrize("since", ["2024-13-45T00:00:00", "2024-02-30", "yesterday", ""])
def test_events_since_that_is_not_a_date_time_is_a_400(admin_api, since):
    response = admin_api.get("/api/v1/events", {"since": since})
    error = assert_error(response, 400, "invalid")
    assert list(error["fields"]) == ["since"]


def test_events_since_a_date_time_still_filters(admin_api):
    response = admin_api.get("/api/v1/events", {"since": "2024-02-29T12:00:00+00:00"})
    assert response.status_code == 200 and response.json() == []


# --- 3. A consumer's throttle rate is validated, and an unreadable stored one never fails a call ---


@pytest.mark.parametrize("rate", ["fast", "0/min", "5/fortnight", "5", "/min"])
def test_an_unreadable_throttle_rate_is_refused_at_save(rate):
    consumer = Consumer(name="app", throttle_rate=rate)
    consumer.issue_token()
    with pytest.raises(ValidationError) as caught:
        consumer.full_clean()
    assert list(caught.value.message_dict) == ["throttle_rate"]


@pytest.mark.parametrize("rate", ["", "120/min", "5000/day", "1/s"])
def test_a_readable_throttle_rate_is_accepted(rate):
    consumer = Consumer(name="app", throttle_rate=rate)
    consumer.issue_token()
    consumer.full_clean()


def test_the_command_and_the_model_share_one_rate_syntax():
    from governance.management.commands import create_consumer

    assert create_consumer.THROTTLE_RATE_RE is THROTTLE_RATE_RE
    validators = Consumer._meta.get_field("throttle_rate").validators
    assert [v.regex.pattern for v in validators if isinstance(v, RegexValidator)] == [THROTTLE_RATE_RE.pattern]


@override_settings(GAVEL_THROTTLE_RATE="2/min")
def test_a_stored_unreadable_rate_falls_back_to_the_default_with_a_warning(make_consumer, configuration, caplog):
    _, token = make_consumer("fast", [configuration], throttle_rate="fast")  # saved without full_clean
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"configuration": "newsroom", "text": "x"}
    with caplog.at_level(logging.WARNING, logger="gavel.api"):
        statuses = [client.post("/api/v1/screenings", body, format="json").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert any("fast" in record.getMessage() and "GAVEL_THROTTLE_RATE" in record.getMessage()
               for record in caplog.records)


# --- 4. `screen` exits 3 on anything unexpected, with the error shape and no trace on stdout ---------


def test_screen_exits_3_on_an_unexpected_error(configuration, monkeypatch, caplog):
    monkeypatch.setattr("governance.screening.service.screen", explode)
    out, err = io.StringIO(), io.StringIO()
    with caplog.at_level(logging.ERROR, logger="gavel.cli"), pytest.raises(SystemExit) as caught:
        call_command("screen", "--configuration", "newsroom", "-", stdin=io.StringIO("Hello."), stdout=out,
                     stderr=err)
    assert caught.value.code == 3
    body = json.loads(out.getvalue())
    assert body == {"error": {"code": "server_error", "fields": {},
                              "message": "Gavel could not complete the screening; it has been logged."}}
    assert "Traceback" not in out.getvalue() and "secret" not in out.getvalue()
    assert [record.exc_info[0] for record in caplog.records] == [RuntimeError]


# --- 5. The body's real size counts, not only its Content-Length ----------------------------------


def asgi_screening(token: str, body: bytes, content_length: int | None):
    """A POST as an ASGI server hands it over: the body is read whatever Content-Length says."""
    headers = [(b"authorization", f"Bearer {token}".encode()), (b"content-type", b"application/json")]
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode()))
    scope = {"type": "http", "method": "POST", "path": "/api/v1/screenings", "query_string": b"",
             "headers": headers}
    request = ASGIRequest(scope, io.BytesIO(body))
    request.request_id = request.correlation_id = "review-fix-5"
    return ScreeningsView.as_view()(request)


@pytest.mark.parametrize("content_length", [None, 10])
@override_settings(GAVEL_MAX_TEXT_BYTES=1000)
def test_a_body_over_the_limit_is_413_whatever_its_content_length_says(make_consumer, configuration,
                                                                        content_length):
    _, token = make_consumer("app", [configuration])
    body = json.dumps({"configuration": "newsroom", "text": "x" * 2000}).encode()
    response = asgi_screening(token, body, content_length).render()
    response["X-Request-ID"] = "set by the middleware"
    assert_error(response, 413, "too_large")


@override_settings(GAVEL_MAX_TEXT_BYTES=1000)
def test_a_body_under_the_limit_is_still_screened(make_consumer, configuration):
    _, token = make_consumer("app", [configuration])
    body = json.dumps({"configuration": "newsroom", "text": "x" * 500}).encode()
    assert asgi_screening(token, body, len(body)).status_code == 200


@override_settings(GAVEL_MAX_TEXT_BYTES=1000, DATA_UPLOAD_MAX_MEMORY_SIZE=100)
def test_djangos_own_body_limit_is_our_413(api):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": "x" * 500}, format="json")
    assert_error(response, 413, "too_large")


# --- 6. The policy version's row exists from the migrations on; bump never loses an edit ------------


def test_the_policy_version_row_is_made_by_a_migration():
    # Tests that flush the database (live server, worker) remove the row, so
    # run the migration's own step on an empty table rather than rely on order.
    import importlib

    from django.apps import apps

    migration = importlib.import_module("governance.migrations.0003_policy_version_row")
    PolicyVersion.objects.all().delete()
    migration.create_row(apps, None)
    assert PolicyVersion.objects.get(pk=1).value == 1


def test_bump_makes_a_missing_row():
    PolicyVersion.objects.all().delete()
    PolicyVersion.bump()
    assert PolicyVersion.current() == 2


def test_bump_counts_its_edit_when_another_process_made_the_row_first(monkeypatch):
    # Our UPDATE finds no row; another process then inserts it before our INSERT.
    PolicyVersion.objects.all().delete()
    real_update = QuerySet.update
    calls = []

    def update(queryset, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            PolicyVersion.objects.create(pk=1, value=5)
            return 0
        return real_update(queryset, **kwargs)

    monkeypatch.setattr(QuerySet, "update", update)
    PolicyVersion.bump()
    assert PolicyVersion.current() == 6


# --- 7. A configuration something refers to cannot be deleted behind the administrators' back -------


@pytest.fixture
def referenced(gateway):
    """`target` is named by others in every way; `loner` by nobody."""
    target = Configuration.objects.create(identifier="target", provider=gateway, model="m")
    loner = Configuration.objects.create(identifier="loner", provider=gateway, model="m")
    set_links(Configuration.objects.create(identifier="by-fallback", provider=gateway, model="m"), "fallbacks", [target])
    set_links(Configuration.objects.create(identifier="by-judge", provider=gateway, model="m"), "rule_judges", [target])
    Configuration.objects.create(identifier="by-escalation", provider=gateway, model="m", escalation=target)
    only = TermList.objects.create(name="Only target")
    only.configurations.set([target])
    shared = TermList.objects.create(name="Shared")
    shared.configurations.set([target, loner])
    return target, loner


BLOCKERS = [
    "Configuration “by-escalation” escalates to “target”.",
    "Configuration “by-fallback” names “target” as a fallback.",
    "Configuration “by-judge” names “target” as a rule judge.",
    "Term list “Only target” applies to “target” alone.",
]


def test_delete_blockers_name_everything_that_refers(referenced):
    target, loner = referenced
    assert configuration_delete_blockers([target]) == BLOCKERS
    assert configuration_delete_blockers([loner]) == []


def test_delete_blockers_judge_the_configurations_together(referenced):
    target, loner = referenced
    referrers = list(Configuration.objects.filter(identifier__startswith="by-"))
    # What refers from inside the set goes with it; a list left without any scope still blocks.
    assert configuration_delete_blockers([target, *referrers]) == [BLOCKERS[-1]]
    assert configuration_delete_blockers([target, loner]) == [
        *BLOCKERS, "Term list “Shared” applies only to configurations deleted here: loner, target.",
    ]


def test_escalation_protects_its_target(referenced):
    with pytest.raises(ProtectedError):
        referenced[0].delete()


def test_the_admin_refuses_to_delete_a_configuration_others_refer_to(superuser_client, referenced):
    target = referenced[0]
    url = reverse("admin:governance_configuration_delete", args=[target.pk])
    for response in (superuser_client.get(url), superuser_client.post(url, {"post": "yes"})):
        assert response.status_code == 200
        html = response.content.decode()
        assert "Cannot delete" in html
        for blocker in BLOCKERS:
            assert escape(blocker) in html, blocker
    assert Configuration.objects.filter(pk=target.pk).exists()


def test_the_admin_bulk_delete_refuses_too(superuser_client, referenced):
    target, loner = referenced
    response = superuser_client.post(reverse("admin:governance_configuration_changelist"), {
        "action": "delete_selected", "_selected_action": [target.pk, loner.pk], "post": "yes",
    })
    assert response.status_code == 200
    assert escape(BLOCKERS[0]) in response.content.decode()
    assert Configuration.objects.filter(pk__in=[target.pk, loner.pk]).count() == 2


def test_the_admin_deletes_a_configuration_nobody_refers_to(superuser_client, referenced):
    loner = referenced[1]
    page = superuser_client.get(reverse("admin:governance_configuration_delete", args=[loner.pk])).content.decode()
    assert 'name="_gavel_publish" value="Delete and publish"' in page
    # Delete and publish: the deletion is recorded in the administrator's draft and released at once.
    response = superuser_client.post(reverse("admin:governance_configuration_delete", args=[loner.pk]),
                                     {"post": "yes", **PUBLISH})
    assert response.status_code == 302
    assert not Configuration.objects.filter(pk=loner.pk).exists()
    assert list(TermList.objects.get(name="Shared").configurations.values_list("identifier", flat=True)) == ["target"]


def test_delete_model_refuses_a_blocked_configuration_past_the_confirmation(rf, referenced):
    with pytest.raises(PermissionDenied, match="by-fallback"):
        ConfigurationAdmin(Configuration, admin.site).delete_model(rf.post("/"), referenced[0])
    assert Configuration.objects.filter(pk=referenced[0].pk).exists()


def test_prune_removes_configurations_that_escalate_to_each_other():
    policy.import_policy({
        "providers": [{"name": "local", "route": "ollama"}],
        "configurations": [
            {"identifier": "a", "provider": "local", "model": "m", "escalation": "b"},
            {"identifier": "b", "provider": "local", "model": "m", "escalation": "a"},
            {"identifier": "c", "provider": "local", "model": "m"},
        ],
    })
    report = policy.import_policy({"configurations": [{"identifier": "c", "provider": "local", "model": "m"}]},
                                  prune=True)
    assert report.removed == ["configurations:a", "configurations:b"]
    assert list(Configuration.objects.values_list("identifier", flat=True)) == ["c"]
