"""Consumer tokens (SPEC §9, §11.1): Bearer and Token headers, stored hashed, revocable, throttled;
administrator-only endpoints; the governance log's filters; schema and docs without a token.
"""
import datetime as dt
import hashlib
import io
import re

import pytest
import yaml
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from governance.models import Configuration, Consumer, GovernanceEvent, Provider

pytestmark = pytest.mark.django_db

BODY = {"configuration": "newsroom", "text": "A plain line."}


def client_with(header: str | None) -> APIClient:
    client = APIClient()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    return client


def screen(client):
    return client.post("/api/v1/screenings", BODY, format="json")


@pytest.fixture
def token(make_consumer, configuration):
    return make_consumer("newsroom-app", [configuration])[1]


@pytest.fixture
def admin_client(make_consumer):
    return client_with(f"Bearer {make_consumer('ops', is_admin=True)[1]}")


# --- headers ---
@pytest.mark.parametrize("keyword", ["Bearer", "Token", "bearer", "TOKEN"])
def test_bearer_and_drf_token_headers_are_both_accepted(token, keyword):
    response = screen(client_with(f"{keyword} {token}"))
    assert response.status_code == 200, response.content
    assert response.json()["outcome"] == "allowed"


def test_a_token_is_refused_after_one_character_changes(token):
    changed = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert screen(client_with(f"Bearer {changed}")).status_code == 401


# --- tokens at rest ---
def test_tokens_are_stored_only_as_hashes(configuration):
    out = io.StringIO()
    call_command("create_consumer", "cms", "--configurations", "newsroom", stdout=out)
    token = out.getvalue().strip().splitlines()[-1]
    assert len(token) >= 40

    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM governance_consumer")
        columns = [column[0] for column in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    [row] = rows
    assert row["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert token.startswith(row["token_prefix"]) and len(row["token_prefix"]) <= 12
    for column, value in row.items():
        assert token not in str(value), column

    # Nowhere else either: no table holds the token.
    for table in connection.introspection.table_names():
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            assert token not in repr(cursor.fetchall()), table

    # And the printed token is the one that works.
    assert screen(client_with(f"Bearer {token}")).status_code == 200


def test_a_revoked_token_is_401(configuration):
    out = io.StringIO()
    call_command("create_consumer", "cms", "--configurations", "newsroom", stdout=out)
    client = client_with(f"Bearer {out.getvalue().strip().splitlines()[-1]}")
    assert screen(client).status_code == 200
    call_command("revoke_consumer", "cms", stdout=io.StringIO())
    response = screen(client)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert Consumer.objects.get(name="cms").revoked_at is not None  # kept, for the log


# --- throttling, per consumer ---
@pytest.fixture
def fresh_cache():
    """Throttle history lives in the cache, keyed by consumer id: start and end with none."""
    cache.clear()
    yield
    cache.clear()


def test_each_consumer_has_its_own_throttle_bucket(make_consumer, configuration, fresh_cache):
    slow = client_with(f"Bearer {make_consumer('slow', [configuration], throttle_rate='2/min')[1]}")
    fast = client_with(f"Bearer {make_consumer('fast', [configuration])[1]}")
    assert [screen(slow).status_code for _ in range(3)] == [200, 200, 429]
    assert [screen(fast).status_code for _ in range(3)] == [200, 200, 200]


# --- administrator-only endpoints ---
@pytest.mark.parametrize("path", ["/api/v1/events", "/api/v1/policy"])
def test_administrator_endpoints(admin_client, token, path):
    assert admin_client.get(path).status_code == 200
    assert client_with(f"Bearer {token}").get(path).status_code == 403
    assert client_with(None).get(path).status_code == 401


def test_policy_get_is_the_export_with_the_policy_version(admin_client, configuration):
    response = admin_client.get("/api/v1/policy")
    body = response.json()
    assert [c["identifier"] for c in body["configurations"]] == ["newsroom"]
    assert [p["name"] for p in body["providers"]] == ["local-test"]
    assert int(response["X-Gavel-Policy-Version"]) >= 1


def test_an_administrator_puts_a_policy_document(admin_client, configuration):
    document = admin_client.get("/api/v1/policy").json()
    document["configurations"][0]["system_prompt"] = "Write plainly."
    document["configurations"].append({"identifier": "desk", "provider": "local-test", "model": "m2"})
    before = int(admin_client.get("/api/v1/policy")["X-Gavel-Policy-Version"])
    response = admin_client.put("/api/v1/policy", yaml.safe_dump(document), content_type="application/yaml")
    assert response.status_code == 200, response.content
    assert "configurations:desk" in response.json()["created"]
    assert Configuration.objects.get(identifier="newsroom").system_prompt == "Write plainly."
    assert Configuration.objects.get(identifier="desk").provider == Provider.objects.get(name="local-test")
    assert int(response["X-Gavel-Policy-Version"]) > before


# --- the governance log and its filters ---
AT = dt.datetime(2025, 5, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def events(db):
    rows = [
        (AT - dt.timedelta(days=2), "blocked", "term_list", "newsroom"),
        (AT - dt.timedelta(hours=1), "redacted", "secret_redaction", "newsroom"),
        (AT, "blocked", "term_list", "newsroom"),
        (AT + dt.timedelta(hours=1), "blocked", "rules_judge", "intranet"),
        (AT + dt.timedelta(hours=2), "budget_refused", "budget", "newsroom"),
    ]
    return [
        GovernanceEvent.objects.create(
            at=at, correlation_id=f"c{index}", decision=decision, check_name=check, configuration=config,
            provider="local-test", model="test-model", actor="consumer:x", mode="block",
            detail={"list": "Brand words", "terms": ["Kunde"]},
        )
        for index, (at, decision, check, config) in enumerate(rows)
    ]


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["correlation_id"] for row in response.json()]


def test_events_newest_first_with_every_field(admin_client, events):
    response = admin_client.get("/api/v1/events")
    assert ids(response) == ["c4", "c3", "c2", "c1", "c0"]
    row = response.json()[2]
    assert set(row) == {"id", "at", "correlation_id", "decision", "check", "configuration", "provider", "model",
                        "actor", "mode", "detail"}
    assert (row["decision"], row["check"], row["configuration"]) == ("blocked", "term_list", "newsroom")
    assert row["detail"] == {"list": "Brand words", "terms": ["Kunde"]}


@pytest.mark.parametrize("query, expected", [
    ({"since": "2025-05-01T12:00:00Z"}, ["c4", "c3", "c2"]),
    ({"since": "2025-05-01T13:00:00+01:00"}, ["c4", "c3", "c2"]),
    ({"decision": "blocked"}, ["c3", "c2", "c0"]),
    ({"configuration": "newsroom"}, ["c4", "c2", "c1", "c0"]),
    ({"decision": "blocked", "configuration": "newsroom"}, ["c2", "c0"]),
    ({"decision": "blocked", "configuration": "newsroom", "since": "2025-05-01T00:00:00Z"}, ["c2"]),
    ({"configuration": "nowhere"}, []),
    ({"limit": "2"}, ["c4", "c3"]),
])
def test_events_filters(admin_client, events, query, expected):
    assert ids(admin_client.get("/api/v1/events", query)) == expected


@pytest.mark.parametrize("query, field", [
    ({"since": "yesterday"}, "since"),
    ({"decision": "maybe"}, "decision"),
    ({"limit": "many"}, "limit"),
    ({"colour": "red"}, "colour"),
])
def test_events_refuse_bad_filters(admin_client, events, query, field):
    response = admin_client.get("/api/v1/events", query)
    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == [field]


def test_a_screening_leaves_its_events_in_the_log(admin_client, token):
    aws = "AKIA" + "IOSFODNN7EXAMPLE"
    client = client_with(f"Bearer {token}")
    screening = client.post("/api/v1/screenings", {"configuration": "newsroom", "text": f"Key {aws}."}, format="json")
    rows = admin_client.get("/api/v1/events", {"decision": "redacted"}).json()
    [row] = [r for r in rows if r["correlation_id"] == screening.json()["id"]]
    assert row["actor"] == "consumer:newsroom-app"
    assert aws not in str(row)


# --- schema and docs need no token ---
def test_schema_is_openapi_3_without_a_token(db):
    response = APIClient().get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    assert {"/api/v1/screenings", "/api/v1/completions", "/api/v1/events", "/api/v1/policy"} <= set(schema["paths"])
    assert "ConsumerToken" in schema["components"]["securitySchemes"]


def test_docs_render_from_local_assets_without_a_token(db):
    client = APIClient()
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    for cdn in ("cdn.jsdelivr", "unpkg", "cdnjs", "googleapis", "//cdn."):
        assert cdn not in html
    assets = re.findall(r"""["'](/static/[^"']+\.(?:js|css))["']""", html)
    scripts = [asset for asset in assets if asset.endswith(".js")]
    assert any("swagger-ui" in asset for asset in scripts), assets
    for asset in assets:
        fetched = client.get(asset)
        assert fetched.status_code == 200, asset
        assert b"".join(fetched.streaming_content if fetched.streaming else [fetched.content])
    # Swagger UI's start-up script is a file of its own (no inline script under the CSP); it names the schema.
    start_up = re.search(r'<script src="(/api/v1/docs/\?[^"]*)"', html).group(1).replace("&amp;", "&")
    assert "/api/v1/schema/" in client.get(start_up).content.decode()
