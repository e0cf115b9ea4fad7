"""The report's blind spots said truly: the cost cap only when it stopped the judges, generation changes
against the live policy (a conflict with the draft's side, a snippet in a prompt's context), blocked tasks
counted from the database in bounded queries, what a draft does not change still blocks, and verdicts
reused across views of one draft."""
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from governance import policy
from governance.models import GovernanceEvent, Task
from governance.policy import proposals, release
from governance.policy import report_limits as limits
from governance.policy.proposals_report import draft_report
from governance.policy.replay import at_least
from tests.drafts.helpers import live_policy, person
from tests.drafts.test_report_judges import COSTLY, judged, page  # noqa: F401 -- fixture
from tests.judging.conftest import TEXT, judge_requests
from tests.judging.conftest import judge, provider_key, snippets  # noqa: F401 -- fixtures

pytestmark = pytest.mark.django_db


def test_a_text_whose_configuration_is_gone_is_not_a_cost_cap_reached(judged, provider_server):
    draft, _root = judged
    Task.objects.create(configuration="gone", status="ready", outcome="allowed", answer=f"{TEXT} Alt.")
    judges = draft_report(draft, replay_tasks=10, cost_cap=5)["judges"]
    # Four texts judged, the fifth not screened at all: the cap of 5 was never near.
    assert judges["texts_judged"] == 4 and judges["stopped_at_cap"] is False and judges["sentence"] is None


def test_a_reached_cap_says_what_each_policy_ran_within(judged, provider_server):
    draft, _root = judged
    judges = draft_report(draft, replay_tasks=10)["judges"]
    assert judges["stopped_at_cap"] is True and judges["sentence"] == (
        "the cost cap of 1.00 (0.50 for each policy's replay) was reached: 2 of 4 texts were judged")


def test_generation_changes_of_a_conflicting_record_are_named_with_the_drafts_side(provider):
    document = live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    newsroom = policy.export_policy()["configurations"][0]
    proposals.record_change(draft, "configurations", "newsroom", {**newsroom, "temperature": 0.9})
    document["configurations"][0]["max_tokens"] = 321
    release.apply_release(document, actor="user:admin")
    report = draft_report(draft, replay_tasks=0)
    assert [c["name"] for c in report["conflicts"]] == ["newsroom"]
    # Tested with the draft's side: its temperature, and the max_tokens the live policy has since changed.
    assert {f["field"] for f in report["generation"]["fields"]} == {"temperature", "max_tokens"}


def test_judged_lines_are_counted_against_the_live_record_with_the_drafts_side(judged):
    draft, _root = judged
    limits.set_replay_judges(draft, False)
    document = policy.export_policy()
    tone = next(s for s in document["snippets"] if s["identifier"] == "tone")
    tone["body"] = "Address the reader formally.\nNever promise a date.\nOne more.\nAnd another."
    release.apply_release(document, actor="user:admin")
    report = draft_report(draft, replay_tasks=0)
    assert [c["name"] for c in report["conflicts"]] == ["tone"]
    # The draft's side drops the two lines the live record has since gained (against its base: one line).
    assert report["replay"]["without_judges"] == (
        "judges were not run: 2 judged rule lines change, so hints from judges are not compared")


def test_provider_fallbacks_and_context_tags_shape_generation_and_so_does_a_snippet_in_the_context(judged):
    draft, _root = judged
    from governance.models import Configuration

    newsroom = Configuration.objects.get(identifier="newsroom")
    newsroom.context_tags = ["style"]
    newsroom.save()
    # The draft changes `tone`, which carries the tag `style`: newsroom's prompt gets its body appended.
    fields = draft_report(draft, replay_tasks=0, replay_judges=False)["generation"]["fields"]
    assert {"configuration": "newsroom", "field": "context", "record": "snippets:tone"} in fields
    record = next(c for c in policy.export_policy()["configurations"] if c["identifier"] == "newsroom")
    proposals.record_change(draft, "configurations", "newsroom", {**record, "context_tags": ["legal"],
                                                                  "fallbacks": ["judge"], "provider": "other"})
    changed = {f["field"] for f in limits.generation_part(draft.changes, policy.export_policy(),
                                                          proposals.draft_document(draft, policy.export_policy())[0])
               ["fields"] if f["configuration"] == "newsroom"}
    assert {"provider", "fallbacks", "context_tags"} <= changed


def test_blocked_tasks_of_an_hours_window_are_filtered_and_capped_in_the_database(monkeypatch):
    now = timezone.now()
    for i in range(3):
        Task.objects.create(configuration="newsroom", status="blocked", outcome="blocked", answer="",
                            correlation_id=f"c{i}", created=now - timezone.timedelta(minutes=i + 1))
    Task.objects.create(configuration="newsroom", status="ready", outcome="allowed", answer="x", correlation_id="ok")
    with CaptureQueriesContext(connection) as queries:
        found = limits.blocked_tasks({"hours": 1})
    assert [c for _t, c in found] == ["c0", "c1", "c2"]
    [sql] = [q["sql"] for q in queries.captured_queries]
    assert "outcome" in sql and "LIMIT" in sql.upper()
    monkeypatch.setattr(limits, "MAX_WINDOW_TASKS", 2)
    assert [c for _t, c in limits.blocked_tasks({"hours": 1})] == ["c0", "c1"]
    # The governance log is read a chunk of correlation ids at a time.
    for i in range(3):
        GovernanceEvent.objects.create(decision="blocked", check_name="term_list", correlation_id=f"c{i}")
    monkeypatch.setattr(limits, "EVENT_CHUNK", 2)
    with CaptureQueriesContext(connection) as queries:
        events = list(limits._block_events(["c0", "c1", "c2"]))
    assert len(events) == 3 and len(queries.captured_queries) == 2


def event(check, detail, configuration="newsroom"):
    return SimpleNamespace(check_name=check, detail=detail, configuration=configuration)


def test_a_rule_the_draft_does_not_change_still_blocks_and_a_changed_one_cannot_be_told():
    rule = {"identifier": "promise", "is_active": True, "statement": "No promises."}
    configuration = {"identifier": "newsroom", "rules": {"mode": "block", "tags": ["style"]}}
    live = {"pattern_rules": [rule], "snippets": [{"identifier": "tone", "body": "A."}],
            "configurations": [configuration]}
    blocked_by_rule = event("pattern_rules", {"rules": [{"identifier": "promise"}]})
    blocked_by_judge = event("rules_judge", {"rules": [{"snippet": "tone"}]})
    assert limits._lifted(blocked_by_rule, live, live) is False
    assert limits._lifted(blocked_by_judge, live, live) is False
    changed = {**live, "pattern_rules": [{**rule, "statement": "No promises at all."}],
               "snippets": [{"identifier": "tone", "body": "B."}]}
    assert limits._lifted(blocked_by_rule, live, changed) is None
    assert limits._lifted(blocked_by_judge, live, changed) is None
    other_tags = {**live, "configurations": [{**configuration, "rules": {"mode": "block", "tags": ["legal"]}}]}
    assert limits._lifted(blocked_by_rule, live, other_tags) is None


def test_terms_compare_as_the_matcher_does_and_an_unreadable_list_still_blocks():
    brand = {"name": "Brand words", "forbidden": ["Rabatt*"], "mode": "block", "configurations": ["newsroom"]}
    document = {"term_lists": [brand]}
    shouted = event("term_list", {"list": "Brand words", "terms": ["RABATT*"]})
    assert limits._lifted(shouted, document, document) is False
    assert limits._lifted(event("term_list", {"list": "Brand words", "terms": ["Skonto"]}), document, document) is True
    assert limits._lifted(event("term_list", {"reason": "unreadable"}), document, document) is False


def test_a_sentence_names_no_part_that_is_zero_and_fewer_than_is_german():
    counts = {limits.DELIVER: 6, limits.STILL_BLOCK: 1, limits.UNKNOWN: 0}
    assert limits.blocked_sentence("Brand words", 7, counts) == (
        "7 tasks were blocked by Brand words; this draft would deliver 6 and still block 1.")
    counts = {limits.DELIVER: 0, limits.STILL_BLOCK: 2, limits.UNKNOWN: 3}
    assert limits.blocked_sentence("Brand words", 5, counts) == (
        "5 tasks were blocked by Brand words; this draft would still block 2 and for 3 it cannot be told without "
        "the texts.")
    with translation.override("de"):
        assert at_least(2, 5) == "weniger als 5"
        assert "ausliefern und 1 weiterhin stoppen" in limits.blocked_sentence(
            "Brand words", 7, {limits.DELIVER: 6, limits.STILL_BLOCK: 1, limits.UNKNOWN: 0})


def test_viewing_a_draft_again_never_asks_a_judge_the_same_question_twice(judged, provider_server):
    draft, root = judged
    client = Client()
    client.force_login(root)
    page(client, draft)
    assert len(judge_requests(provider_server)) == 4  # two texts per policy within the cap
    # A kept verdict costs nothing, so the next view's cap reaches the two texts the first one left.
    page(client, draft)
    asked = [r.raw for r in judge_requests(provider_server)]
    assert len(asked) == 8 and len(set(asked)) == 8
    # Every text judged under both policies: a third view reuses them all.
    assert "was reached" not in page(client, draft)
    assert len(judge_requests(provider_server)) == 8


def test_a_pattern_rule_in_a_prompts_context_is_a_generation_change_and_a_hidden_snippet_is_not():
    newsroom = {"identifier": "newsroom", "context_tags": ["House-Style"]}
    rule = {"identifier": "promise", "statement": "No promises.", "tags": ["house-style"], "is_active": True}
    hidden = {"identifier": "notes", "tags": ["house-style"], "hidden": True, "body": "A."}
    live = {"configurations": [newsroom], "pattern_rules": [rule], "snippets": [hidden]}
    draft = {**live, "pattern_rules": [{**rule, "statement": "No promises at all."}],
             "snippets": [{**hidden, "body": "B."}]}
    changes = [{"section": "pattern_rules", "name": "promise"}, {"section": "snippets", "name": "notes"}]
    part = limits.generation_part(changes, live, draft)
    assert part["fields"] == [{"configuration": "newsroom", "field": "context", "record": "pattern_rules:promise"}]
    assert "newsroom.context (pattern_rules:promise)" in part["sentence"]
