"""Fault: a provider that answers garbage, hangs, or closes mid-stream; a judge that hangs past its deadline.

Each has its documented outcome (SPEC §11.1, §8.1, §4): 502 provider_error, 504 provider_timeout,
an `error` then `done` event, and a failed check that blocks in block mode. No 500, no trace, no
usage counted for an answer that never came, and the next call is served normally.
"""
import json

import pytest

from governance.models import GovernanceEvent, UsageDay

pytestmark = pytest.mark.django_db

USER = [{"role": "user", "content": "Write about the harbour."}]
FORTY_WORDS = " ".join(f"word{i}" for i in range(40))


def complete(api, **body):
    return api.post("/api/v1/completions", {"configuration": "newsroom", "messages": USER, **body}, format="json")


def assert_clean_error(response, status, code):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code and set(error) == {"code", "message", "fields"}
    assert "Traceback" not in response.content.decode()


def tokens_counted() -> int:
    return sum(UsageDay.objects.values_list("tokens", flat=True))


@pytest.mark.parametrize("answer", [
    {"body": "<html>502 Bad Gateway</html>"},
    {"body": {"choices": "not a list"}},
    {"body": "{\"id\": \"x\", \"choices\": [{\"message\": {\"content\": "},  # cut in the middle of the JSON
    {"drop": True},
])
def test_a_provider_that_answers_garbage_is_a_502_and_counts_no_tokens(api, provider_server, answer):
    provider_server.script([answer])
    assert_clean_error(complete(api), 502, "provider_error")
    assert tokens_counted() == 0
    assert complete(api).status_code == 200  # the next call is served


def test_a_provider_that_hangs_is_a_504_within_its_timeout(api, provider_server, configuration):
    import time

    configuration.provider.timeout = 1
    configuration.provider.save()
    provider_server.script([{"delay": 5, "text": "late"}])
    started = time.monotonic()
    assert_clean_error(complete(api), 504, "provider_timeout")
    assert time.monotonic() - started < 4
    assert tokens_counted() == 0
    assert complete(api).status_code == 200


def test_a_provider_that_closes_mid_stream_ends_with_error_then_done(api, provider_server):
    provider_server.script([{"stream_chunks": ["The harbour", " woke", " early", " today."], "fail_after": 2}])
    response = complete(api, stream=True)
    assert response.status_code == 200
    raw = b"".join(response.streaming_content).decode()
    events = [(block.split("\n")[0][len("event: "):], json.loads(block.split("\n")[1][len("data: "):]))
              for block in raw.strip().split("\n\n")]
    names = [name for name, _ in events]
    assert names[-2:] == ["error", "done"]
    assert events[-2][1]["error"]["code"] == "provider_error"
    assert "Traceback" not in raw
    assert tokens_counted() == 0  # the provider's totals never arrived
    assert complete(api).status_code == 200


@pytest.mark.parametrize("mode, outcome", [("block", "blocked"), ("report", "allowed_with_hints")])
def test_a_judge_that_hangs_past_its_deadline_is_a_failed_check(api, provider_server, provider, configuration,
                                                                 mode, outcome):
    import time

    from governance.models import Configuration
    from snippets.models import Snippet
    from tests.judging.conftest import set_rules

    Snippet.objects.create(identifier="style", name="Style", tags=["style"], body="Never promise a date.")
    Configuration.objects.create(identifier="slow-judge", provider=provider, model="judge-model", timeout=1)
    set_rules(configuration, mode, judges=["slow-judge"], tags=["style"])
    provider_server.script([{"for_model": "judge-model", "delay": 4, "text": '{"violations": []}'}])
    started = time.monotonic()
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": FORTY_WORDS}, format="json")
    assert time.monotonic() - started < 3.5  # the deadline holds; the judge's answer is not awaited
    body = response.json()
    assert response.status_code == 200 and body["outcome"] == outcome
    check = next(c for c in body["checks"] if c["check"] == "rules_judge")
    assert check["result"] in ("blocked", "not_checked", "reported")
    reasons = [h.get("reason") for h in body["hints"]] + [check.get("reason")]
    assert "timeout" in reasons, body
    if mode == "block":
        assert "text" not in body and GovernanceEvent.objects.filter(decision="blocked").count() == 1
