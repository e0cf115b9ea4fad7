"""The API docs' examples are valid requests for the demo policy, so the first "Execute" in /api/v1/docs/
succeeds, and schema component names read naturally (issue 11)."""
import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from governance.models import Configuration

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    return client.get("/api/v1/schema/", {"format": "json"}).json()


def example(schema, path):
    content = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    (only,) = content["examples"].values()
    return only["value"]


def test_component_names_read_naturally(schema):
    names = set(schema["components"]["schemas"])
    assert {"ScreeningRequest", "CompletionRequest", "TaskRequest", "ScreeningResponse"} <= names
    assert not [name for name in names if name.endswith("RequestRequest")]
    body = schema["paths"]["/api/v1/screenings"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"] == "#/components/schemas/ScreeningRequest"


@pytest.mark.parametrize("path, status", [("/api/v1/screenings", 200), ("/api/v1/completions", 200),
                                          ("/api/v1/tasks", 202)])
def test_each_example_succeeds_against_the_demo_policy(schema, make_consumer, capsys, path, status):
    call_command("seed_demo")
    capsys.readouterr()
    _consumer, token = make_consumer("swagger-try", Configuration.objects.filter(identifier__in=["demo",
                                                                                                "demo-writer"]))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = api.post(path, example(schema, path), format="json")
    assert response.status_code == status, response.content[:500]
