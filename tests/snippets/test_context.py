"""`context_tags` (SPEC §6.6): snippets as labelled blocks and `[rule:<id>] <statement>` lines appended to the
system prompt, from the same records the citation check reads."""
import pytest

from snippets.models import PatternRule, Snippet
from snippets.services import forget_compiled
from tests.snippets.conftest import finished, set_mode

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_library():
    forget_compiled()
    yield
    forget_compiled()


def complete(api, provider_server, answer):
    provider_server.script([{"text": answer}])
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    assert response.status_code == 200, response.content
    return response.json(), provider_server.chat_requests[-1].body["messages"]


def test_context_tags_append_snippets_and_rule_lines_to_the_system_prompt(api, provider_server, configuration, rules):
    Snippet.objects.create(identifier="house_style", name="House style", tags=["house-style"],
                           body="Headlines carry no exclamation mark.")
    Snippet.objects.create(identifier="hidden_one", name="Hidden", tags=["house-style"], body="Secret.", hidden=True)
    configuration.system_prompt = "You write short news items."
    configuration.context_tags = ["house-style"]
    configuration.save()
    _, sent = complete(api, provider_server, "Fine.")
    assert sent[0]["role"] == "system"
    assert sent[0]["content"] == (
        "You write short news items.\n\n"
        "## House style [snippet:house_style]\nHeadlines carry no exclamation mark.\n\n"
        "## Rules (cite one as [rule:<identifier>])\n"
        '[rule:style.no-click-here] Link text never says "click here".'
    )
    assert sent[1] == {"role": "user", "content": "Write."}


def test_without_context_tags_the_prompt_is_the_configurations_own(api, provider_server, configuration, rules):
    configuration.system_prompt = "Plain."
    configuration.save()
    _, sent = complete(api, provider_server, "Fine.")
    assert sent[0] == {"role": "system", "content": "Plain."}


def test_a_rule_offered_in_the_prompt_is_the_rule_a_citation_is_held_to(api, provider_server, configuration, rules):
    configuration.context_tags = ["house-style"]
    set_mode(configuration, "block", tags=["other"])
    body, sent = complete(api, provider_server, finished("As [rule:style.no-click-here] says: click here."))
    assert "[rule:style.no-click-here]" in sent[0]["content"]
    assert body["outcome"] == "blocked" and body["block"]["check"] == "citations"
    # Deactivated: gone from the prompt, and a citation of it is unknown.
    rule = PatternRule.objects.get(identifier="style.no-click-here")
    rule.is_active = False
    rule.save()
    body, sent = complete(api, provider_server, finished("As [rule:style.no-click-here] says, plain words."))
    assert "system" not in [m["role"] for m in sent]
    assert {"check": "citations", "rule": "style.no-click-here", "result": "violated",
            "reason": "unknown_rule"} in body["verification"]["checks"]
