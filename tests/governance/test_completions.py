"""POST /api/v1/completions: generation through litellm's real HTTP path, fallbacks, budgets, usage.

Every model call here reaches the local provider server (tests/provider_server.py);
what the server received is the evidence of what Gavel sent, and of what it did not.
"""
import datetime as dt
import time
from decimal import Decimal

import pytest
from django.test import override_settings
from django.utils import timezone

from governance.models import Configuration, GovernanceEvent, Provider, UsageDay
from tests.provider_server import unused_port

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "Write one line about the harbour."}]
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


def complete(api, **body):
    body.setdefault("configuration", "newsroom")
    body.setdefault("messages", USER)
    return api.post("/api/v1/completions", body, format="json")


def assert_error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "fields"}
    assert body["error"]["code"] == code
    return body["error"]


# --- a plain completion ---
def test_plain_completion_returns_text_provider_usage_and_cost(api, provider_server):
    provider_server.script([{"text": "The harbour woke early.", "usage": {"prompt_tokens": 1000, "completion_tokens": 500}}])
    response = complete(api)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["outcome"] == "allowed"
    assert body["text"] == "The harbour woke early."
    assert body["completion"] == {
        "provider": "local-test", "model": "test-model",
        "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
        # The provider's own prices (1 and 2 per million tokens), not litellm's price map.
        "cost": pytest.approx(0.002),
    }
    assert [c["check"] for c in body["checks"]] == [
        "secret_redaction", "term_list", "pattern_rules", "citations", "rules_judge"]
    assert response["X-Gavel-Policy-Version"] == str(body["policy_version"])
    assert len(provider_server.chat_requests) == 1
    sent = provider_server.chat_requests[0].body
    assert sent["model"] == "test-model"
    assert sent["messages"] == USER


def test_system_prompt_is_prepended_to_the_request(api, provider_server, configuration):
    configuration.system_prompt = "You write short news items."
    configuration.save()
    assert complete(api).status_code == 200
    sent = provider_server.chat_requests[0].body["messages"]
    assert sent == [{"role": "system", "content": "You write short news items."}, *USER]


def test_answer_is_screened_before_it_is_returned(api, provider_server):
    provider_server.script([{"text": f"Use {AWS_KEY} to deploy."}])
    body = complete(api).json()
    assert AWS_KEY not in body["text"]
    assert {"check": "secret_redaction", "result": "redacted"} in body["checks"]


# --- tool calls ---
TOOLS = [{"type": "function", "function": {
    "name": "save_article",
    "parameters": {"type": "object", "properties": {"body": {"type": "string"}}},
}}]


def test_tool_calls_come_back_screened(api, provider_server):
    provider_server.script([{"tool_calls": [{"id": "call_7", "name": "save_article",
                                              "arguments": {"body": f"Deploy key {AWS_KEY}"}}]}])
    response = complete(api, tools=TOOLS)
    assert response.status_code == 200, response.content
    body = response.json()
    assert provider_server.chat_requests[0].body["tools"] == TOOLS
    [call] = body["tool_calls"]
    assert call["id"] == "call_7" and call["name"] == "save_article"
    assert AWS_KEY not in str(call["arguments"])
    assert "AKIA" in str(call["arguments"])  # masked in place, the argument kept
    assert {"check": "secret_redaction", "result": "redacted"} in body["checks"]


def test_a_forbidden_term_in_a_tool_call_stops_every_proposed_call(api, provider_server, configuration):
    from termlists.models import TermList

    TermList.objects.create(name="Brand words", forbidden="Kunde").configurations.set([configuration])
    provider_server.script([{"tool_calls": [
        {"name": "save_article", "arguments": {"body": "Lieber Kunde, hier ist der Text."}},
        {"name": "save_title", "arguments": {"title": "Harbour"}},
    ]}])
    body = complete(api, tools=TOOLS).json()
    assert body["outcome"] == "blocked"
    assert "tool_calls" not in body
    assert body["block"]["check"] == "term_list"
    assert "Kunde" in body["block"]["message"]


def test_a_declared_read_tool_is_not_screened(api, provider_server, configuration):
    from termlists.models import TermList

    TermList.objects.create(name="Brand words", forbidden="Kunde").configurations.set([configuration])
    declare_reads("search")
    provider_server.script([{"tool_calls": [{"name": "search", "arguments": {"q": "Kunde"}}]}])
    body = complete(api, tools=TOOLS, read_tools=["search"]).json()
    assert body["outcome"] == "allowed"
    assert body["tool_calls"][0]["name"] == "search"


# --- the fallback chain (SPEC §2.2) ---
@pytest.mark.parametrize("status", [503, 500, 429])
def test_a_retryable_provider_error_is_served_by_the_fallback(api, provider_server, backup, status):
    provider_server.script([
        {"status": status, "for_model": "test-model"},
        {"text": "From the backup.", "for_model": "backup-model"},
    ])
    response = complete(api)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["text"] == "From the backup."
    assert body["completion"]["provider"] == "fallback-test"
    assert body["completion"]["model"] == "backup-model"
    assert [r.model for r in provider_server.chat_requests] == ["test-model", "backup-model"]


def test_a_timeout_falls_back(api, provider_server, backup, configuration):
    configuration.timeout = 1
    configuration.save()
    provider_server.script([
        {"delay": 1.5, "text": "Too late.", "for_model": "test-model"},
        {"text": "From the backup.", "for_model": "backup-model"},
    ])
    body = complete(api).json()
    assert body["completion"]["provider"] == "fallback-test"
    assert body["text"] == "From the backup."
    assert len(provider_server.chat_requests) == 2


def test_a_refused_connection_falls_back(api, provider_server, backup, provider):
    provider.api_base = f"http://127.0.0.1:{unused_port()}/v1"
    provider.save()
    provider_server.script([{"text": "From the backup.", "for_model": "backup-model"}])
    body = complete(api).json()
    assert body["completion"]["provider"] == "fallback-test"
    # Only the fallback reached the server; the first provider was never there.
    assert [r.model for r in provider_server.chat_requests] == ["backup-model"]


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_client_error_does_not_fall_back(api, provider_server, backup, status):
    provider_server.script([{"status": status, "for_model": "test-model"}])
    error = assert_error(complete(api), 502, "provider_error")
    assert str(status) in error["message"]
    assert [r.model for r in provider_server.chat_requests] == ["test-model"]


def test_every_provider_failing_is_a_502(api, provider_server, backup):
    provider_server.script([{"status": 503}, {"status": 502}])
    assert_error(complete(api), 502, "provider_error")
    assert len(provider_server.chat_requests) == 2


def test_every_provider_timing_out_is_a_504(api, provider_server, backup, configuration):
    Configuration.objects.filter(pk__in=[configuration.pk, backup.pk]).update(timeout=1)
    provider_server.script([{"delay": 1.5}, {"delay": 1.5}])
    assert_error(complete(api), 504, "provider_timeout")
    assert len(provider_server.chat_requests) == 2


def test_a_timeout_then_a_failure_is_a_502_not_a_504(api, provider_server, backup, configuration):
    configuration.timeout = 1
    configuration.save()
    provider_server.script([{"delay": 1.5, "for_model": "test-model"}, {"status": 503, "for_model": "backup-model"}])
    assert_error(complete(api), 502, "provider_error")


def test_a_fallback_over_its_own_budget_is_skipped(api, provider_server, backup):
    backup.budget_daily_requests = 1
    backup.save()
    UsageDay.objects.create(configuration=backup, day=timezone.localdate(), requests=1)
    provider_server.script([{"status": 503}])
    assert_error(complete(api), 502, "provider_error")
    assert [r.model for r in provider_server.chat_requests] == ["test-model"]


def test_a_fallback_of_another_kind_is_never_asked(api, provider_server, backup):
    Provider.objects.filter(pk=backup.provider_id).update(kind="decision")
    provider_server.script([{"status": 503}])
    assert_error(complete(api), 502, "provider_error")
    assert len(provider_server.requests) == 1


def test_a_timeout_cap_bounds_the_whole_chain_and_no_attempt_starts_after_it(provider_server, backup, configuration):
    from governance.errors import ProviderTimedOut
    from governance.runs.completions import call_model

    call_model(configuration, USER, correlation_id="warm", actor="test")  # litellm's first import, not timed
    provider_server.script([{"delay": 2, "text": "Too late.", "for_model": "test-model"}])
    started = time.monotonic()
    with pytest.raises(ProviderTimedOut):
        call_model(configuration, USER, correlation_id="cap", actor="test", timeout_cap=0.8)
    # The first attempt used the whole 0.8 s; the fallback (which would answer at once) is not tried.
    assert time.monotonic() - started < 0.8 + 0.5
    assert [r.model for r in provider_server.chat_requests] == ["test-model", "test-model"]


def test_a_call_without_its_own_system_prompt_sends_the_messages_exactly(provider_server, configuration):
    from governance.runs.completions import call_model

    configuration.system_prompt = "You write short news items."
    configuration.save()
    call_model(configuration, USER, correlation_id="own", actor="test", own_system_prompt=False)
    assert provider_server.chat_requests[0].body["messages"] == USER


# --- budget caps (SPEC §2.2) ---
CAPS = [
    ("budget_daily_requests", 5, {"requests": 5}, "daily_requests"),
    ("budget_daily_tokens", 1000, {"tokens": 1200}, "daily_tokens"),
    ("budget_daily_cost", Decimal("0.5"), {"cost": Decimal("0.5")}, "daily_cost"),
]


@pytest.mark.parametrize("field, cap, used, name", CAPS, ids=[c[3] for c in CAPS])
def test_a_call_over_a_cap_is_refused_before_the_provider(api, provider_server, configuration, field, cap, used, name):
    setattr(configuration, field, cap)
    configuration.save()
    UsageDay.objects.create(configuration=configuration, day=timezone.localdate(), **used)
    response = complete(api)
    error = assert_error(response, 429, "budget_exceeded")
    assert name in error["message"]
    assert provider_server.requests == []
    event = GovernanceEvent.objects.get(correlation_id=response["X-Request-ID"])
    assert event.decision == "budget_refused"
    assert (event.configuration, event.provider, event.model) == ("newsroom", "local-test", "test-model")
    assert event.detail == {"cap": name}


def test_a_streamed_call_over_a_cap_is_refused_with_json(api, provider_server, configuration):
    configuration.budget_daily_requests = 1
    configuration.save()
    UsageDay.objects.create(configuration=configuration, day=timezone.localdate(), requests=1)
    response = complete(api, stream=True)
    assert response["Content-Type"] == "application/json"
    assert_error(response, 429, "budget_exceeded")
    assert provider_server.requests == []


def test_usage_reaches_the_cap_call_by_call(api, provider_server, configuration):
    configuration.budget_daily_tokens = 2000
    configuration.save()
    provider_server.script([{"usage": {"prompt_tokens": 1000, "completion_tokens": 500}}] * 2)
    assert complete(api).status_code == 200  # 1500 tokens: under the cap
    assert complete(api).status_code == 200  # 3000 tokens: the cap is now reached
    assert_error(complete(api), 429, "budget_exceeded")
    assert len(provider_server.chat_requests) == 2
    usage = UsageDay.objects.get(configuration=configuration)
    assert (usage.requests, usage.tokens) == (2, 3000)
    assert usage.cost == Decimal("0.004")


def test_a_cap_of_zero_means_no_cap(api, provider_server, configuration):
    UsageDay.objects.create(configuration=configuration, day=timezone.localdate(), requests=10**6, tokens=10**9)
    assert complete(api).status_code == 200


@override_settings(TIME_ZONE="Pacific/Kiritimati")  # UTC+14: the local day is ahead of UTC's
def test_usage_is_counted_per_calendar_day_in_the_server_time_zone(api, provider_server, configuration, monkeypatch):
    configuration.budget_daily_requests = 1
    configuration.save()
    clock = {"now": dt.datetime(2025, 3, 1, 12, 0, tzinfo=dt.timezone.utc)}
    monkeypatch.setattr(timezone, "now", lambda: clock["now"])

    assert complete(api).status_code == 200
    assert list(UsageDay.objects.values_list("day", "requests")) == [(dt.date(2025, 3, 2), 1)]
    assert_error(complete(api), 429, "budget_exceeded")

    clock["now"] = dt.datetime(2025, 3, 2, 9, 59, tzinfo=dt.timezone.utc)  # 23:59 local, still 2 March
    assert_error(complete(api), 429, "budget_exceeded")
    clock["now"] = dt.datetime(2025, 3, 2, 10, 0, tzinfo=dt.timezone.utc)  # midnight local: a new day
    assert complete(api).status_code == 200
    assert sorted(UsageDay.objects.values_list("day", "requests")) == [
        (dt.date(2025, 3, 2), 1), (dt.date(2025, 3, 3), 1)]
    assert len(provider_server.chat_requests) == 2


def declare_reads(*names):
    """The configurations' owner declares these tools reads (SPEC §8.2: a caller can only narrow the list)."""
    from governance.models import Configuration

    for config in Configuration.objects.all():
        config.read_tools = list(names)
        config.save()
