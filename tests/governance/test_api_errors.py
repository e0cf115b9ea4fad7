"""Every error status of SPEC §11.1, each with the one error body shape, and never a stack trace.

The body is always {"error": {"code", "message", "fields"}}; bad input writes nothing.
"""
import json

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from governance.models import Configuration, GovernanceEvent, PolicyVersion, Provider, UsageDay

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "Hello."}]
LEAKS = ("Traceback", 'File "', ".py", "/work/", "site-packages")


def assert_error(response, status: int, code: str | None = None) -> dict:
    """The one error shape, as JSON, with a request id and nothing from the inside of Gavel."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    assert response["X-Request-ID"]
    body = json.loads(response.content)
    assert list(body) == ["error"]
    error = body["error"]
    assert set(error) == {"code", "message", "fields"}
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["fields"], dict)
    for path, messages in error["fields"].items():
        assert isinstance(path, str)
        assert isinstance(messages, list) and messages and all(isinstance(m, str) for m in messages)
    for leak in LEAKS:
        assert leak not in response.content.decode(), leak
    if code is not None:
        assert error["code"] == code
    return error


def screen(client, body, **extra):
    return client.post("/api/v1/screenings", json.dumps(body), content_type="application/json", **extra)


def client_with(token: str | None, keyword: str = "Bearer") -> APIClient:
    client = APIClient()
    if token is not None:
        client.credentials(HTTP_AUTHORIZATION=f"{keyword} {token}")
    return client


@pytest.fixture
def other(db, provider):
    """A configuration that exists but that the `api` consumer was not granted."""
    return Configuration.objects.create(identifier="intranet", provider=provider, model="test-model")


@pytest.fixture
def admin_api(make_consumer):
    return client_with(make_consumer("ops", is_admin=True)[1])


# --- 400: bad input ---
def test_unknown_keys_are_named(api):
    error = assert_error(screen(api, {"configuration": "newsroom", "text": "x", "colour": "red", "urgent": True}),
                         400, "invalid")
    assert error["fields"] == {"colour": ["Unknown field."], "urgent": ["Unknown field."]}


def test_unknown_nested_keys_are_named_with_their_path(api):
    body = {"configuration": "newsroom", "text": "x", "tool_calls": [{"name": "a", "arguments": {}},
                                                                    {"name": "b", "arguments": {}, "colour": 1}]}
    error = assert_error(screen(api, body), 400, "invalid")
    assert error["fields"] == {"tool_calls[1].colour": ["Unknown field."]}


def test_unknown_keys_on_completions_are_named(api):
    response = api.post("/api/v1/completions", {"configuration": "newsroom", "messages": USER, "temperature": 1},
                        format="json")
    assert assert_error(response, 400, "invalid")["fields"] == {"temperature": ["Unknown field."]}


@pytest.mark.parametrize("field, value", [
    ("text", 42),
    ("text", ["a", "b"]),
    ("text", {"a": 1}),
    ("text", None),
    ("configuration", 7),
    ("also", "intranet"),
    ("also", [1]),
    ("offers_tools", "yes"),
    ("offers_tools", 1),
    ("tool_calls", {"name": "a", "arguments": {}}),
    ("tool_calls", [{"name": "a", "arguments": 5}]),
    ("tool_calls", [{"name": "a", "arguments": "not json"}]),
    ("read_tools", [1]),
    ("format", "xml"),
    ("kind", "poem"),
    ("language", "not a language"),
])
def test_wrong_types_and_shapes_are_refused(api, field, value):
    body = {"configuration": "newsroom", "text": "x", field: value}
    error = assert_error(screen(api, body), 400, "invalid")
    assert [path.split("[")[0].split(".")[0] for path in error["fields"]] == [field]
    assert GovernanceEvent.objects.count() == 0


@pytest.mark.parametrize("field, value", [
    ("messages", "Hello."),
    ("messages", []),
    ("messages", [{"role": "robot", "content": "x"}]),
    ("messages", [{"role": "user", "content": 5}]),
    ("stream", "true"),
    ("tools", [{"type": "function", "function": {}}]),
])
def test_wrong_completion_input_is_refused_before_any_provider(api, provider_server, field, value):
    body = {"configuration": "newsroom", "messages": USER, field: value}
    error = assert_error(api.post("/api/v1/completions", body, format="json"), 400, "invalid")
    assert [path.split("[")[0].split(".")[0] for path in error["fields"]] == [field]
    assert provider_server.requests == []


@pytest.mark.parametrize("raw, content_type", [
    ('{"configuration": "newsroom", "text": ', "application/json"),
    ("text=hello", "text/plain"),
    ("\xff\xfe", "application/json"),
])
def test_a_body_that_is_not_json_is_refused(api, raw, content_type):
    assert_error(api.post("/api/v1/screenings", raw, content_type=content_type), 400, "malformed")


@pytest.mark.parametrize("body", [[1, 2], "text", 3])
def test_a_body_that_is_not_an_object_is_refused(api, body):
    assert_error(screen(api, body), 400, "invalid")


def test_format_json_with_text_that_is_not_json(api):
    error = assert_error(screen(api, {"configuration": "newsroom", "text": "{'single': quotes}", "format": "json"}),
                         400, "invalid")
    assert list(error["fields"]) == ["text"]


def test_unknown_served_by(api):
    # Any slug keeps the schema; one naming no provider is an unknown record, as a configuration is (issue 41).
    error = assert_error(screen(api, {"configuration": "newsroom", "text": "x", "served_by": "nobody"}), 404,
                         "unknown_provider")
    assert list(error["fields"]) == ["served_by"]
    assert "nobody" in error["fields"]["served_by"][0]


def test_a_known_served_by_is_accepted(api, provider):
    assert screen(api, {"configuration": "newsroom", "text": "x", "served_by": provider.name}).status_code == 200


# --- 413 ---
@override_settings(GAVEL_MAX_TEXT_BYTES=200)
def test_a_body_over_the_limit_is_413_and_nothing_is_screened(api):
    body = {"configuration": "newsroom", "text": "x" * 300}
    error = assert_error(screen(api, body), 413, "too_large")
    assert "200" in error["message"]
    assert GovernanceEvent.objects.count() == 0


@override_settings(GAVEL_MAX_TEXT_BYTES=200)
def test_a_body_at_the_limit_is_accepted(api):
    envelope = len(json.dumps({"configuration": "newsroom", "text": ""}))
    raw = json.dumps({"configuration": "newsroom", "text": "x" * (200 - envelope)})
    assert len(raw.encode()) == 200
    assert api.post("/api/v1/screenings", raw, content_type="application/json").status_code == 200


@override_settings(GAVEL_MAX_TEXT_BYTES=200)
def test_the_limit_counts_bytes_not_characters(api):
    text = "ü" * 90  # 90 characters, 180 bytes
    assert_error(screen(api, {"configuration": "newsroom", "text": text}), 413, "too_large")


@override_settings(GAVEL_MAX_TEXT_BYTES=200)
def test_the_limit_applies_to_completions_before_any_provider(api, provider_server):
    body = {"configuration": "newsroom", "messages": [{"role": "user", "content": "x" * 300}]}
    assert_error(api.post("/api/v1/completions", body, format="json"), 413, "too_large")
    assert provider_server.requests == []


# --- 401 ---
@pytest.mark.parametrize("header", [None, "Bearer", "Bearer two parts", "Bearer gvl_not-a-real-token",
                                    "Token gvl_not-a-real-token", "Basic dXNlcjpwYXNz"])
def test_no_valid_token_is_401(db, configuration, header):
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = screen(client, {"configuration": "newsroom", "text": "x"})
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert GovernanceEvent.objects.count() == 0


def test_a_revoked_token_is_401(make_consumer, configuration):
    consumer, token = make_consumer("gone", [configuration])
    client = client_with(token)
    assert screen(client, {"configuration": "newsroom", "text": "x"}).status_code == 200
    consumer.revoked_at = timezone.now()
    consumer.save()
    assert_error(screen(client, {"configuration": "newsroom", "text": "x"}), 401, "not_authenticated")


# --- 403 ---
def test_a_configuration_not_granted_is_403(api, other):
    error = assert_error(screen(api, {"configuration": "intranet", "text": "x"}), 403, "not_granted")
    assert "intranet" in error["message"]


def test_a_configuration_not_granted_in_also_is_403(api, other):
    assert_error(screen(api, {"configuration": "newsroom", "also": ["intranet"], "text": "x"}), 403, "not_granted")


def test_a_completion_of_a_configuration_not_granted_is_403_before_any_provider(api, other, provider_server):
    response = api.post("/api/v1/completions", {"configuration": "intranet", "messages": USER}, format="json")
    assert_error(response, 403, "not_granted")
    assert provider_server.requests == []


@pytest.mark.parametrize("method, path", [("get", "/api/v1/events"), ("get", "/api/v1/policy"),
                                          ("put", "/api/v1/policy")])
def test_administrator_endpoints_refuse_other_tokens(api, method, path):
    if method == "get":
        response = api.get(path)
    else:
        response = api.put(path, {"providers": []}, format="json")
    error = assert_error(response, 403, "forbidden")
    assert "administrator" in error["message"]


def test_a_refused_policy_put_writes_nothing(api, provider):
    before = PolicyVersion.current()
    document = {"providers": [{"name": "sneaky", "kind": "chat", "route": "openai", "api_base": "https://evil.example"}]}
    assert_error(api.put("/api/v1/policy", document, format="json"), 403)
    assert list(Provider.objects.values_list("name", flat=True)) == ["local-test"]
    assert PolicyVersion.current() == before


# --- 404 ---
def test_an_unknown_configuration_is_404(api):
    error = assert_error(screen(api, {"configuration": "nowhere", "text": "x"}), 404, "unknown_configuration")
    assert list(error["fields"]) == ["configuration"]


def test_an_unknown_configuration_in_also_is_404(api):
    error = assert_error(screen(api, {"configuration": "newsroom", "also": ["nowhere", "elsewhere"], "text": "x"}),
                         404, "unknown_configuration")
    assert list(error["fields"]) == ["also"]
    assert len(error["fields"]["also"]) == 2


def test_an_unknown_configuration_on_completions_is_404(api, provider_server):
    response = api.post("/api/v1/completions", {"configuration": "nowhere", "messages": USER}, format="json")
    assert_error(response, 404, "unknown_configuration")
    assert provider_server.requests == []


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/screenings/extra", "/api/v2/screenings", "/api/"])
@pytest.mark.parametrize("debug", [False, True])
def test_an_unknown_endpoint_under_api_is_a_json_404(api, path, debug):
    with override_settings(DEBUG=debug):
        assert_error(api.get(path), 404, "not_found")


def test_a_wrong_method_has_the_shape_too(api):
    assert_error(api.get("/api/v1/screenings"), 405, "method_not_allowed")


# --- 429 ---
@pytest.fixture
def fresh_cache():
    """Throttle history lives in the cache, keyed by consumer id: start and end with none."""
    cache.clear()
    yield
    cache.clear()


def test_a_throttled_consumer_gets_429(make_consumer, configuration, fresh_cache):
    _, token = make_consumer("slow", [configuration], throttle_rate="2/min")
    client = client_with(token)
    body = {"configuration": "newsroom", "text": "x"}
    assert [screen(client, body).status_code for _ in range(2)] == [200, 200]
    response = screen(client, body)
    assert_error(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 61


def test_a_call_over_a_budget_is_429(api, provider_server, configuration):
    configuration.budget_daily_requests = 3
    configuration.save()
    UsageDay.objects.create(configuration=configuration, day=timezone.localdate(), requests=3)
    response = api.post("/api/v1/completions", {"configuration": "newsroom", "messages": USER}, format="json")
    assert_error(response, 429, "budget_exceeded")
    assert provider_server.requests == []


# --- 502 / 504 (the real HTTP path is in test_completions.py) ---
@pytest.mark.parametrize("failure, status, code", [
    ({"reason": "request refused by the provider (HTTP 400)", "status": 400}, 502, "provider_error"),
    ({"reason": "provider error (HTTP 503)", "status": 503, "retryable": True}, 502, "provider_error"),
    ({"reason": "timed out", "timeout": True, "retryable": True}, 504, "provider_timeout"),
])
def test_provider_failures_have_the_shape(api, monkeypatch, failure, status, code):
    from judging import llm

    def fail(*args, **kwargs):
        reason = failure["reason"]
        raise llm.ProviderError(reason, **{k: v for k, v in failure.items() if k != "reason"},
                                detail="upstream said: sk-live-1234567890abcdef at /srv/provider/app.py")

    monkeypatch.setattr(llm, "complete", fail)
    response = api.post("/api/v1/completions", {"configuration": "newsroom", "messages": USER}, format="json")
    assert_error(response, status, code)
    assert "upstream said" not in response.content.decode()


# --- 500: never a trace ---
class Boom(RuntimeError):
    pass


SECRET_MESSAGE = "database password hunter2 in /srv/gavel/governance/services.py line 12"


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_error_is_a_500_without_a_trace(api, monkeypatch, debug):
    def explode(*args, **kwargs):
        raise Boom(SECRET_MESSAGE)

    monkeypatch.setattr("governance.screening.service.run_pipeline", explode)
    with override_settings(DEBUG=debug):
        response = screen(api, {"configuration": "newsroom", "text": "x"})
    assert_error(response, 500, "server_error")
    content = response.content.decode()
    for leak in ("hunter2", "Boom", "RuntimeError", "explode", "/srv/"):
        assert leak not in content


@pytest.mark.parametrize("debug", [False, True])
def test_an_unexpected_error_outside_the_api_views_is_a_json_500_too(client, monkeypatch, debug):
    def explode(*args, **kwargs):
        raise Boom(SECRET_MESSAGE)

    monkeypatch.setattr("governance.health._database", explode)
    with override_settings(DEBUG=debug):
        response = client.get("/healthz")
    assert_error(response, 500, "server_error")
    assert "hunter2" not in response.content.decode()


# --- a policy PUT with errors writes nothing and names every path ---
def test_a_policy_put_with_errors_writes_nothing_and_names_every_path(admin_api, configuration):
    before = (PolicyVersion.current(), Provider.history.count(), Configuration.history.count())
    document = {
        "providers": [
            {"name": "fresh", "kind": "chat", "route": "openai"},  # valid on its own, still not written
            {"name": "odd", "kind": "robot", "route": "openai"},
        ],
        "configurations": [
            {"identifier": "newsroom", "provider": "nowhere", "model": "m", "colour": "red"},
            {"identifier": "desk", "provider": "fresh", "model": "m", "budget": {"daily_requests": -1}},
        ],
        "term_lists": [{"name": "Brand", "configurations": ["newsroom"], "forbidden": ["fine", "*", "a*b"]}],
    }
    response = admin_api.put("/api/v1/policy", document, format="json")
    error = assert_error(response, 400, "invalid_policy")
    assert set(error["fields"]) == {
        "providers[1].kind",
        "configurations[0].provider",
        "configurations[0].colour",
        "configurations[1].budget.daily_requests",
        "term_lists[0].forbidden[1]",
        "term_lists[0].forbidden[2]",
    }
    assert list(Provider.objects.values_list("name", flat=True)) == ["local-test"]
    assert list(Configuration.objects.values_list("identifier", "provider__name")) == [("newsroom", "local-test")]
    assert (PolicyVersion.current(), Provider.history.count(), Configuration.history.count()) == before


def test_a_policy_put_that_does_not_parse_is_400(admin_api, configuration):
    response = admin_api.put("/api/v1/policy", "providers: [", content_type="application/yaml")
    assert_error(response, 400, "malformed")
    assert Configuration.objects.count() == 1
