"""Fixtures for rule sets and judges: snippets, a judging configuration on the provider server."""
import json

import pytest

from governance.models import set_links

JUDGE_MODEL = "judge-model"

# Forty words; "zebracorn", "quokkaflux" and "marmalith" mark the text so a test can tell
# whether any of it reached a message a record keeps or a governance event.
TEXT = (
    "Hey buddy, zebracorn news from quokkaflux headquarters: we ship your order tomorrow for free, "
    "and the marmalith edition arrives with seven maps, four lanterns, two compasses and a small "
    "booklet about rivers, mountains, weather and the old harbour."
)
UNIQUE_WORDS = ("zebracorn", "quokkaflux", "marmalith")
RULE_LINES = ["Address the reader formally.", "Never promise a delivery date.", "Do not call a product free."]


@pytest.fixture
def provider_key(monkeypatch):
    monkeypatch.setenv("PROVIDER_TEST_API_KEY", "test-key")


@pytest.fixture
def snippets(db):
    """Two snippets tagged `style`: rules 1-2 from `tone` (with an empty line), rule 3 from `legal`."""
    from snippets.models import Snippet

    tone = Snippet.objects.create(identifier="tone", name="Tone of voice", tags=["style"], sort=1,
                                  body=f"{RULE_LINES[0]}\n\n  {RULE_LINES[1]}  \n")
    legal = Snippet.objects.create(identifier="legal", name="Legal phrasing", tags=["Style", "legal"], sort=2,
                                   body=RULE_LINES[2])
    return tone, legal


@pytest.fixture
def judge(db, provider, provider_key):
    """A chat judging configuration on the same local provider (zone local)."""
    from governance.models import Configuration

    return Configuration.objects.create(identifier="judge", provider=provider, model=JUDGE_MODEL)


@pytest.fixture
def ruled(configuration, judge, snippets):
    """`newsroom` checking the `style` rules with `judge`, in report mode."""
    return set_rules(configuration, "report", judges=[judge.identifier])


def set_rules(configuration, mode, *, judges=None, tags=("style",), default="block"):
    configuration.rule_mode = mode
    configuration.rule_tags = list(tags)
    configuration.rule_default = default
    configuration.save()
    if judges is not None:
        set_links(configuration, "rule_judges", list(judges))
    return configuration


def verdict(*violations) -> dict:
    """A scripted judge answer naming (rule, passage) pairs."""
    return {"for_model": JUDGE_MODEL,
            "text": json.dumps({"violations": [{"rule": r, "passage": p} for r, p in violations]})}


def judge_requests(server, model=JUDGE_MODEL):
    return [request for request in server.chat_requests if request.model == model]
