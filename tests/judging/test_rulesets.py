"""Rule sets (SPEC §6.1): which snippets, which lines, which numbers, and what the admin is told."""
import pytest

from governance.models import Configuration
from judging.admin_warnings import rule_numbering_for_snippet
from judging.rulesets import rule_set_for
from snippets.models import Snippet
from tests.judging.conftest import RULE_LINES, set_rules

pytestmark = pytest.mark.django_db


def make(identifier, body, tags=("style",), sort=0, **fields):
    return Snippet.objects.create(identifier=identifier, name=identifier.title(), body=body, tags=list(tags),
                                  sort=sort, **fields)


def test_each_non_empty_trimmed_line_is_one_rule_numbered_across_the_set(ruled):
    rule_set = rule_set_for(ruled)
    assert [(r.number, r.line, r.snippet, r.snippet_name, r.line_no) for r in rule_set.rules] == [
        (1, RULE_LINES[0], "tone", "Tone of voice", 1),
        (2, RULE_LINES[1], "tone", "Tone of voice", 3),  # line 2 is empty: skipped, not renumbered
        (3, RULE_LINES[2], "legal", "Legal phrasing", 1),
    ]
    assert rule_set.numbers == {1, 2, 3}
    assert rule_set.numbered() == [(1, RULE_LINES[0]), (2, RULE_LINES[1]), (3, RULE_LINES[2])]


def test_order_is_sort_then_identifier(configuration):
    set_rules(configuration, "report")
    make("b-second", "B rule", sort=5)
    make("a-first", "A rule", sort=5)
    make("z-early", "Z rule", sort=-1)
    assert [r.snippet for r in rule_set_for(configuration).rules] == ["z-early", "a-first", "b-second"]


def test_inactive_hidden_and_untagged_snippets_contribute_nothing(configuration):
    set_rules(configuration, "block", tags=("style", "legal"))
    make("on", "counted")
    make("off", "inactive", is_active=False)
    make("hidden", "hidden", hidden=True)
    make("other", "other tag", tags=("lifestyle",))  # whole-tag match: `style` is not `lifestyle`
    make("legal", "second tag counts", tags=("LEGAL ",))
    assert [r.line for r in rule_set_for(configuration).rules] == ["second tag counts", "counted"]  # by identifier


def test_no_tags_means_no_rules(configuration, snippets):
    set_rules(configuration, "report", tags=())
    assert not rule_set_for(configuration)


def test_data_classes_of_the_snippets_in_the_set_are_kept(configuration):
    set_rules(configuration, "report")
    make("a", "rule a", data_class="source_code")
    make("b", "rule b")
    make("c", "\n\n", data_class="secret_adjacent")  # no line, so not in the set
    assert rule_set_for(configuration).data_classes == (("a", "source_code"), ("b", ""))


def test_the_snippet_admin_numbering_follows_each_configuration(configuration, provider, snippets):
    tone, legal = snippets
    set_rules(configuration, "report")
    shop = Configuration.objects.create(identifier="shop", provider=provider, model="m", rule_mode="block",
                                        rule_tags=["legal"])
    Configuration.objects.create(identifier="quiet", provider=provider, model="m", rule_mode="off",
                                 rule_tags=["style"])
    assert rule_numbering_for_snippet(tone) == [("newsroom", [(1, 1, RULE_LINES[0]), (2, 3, RULE_LINES[1])])]
    # `legal` is rule 3 in newsroom's set and rule 1 in shop's; a configuration in off mode has no set.
    assert rule_numbering_for_snippet(legal) == [("newsroom", [(3, 1, RULE_LINES[2])]),
                                                 ("shop", [(1, 1, RULE_LINES[2])])]
    assert shop.identifier == "shop"
    legal.hidden = True
    legal.save()
    assert rule_numbering_for_snippet(legal) == []
