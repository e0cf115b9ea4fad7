"""What the schema fuzzer found without the project's hooks (issue 25, finding 17), pinned by plain tests:
the schema states the bounds the server enforces, and the server accepts what the schema allows."""
import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    return client.get("/api/v1/schema/?format=json").json()


def parameter(schema, path: str, method: str, name: str) -> dict:
    return next(p for p in schema["paths"][path][method]["parameters"] if p["name"] == name)["schema"]


@pytest.fixture
def admin_api(make_consumer):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_consumer('ops', is_admin=True)[1]}")
    return client


def test_policy_version_starts_at_one_in_the_schema_as_on_the_server(schema, admin_api):
    assert parameter(schema, "/api/v1/policy", "get", "version")["minimum"] == 1
    assert admin_api.get("/api/v1/policy?version=0").status_code == 400
    assert admin_api.get("/api/v1/policy?version=1").status_code in (200, 404)


@pytest.mark.parametrize("name, minimum", [("cost_cap", 0), ("replay", 0)])
def test_dry_run_numbers_are_not_negative_in_the_schema_as_on_the_server(schema, admin_api, name, minimum):
    assert parameter(schema, "/api/v1/policy", "put", name)["minimum"] == minimum
    refused = admin_api.put(f"/api/v1/policy?dry_run=true&{name}=-1e-300" if name == "cost_cap"
                            else f"/api/v1/policy?dry_run=true&{name}=-1", {"providers": []}, format="json")
    assert refused.status_code == 400 and name in refused.json()["error"]["fields"]
