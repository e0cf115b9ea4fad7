"""A provider failure names its cause (issue 15): which provider of the chain failed and how — connection
refused at its address, a key variable not set, an HTTP status, a timeout — in the caller's error body
(both APIs, English and German) and in the governance log the administrator reads; never a key."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from governance.models import Configuration, GovernanceEvent, Provider, set_links
from tests.provider_server import unused_port

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "Write about the harbour."}]
SECRET = "sk-live-never-shown-4242424242"


@pytest.fixture
def caller(make_consumer):
    def make(*configurations):
        _consumer, token = make_consumer("failing-app", list(configurations))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return client
    return make


def chain(name, *, api_base, key_env="", model="m"):
    provider = Provider.objects.create(name=name, kind="chat", route="openai", api_base=api_base,
                                       api_key_env=key_env, trust_zone="local", timeout=2)
    return Configuration.objects.create(identifier=f"{name}-conf", provider=provider, model=model)


def failures_logged():
    event = GovernanceEvent.objects.get(decision="provider_failed")
    assert event.check_name == "provider"
    return event, event.detail["failures"]


def test_connection_refused_names_the_provider_for_the_caller_and_the_address_for_the_administrator(caller):
    closed = f"http://127.0.0.1:{unused_port()}/v1"
    conf = chain("local-llm", api_base=closed)
    response = caller(conf).post("/api/v1/completions", {"configuration": conf.identifier, "messages": USER},
                                 format="json")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["code"] == "provider_error"
    assert error["message"] == ("Every provider of the chain failed: provider local-llm (configuration "
                                "local-llm-conf): connection refused.")
    assert closed not in error["message"]  # the deployment's address is the administrator's to read
    event, failures = failures_logged()
    assert failures == [{"provider": "local-llm", "configuration": "local-llm-conf", "failure": "connection",
                         "refused": True, "api_base": closed}]

    admin = get_user_model().objects.create_superuser("root", "root@example.org", None)
    client = Client()
    client.force_login(admin)
    page = client.get(f"/admin/governance/governanceevent/{event.pk}/change/").content.decode()
    assert (f"Provider failed for configuration local-llm-conf; provider local-llm (configuration local-llm-conf): "
            f"connection refused at {closed}.") in page
    listing = client.get("/admin/governance/governanceevent/").content.decode()
    assert "Provider failed" in listing and "local-llm" in listing


def test_a_key_variable_that_is_not_set_fails_before_anything_is_sent(caller, provider_server, monkeypatch):
    monkeypatch.delenv("MISSING_PROVIDER_API_KEY", raising=False)
    conf = chain("hosted", api_base=provider_server.base_url, key_env="MISSING_PROVIDER_API_KEY")
    response = caller(conf).post("/api/v1/completions", {"configuration": conf.identifier, "messages": USER},
                                 format="json")
    assert response.status_code == 502
    assert response.json()["error"]["message"] == ("Every provider of the chain failed: provider hosted "
                                                   "(configuration hosted-conf): its key variable is not set.")
    assert provider_server.requests == []
    event, failures = failures_logged()
    assert failures[0]["failure"] == "missing_key" and failures[0]["key_env"] == "MISSING_PROVIDER_API_KEY"
    from governance.screening.event_text import sentence
    assert "the key variable MISSING_PROVIDER_API_KEY is not set" in sentence(event)


def test_an_http_status_and_a_fallback_are_named_in_order_and_no_key_is_shown(caller, provider_server, monkeypatch):
    monkeypatch.setenv("FIRST_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment-key-not-for-this-provider")
    first = chain("first", api_base=provider_server.base_url, key_env="FIRST_API_KEY", model="one")
    second = chain("second", api_base=provider_server.base_url, model="two")
    set_links(first, "fallbacks", [second])
    provider_server.script([{"status": 503, "for_model": "one"}, {"status": 500, "for_model": "two"}])
    response = caller(first).post("/api/v1/completions", {"configuration": "first-conf", "messages": USER},
                                  format="json")
    assert response.status_code == 502
    assert response.json()["error"]["message"] == (
        "Every provider of the chain failed: provider first (configuration first-conf): HTTP 503, server error; "
        "provider second (configuration second-conf): HTTP 500, server error.")
    event, failures = failures_logged()
    assert [(f["provider"], f["status"]) for f in failures] == [("first", 503), ("second", 500)]
    assert SECRET not in response.content.decode() and SECRET not in str(event.detail)
    # The first request carried the key from the variable its provider names; the second provider names
    # none, so no key of the environment (OPENAI_API_KEY …) is sent in its place.
    assert [r.headers.get("authorization") for r in provider_server.requests] == [f"Bearer {SECRET}",
                                                                                 "Bearer no-key"]


def test_a_fallback_that_answers_still_logs_the_failure_of_the_first_choice(caller, provider_server):
    first = chain("first", api_base=f"http://127.0.0.1:{unused_port()}/v1")
    second = chain("second", api_base=provider_server.base_url, model="two")
    set_links(first, "fallbacks", [second])
    provider_server.script([{"text": "Harbour news."}])
    response = caller(first).post("/api/v1/completions", {"configuration": "first-conf", "messages": USER},
                                  format="json")
    assert response.status_code == 200 and response.json()["completion"]["provider"] == "second"
    event, failures = failures_logged()
    assert failures[0]["provider"] == "first" and event.detail["answered_by"] == "second-conf"


def test_a_timeout_says_how_long_was_waited(caller, provider_server):
    conf = chain("slow", api_base=provider_server.base_url)
    conf.timeout = 1
    conf.save()
    provider_server.script([{"delay": 3, "text": "late"}])
    response = caller(conf).post("/api/v1/completions", {"configuration": "slow-conf", "messages": USER},
                                 format="json")
    assert response.status_code == 504
    assert response.json()["error"]["message"] == ("Every provider of the chain timed out: provider slow "
                                                   "(configuration slow-conf): no answer within 1.0 s.")


def test_the_openai_gateway_and_german_say_the_same(caller):
    conf = chain("local-llm", api_base=f"http://127.0.0.1:{unused_port()}/v1")
    client = caller(conf)
    response = client.post("/openai/v1/chat/completions", {"model": conf.identifier, "messages": USER},
                           format="json")
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["type"] == "api_error" and error["code"] == "provider_error"
    assert "provider local-llm (configuration local-llm-conf): connection refused" in error["message"]
    german = client.post("/api/v1/completions", {"configuration": conf.identifier, "messages": USER},
                         format="json", HTTP_ACCEPT_LANGUAGE="de").json()["error"]["message"]
    assert german == ("Jeder Anbieter der Kette ist gescheitert: Anbieter local-llm (Konfiguration "
                      "local-llm-conf): Verbindung abgelehnt.")


def test_a_stream_whose_provider_fails_before_the_first_chunk_says_the_same(caller):
    closed = f"http://127.0.0.1:{unused_port()}/v1"
    conf = chain("local-llm", api_base=closed)
    response = caller(conf).post("/api/v1/completions", {"configuration": conf.identifier, "messages": USER,
                                                         "stream": True}, format="json")
    assert response.status_code == 502
    assert "provider local-llm (configuration local-llm-conf): connection refused" in \
        response.json()["error"]["message"]
    _event, failures = failures_logged()
    assert failures[0]["api_base"] == closed and failures[0]["refused"] is True


def test_an_address_with_credentials_is_logged_without_them(caller):
    port = unused_port()
    conf = chain("local-llm", api_base=f"http://user:{SECRET}@127.0.0.1:{port}/v1?api_key={SECRET}")
    caller(conf).post("/api/v1/completions", {"configuration": conf.identifier, "messages": USER}, format="json")
    event, failures = failures_logged()
    assert failures[0]["api_base"] == f"http://127.0.0.1:{port}/v1"
    assert SECRET not in str(event.detail)
