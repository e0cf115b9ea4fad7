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


# --- callback URLs: the allow-list is configuration, and the schema states it (issue 25, finding 17) ---
URLS = ["", "http://hooks.example/x", "HTTPS://Hooks.Example:8443/a?b=c#d", "http://hooks.example:65535",
        "http://hooks.example:65536/", "http://hooks.example.evil/", "http://evil.example/hooks.example",
        "ftp://hooks.example/", "http://127.0.0.1:8080/cb", "http://127.0.0.1:08080/cb", "http://127.0.0.1/cb",
        "https://127.0.0.1:8080", "http://" + "a" * 70 + ".example/", "http://hooks.example/a b",
        "http://[::1]:9/x", "http://[::1]/x"]


def server_takes(url: str) -> bool:
    """What POST tasks and POST batches check of a callback URL, in their order: the URL field, then
    credentials, then the allow-list."""
    from governance.api.serializers import BatchRequestSerializer
    from governance.errors import BadInput
    from governance.work.callback_urls import refuse_credentials
    from governance.work.callbacks import callback_allowed

    serializer = BatchRequestSerializer(data={"items": [{"kind": "queued_task", "configuration": "newsroom",
                                                         "instruction": "x"}], "callback_url": url})
    if not serializer.is_valid():
        return False
    try:
        refuse_credentials(url, "callback_url")
    except BadInput:
        return False
    return not url or callback_allowed(url)


@pytest.mark.parametrize("hosts", [[], ["hooks.example", "127.0.0.1:8080", "[::1]"]])
def test_the_callback_pattern_in_the_schema_is_the_allow_list_the_server_checks(client, settings, hosts):
    import re

    settings.GAVEL_CALLBACK_HOSTS = hosts
    document = client.get("/api/v1/schema/?format=json").json()
    schemas = document["components"]["schemas"]
    patterns = {schemas["BatchRequest"]["properties"]["callback_url"]["pattern"]}
    patterns |= {branch["properties"]["callback_url"]["pattern"] for branch in schemas["TaskRequest"]["oneOf"]}
    (pattern,) = patterns
    assert "GAVEL_CALLBACK_HOSTS" in schemas["BatchRequest"]["properties"]["callback_url"]["description"]
    for url in URLS:
        assert bool(re.search(pattern, url)) == server_takes(url), url
    assert server_takes("http://hooks.example/x") == bool(hosts)


def test_a_callback_host_off_the_allow_list_is_a_400_naming_the_field(api, settings):
    settings.GAVEL_CALLBACK_HOSTS = ["hooks.example"]
    refused = api.post("/api/v1/batches", {"items": [{"kind": "queued_task", "configuration": "newsroom",
                                                      "instruction": "x"}], "callback_url": "http://evil.example/"},
                       format="json")
    assert refused.status_code == 400 and "callback_url" in refused.json()["error"]["fields"]


# --- the Responses API takes what its schema allows (issue 25, finding 17: the fuzz's 400 allowance is gone) ---
def test_schema_valid_responses_bodies_naming_a_granted_configuration_are_taken(api, provider_server):
    """Bodies drawn from the published schema (schemathesis' positive strategy), each naming the consumer's
    configuration: none is refused with 400, but the exceptions the schema states in words (an input of
    reasoning items only; a value passed to the provider that its route does not take). Before, 161 of 300 such bodies were refused (items without the keys their type
    needs, null characters, a null reasoning summary)."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings as hypothesis_settings
    from schemathesis.generation import GenerationMode

    document = api.get("/api/v1/schema/?format=json").json()
    operation = schemathesis.openapi.from_dict(document)["/openai/v1/responses"]["POST"]
    refused, taken = [], []

    @hypothesis_settings(max_examples=150, deadline=None, database=None,
                         suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
    def send(case):
        body = dict(case.body)
        body["model"] = "newsroom"
        body.pop("stream", None)  # a stream answers 200 with events; the status is what counts here
        items = body["input"] if isinstance(body["input"], list) else []
        only_reasoning = bool(items) and all(item.get("type") == "reasoning" for item in items)
        answer = api.post("/openai/v1/responses", body, format="json")
        route_refused = answer.status_code == 400 and answer.json()["error"].get("code") == "unsupported_parameter" \
            and "The provider of this configuration does not take this parameter" in answer.json()["error"]["message"]
        if answer.status_code == 400 and not (only_reasoning or route_refused):
            refused.append((body, answer.content[:300]))
        elif answer.status_code == 200:
            taken.append(body)

    send()
    assert refused == [], refused[:3]
    assert len(taken) > 50  # the bodies reached the provider and came back screened
