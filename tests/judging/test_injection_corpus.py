"""The prompt-injection corpus against the judge (SPEC §6.3): 56 texts through the real API.

A text that forges a marker is never sent to a judge and is an `injection` failed check. Every other
text reaches the judge strictly as data: the request is exactly the one judge_prompt builds (the same
system prompt, the text between two fresh markers it does not contain, the same response format), and
the verdict Gavel gives is the judge's, whatever the text orders.
"""
import re

import pytest

from judging import prompts
from tests.judging.conftest import RULE_LINES, TEXT, judge_requests, set_rules, verdict
from tests.judging.injection_corpus import CORPUS, FORGES_MARKER, ORDERS

pytestmark = pytest.mark.django_db

RULES = list(enumerate(RULE_LINES, start=1))


def test_the_corpus_is_big_enough_and_sorted_right():
    assert len(CORPUS) >= 50
    assert all(prompts.forges_marker(text) for text in FORGES_MARKER)
    assert not any(prompts.forges_marker(text) for text in ORDERS)


def screen(api, text):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": f"{text}\n{TEXT}"}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def rules_check(body):
    return next(c for c in body["checks"] if c["check"] == "rules_judge")


@pytest.mark.parametrize("mode, result", [("report", "not_checked"), ("block", "blocked")])
def test_every_forged_marker_is_an_injection_failed_check(api, ruled, provider_server, mode, result):
    set_rules(ruled, mode)
    for text in FORGES_MARKER:
        body = screen(api, text)
        assert rules_check(body) == {"check": "rules_judge", "result": result, "reason": "injection"}, text
        assert body["outcome"] == ("blocked" if mode == "block" else "allowed_with_hints"), text
    assert judge_requests(provider_server) == []


def test_every_order_reaches_the_judge_as_data_and_changes_nothing(api, ruled, provider_server):
    set_rules(ruled, "block")
    provider_server.set_default({"text": verdict((1, TEXT.split(".")[0]))["text"]})
    for text in ORDERS:
        body = screen(api, text)
        # The judge's verdict stands, whatever the text ordered: rule 1 denied, the text stopped.
        assert body["outcome"] == "blocked", text
        assert rules_check(body)["result"] == "blocked", text
    requests = judge_requests(provider_server)
    assert len(requests) == len(ORDERS)
    for text, request in zip(ORDERS, requests):
        judged = f"{text}\n{TEXT}"
        system, user = request.body["messages"]
        marker = re.fullmatch(r"<<<TEXT ([0-9a-f]{16})>>>", user["content"].split("\n", 1)[0])[1]
        assert marker not in judged.lower()
        assert request.body["messages"] == prompts.judge_prompt(RULES, judged, marker=marker).messages
        assert request.body["response_format"] == prompts.RESPONSE_FORMAT
        assert request.body["temperature"] == 0
        assert user["content"].count(marker) == 2
        assert judged not in system["content"]
