"""Defect 4 of issue 10, case by case: what the schema fuzzer found, each pinned by a plain test."""
import pytest
import yaml

from governance.models import GovernanceEvent

pytestmark = pytest.mark.django_db

@pytest.fixture
def admin_api(make_consumer):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_consumer('ops', is_admin=True)[1]}")
    return client


TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def complete(api, messages):
    return api.post("/api/v1/completions", {"configuration": "newsroom", "messages": messages}, format="json")


@pytest.mark.parametrize("messages, field", [
    ([{"role": "tool", "content": None, "tool_call_id": "a"}] * 3, "messages[0].content"),
    ([{"role": "tool", "content": "42"}], "messages[0].tool_call_id"),
    ([{"role": "user", "content": None}], "messages[0].content"),
    ([{"role": "user", "content": "x", "tool_calls": [TOOL_CALL]}], "messages[0].tool_calls"),
    ([{"role": "assistant", "content": None}], "messages[0].content"),
    ([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}]}],
     "messages[0].tool_calls[0].function.arguments"),
])
def test_message_shapes_are_checked_before_any_provider(api, provider_server, messages, field):
    response = complete(api, messages)
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
    assert provider_server.requests == []


def test_an_assistant_message_with_only_tool_calls_is_a_valid_message(api, provider_server):
    messages = [{"role": "user", "content": "Look it up."}, {"role": "assistant", "tool_calls": [TOOL_CALL]},
                {"role": "tool", "content": "found", "tool_call_id": "call_1"}]
    assert complete(api, messages).status_code == 200
    assert len(provider_server.chat_requests) == 1


def test_an_empty_policy_put_is_refused_and_removes_nothing(admin_api, configuration):
    response = admin_api.put("/api/v1/policy", b"", content_type="application/yaml")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_policy"
    assert configuration.__class__.objects.filter(pk=configuration.pk).exists()


@pytest.mark.parametrize("since", ["9501-03-30T22:00:41+22:07", "9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+01:00"])
def test_since_takes_any_iso_offset(admin_api, since):
    assert admin_api.get("/api/v1/events", {"since": since}).status_code == 200


@pytest.mark.parametrize("query", [{"since": ""}, {"decision": ""}, {"configuration": ""},
                                   {"configuration": "a\x00b"}])
def test_empty_or_impossible_event_filters_are_a_400_naming_the_field(admin_api, query):
    response = admin_api.get("/api/v1/events", query)
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == list(query)


def test_strings_are_taken_as_sent(api):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": "x",
                                                "tool_calls": [{"id": " ", "name": " ", "arguments": {}}]},
                        format="json")
    assert response.status_code == 200
    assert response.json()["tool_calls"][0]["name"] == " "


def test_the_schema_documents_throttling_and_outages(client):
    schema = yaml.safe_load(client.get("/api/v1/schema/").content)
    for path in ("/api/v1/screenings", "/api/v1/completions"):
        responses = schema["paths"][path]["post"]["responses"]
        assert "Retry-After" in responses["429"]["headers"]
        assert "Retry-After" in responses["503"]["headers"]
        assert responses["429"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    request = schema["components"]["schemas"]["CompletionRequest"]
    assert request["additionalProperties"] is False
    assert request["properties"]["messages"]["minItems"] == 1


def test_a_throttled_answer_carries_retry_after(make_consumer, configuration):
    from rest_framework.test import APIClient

    _consumer, token = make_consumer("once", [configuration], throttle_rate="1/min")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"configuration": "newsroom", "text": "x"}
    assert client.post("/api/v1/screenings", body, format="json").status_code == 200
    refused = client.post("/api/v1/screenings", body, format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert GovernanceEvent.objects.count() == 0
