"""Escalation (SPEC §6.6, §8.1): a generated text whose verification failed is asked once of the
configuration's `escalation`, and its answer screened again. Must show 4 of issue 9.

The provider server plays the writing model (`test-model`), the escalation (`strong-model`) and a
judge (`judge-model`); every request is counted there.
"""
import json

import pytest

from governance.models import Configuration, GovernanceEvent, set_links
from snippets.services import forget_compiled
from tests.governance.test_streams import done_of, events_of, stream
from tests.governance.test_tasks_api import eager, submit  # noqa: F401  (fixtures)
from tests.snippets.conftest import check_of, finished, rules, set_mode  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "Write a short notice about the new bus timetable."}]
VIOLATING = finished("Success is guaranteed for every reader.")
CLEAN = finished("We give no guarantee, but the plan looks sound.")
ALSO_VIOLATING = finished("Results are guaranteed, click here for more.")


@pytest.fixture(autouse=True)
def _fresh_library():
    forget_compiled()
    yield
    forget_compiled()


@pytest.fixture
def escalating(configuration, provider, rules):
    """`newsroom` checking the example's pattern rules, escalating to `newsroom-strong`."""
    strong = Configuration.objects.create(identifier="newsroom-strong", provider=provider, model="strong-model")
    configuration.escalation = strong
    configuration.save()
    return configuration


def answers(server, first, second=None):
    server.script([{"for_model": "test-model", "text": first}]
                  + ([{"for_model": "strong-model", "text": second}] if second is not None else []))


def complete(api):
    response = api.post("/api/v1/completions", {"configuration": "newsroom", "messages": MESSAGES}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def models_asked(server):
    return [request.model for request in server.chat_requests]


def events(decision=None):
    rows = GovernanceEvent.objects.order_by("id")
    return list(rows.filter(decision=decision) if decision else rows)


FAILED_GUARANTEE = [{"check": "pattern_rules", "rule": "legal.no-guarantee", "result": "violated"}]


def test_a_failed_verification_asks_the_escalation_exactly_once_with_the_same_messages(api, escalating,
                                                                                     provider_server):
    set_mode(escalating, "report")
    answers(provider_server, VIOLATING, CLEAN)

    body = complete(api)

    assert models_asked(provider_server) == ["test-model", "strong-model"]
    first, second = provider_server.chat_requests
    assert second.body["messages"] == first.body["messages"] == MESSAGES
    assert body["outcome"] == "allowed" and body["text"] == CLEAN
    assert body["verification"]["status"] == "verified"
    assert body["completion"]["model"] == "strong-model"
    assert body["completion"]["escalated_from"] == "newsroom"
    (escalated,) = events()  # the first answer's own findings are folded into the escalation event
    assert (escalated.decision, escalated.check_name, escalated.configuration, escalated.model) == (
        "escalated", "pattern_rules", "newsroom", "test-model")
    assert escalated.detail == {"escalation": "newsroom-strong", "result": "answered", "failed": FAILED_GUARANTEE}


def test_a_second_failure_is_unverified_and_delivered_with_hints_in_report_mode(api, escalating, provider_server):
    set_mode(escalating, "report")
    answers(provider_server, VIOLATING, ALSO_VIOLATING)

    body = complete(api)

    assert models_asked(provider_server) == ["test-model", "strong-model"]  # never a second escalation
    assert body["outcome"] == "allowed_with_hints" and body["text"] == ALSO_VIOLATING
    assert body["verification"]["status"] == "unverified"
    assert sorted(h["rule"]["identifier"] for h in body["hints"]) == ["legal.no-guarantee", "style.no-click-here"]
    assert [e.decision for e in events()] == ["escalated", "reported", "unverified"]
    unverified = events("unverified")[0]
    assert (unverified.model, unverified.detail["escalation"]) == ("strong-model", "newsroom-strong")
    assert {f["rule"] for f in unverified.detail["failed"]} == {"legal.no-guarantee", "style.no-click-here"}
    assert "guaranteed" not in json.dumps(unverified.detail).lower()  # facts, never the text


def test_a_second_failure_is_blocked_in_block_mode(api, escalating, provider_server):
    set_mode(escalating, "block")
    answers(provider_server, VIOLATING, ALSO_VIOLATING)

    body = complete(api)

    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert body["outcome"] == "blocked" and "text" not in body
    assert body["block"]["check"] == "pattern_rules"
    assert body["verification"]["status"] == "unverified"
    assert [e.decision for e in events()] == ["escalated", "blocked", "unverified"]


def test_in_block_mode_a_verified_escalation_answer_is_delivered(api, escalating, provider_server):
    set_mode(escalating, "block")
    answers(provider_server, VIOLATING, CLEAN)
    body = complete(api)
    assert (body["outcome"], body["text"], body["block"]) == ("allowed", CLEAN, None)
    assert [e.decision for e in events()] == ["escalated"]


def test_no_escalation_when_verification_passes_or_no_escalation_is_configured(api, escalating, provider_server):
    set_mode(escalating, "report")
    answers(provider_server, CLEAN)
    assert complete(api)["verification"]["status"] == "verified"
    escalating.escalation = None
    escalating.save()
    answers(provider_server, VIOLATING)
    assert complete(api)["verification"]["status"] == "unverified"
    assert models_asked(provider_server) == ["test-model", "test-model"]
    assert events("escalated") == []


def test_the_first_answer_is_not_judged_when_it_escalates(api, escalating, provider, provider_server):
    from snippets.models import Snippet

    Snippet.objects.create(identifier="tone", name="Tone", tags=["legal"], body="Address the reader formally.")
    Configuration.objects.create(identifier="judge", provider=provider, model="judge-model")
    set_mode(escalating, "report")
    set_links(escalating, "rule_judges", ["judge"])
    answers(provider_server, VIOLATING, CLEAN)
    provider_server.script([{"for_model": "judge-model", "text": json.dumps({"violations": []})}])

    body = complete(api)

    # One judge call, for the answer that is delivered; none for the answer that was replaced.
    assert models_asked(provider_server) == ["test-model", "strong-model", "judge-model"]
    assert check_of(body, "rules_judge") == {"check": "rules_judge", "result": "passed"}


def test_an_escalation_that_fails_leaves_the_first_answer_screened_in_full(api, escalating, provider_server):
    set_mode(escalating, "report")
    provider_server.script([{"for_model": "test-model", "text": VIOLATING}, {"for_model": "strong-model",
                                                                             "status": 400}])
    body = complete(api)
    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert body["outcome"] == "allowed_with_hints" and body["text"] == VIOLATING
    assert "escalated_from" not in body["completion"]
    assert [e.decision for e in events() if e.decision != "provider_failed"] == ["escalated", "reported",
                                                                                  "unverified"]
    assert events("escalated")[0].detail["result"] == "provider_error"
    # The escalation's provider refusing is logged with its cause (issue 15).
    assert [f["status"] for f in events("provider_failed")[0].detail["failures"]] == [400]


# --- streams (SPEC §8.1) ---
def test_no_escalation_on_a_live_stream(api, escalating, provider_server):
    set_mode(escalating, "report")  # report mode and no term list: a live stream
    answers(provider_server, VIOLATING, CLEAN)

    streamed = events_of(stream(api, messages=MESSAGES))

    assert models_asked(provider_server) == ["test-model"]
    assert "".join(data["text"] for name, data in streamed if name == "delta") == VIOLATING
    done = done_of(streamed)
    assert done["verification"]["status"] == "unverified"
    assert "escalated_from" not in done["completion"]
    assert events("escalated") == []


def test_a_held_stream_may_escalate(api, escalating, provider_server):
    set_mode(escalating, "block")  # block mode: the stream is held
    answers(provider_server, VIOLATING, CLEAN)

    streamed = events_of(stream(api, messages=MESSAGES))

    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert [(name, data) for name, data in streamed if name == "delta"] == [("delta", {"text": CLEAN})]
    done = done_of(streamed)
    assert done["outcome"] == "allowed" and done["completion"]["escalated_from"] == "newsroom"
    assert [e.decision for e in events()] == ["escalated"]


# --- tasks: Gavel generated the text, so a task escalates as a completion does ---
def test_a_queued_task_escalates_once_and_keeps_the_escalations_answer(api, submit, eager, escalating,  # noqa: F811
                                                                      provider_server):
    set_mode(escalating, "block")
    answers(provider_server, VIOLATING, CLEAN)

    task = submit({"kind": "queued_task", "configuration": "newsroom", "messages": MESSAGES}).json()

    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert (task["status"], task["outcome"], task["text"]) == ("ready", "allowed", CLEAN)
    assert task["completion"]["escalated_from"] == "newsroom"
    assert task["verification"]["status"] == "verified"
    assert [e.decision for e in events()] == ["escalated"]


def test_a_queued_task_still_unverified_after_escalation_is_blocked_in_block_mode(api, submit, eager,  # noqa: F811
                                                                                 escalating, provider_server):
    set_mode(escalating, "block")
    answers(provider_server, VIOLATING, ALSO_VIOLATING)
    task = submit({"kind": "queued_task", "configuration": "newsroom", "messages": MESSAGES}).json()
    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert (task["status"], task["verification"]["status"]) == ("blocked", "unverified")
    assert "Results are guaranteed" not in task["block"]["stored_message"]  # a stored refusal holds no passage


def test_the_openai_gateway_escalates_as_a_completion_does(api, escalating, provider_server):
    set_mode(escalating, "report")
    answers(provider_server, VIOLATING, CLEAN)
    response = api.post("/openai/v1/chat/completions", {"model": "newsroom", "messages": MESSAGES}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert body["choices"][0]["message"]["content"] == CLEAN
    assert body["gavel"]["completion"]["escalated_from"] == "newsroom"
