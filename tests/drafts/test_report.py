"""A draft's report (SPEC §12.5): diff, conflicts, examples live vs draft in words, the replay window."""
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from governance.models import GovernanceEvent, PolicyVersion, Task
from governance.policy import proposals
from governance.policy.proposals_report import draft_report, in_words
from tests.drafts.helpers import live_policy, person, term_list
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.django_db


def tasks_at(minutes_ago: list[int], *, with_term: set[int]) -> list[Task]:
    now = timezone.now()
    return Task.objects.bulk_create([
        Task(configuration="newsroom", status="ready", outcome="allowed",
             answer=f"Item {i}: " + ("Heute mit Skonto. " if i in with_term else "") + NEWS,
             created=now - timedelta(minutes=m)) for i, m in enumerate(minutes_ago)])


def skonto_draft(provider):
    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"), title="Skonto")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    return draft


def test_the_report_shows_the_diff_the_examples_and_the_changed_texts_with_full_ids_and_offsets(provider):
    draft = skonto_draft(provider)
    tasks = tasks_at([1, 2, 3, 4], with_term={1, 3})
    version, events = PolicyVersion.current(), GovernanceEvent.objects.count()
    report = draft_report(draft, replay_tasks=3)
    json.dumps(report)  # JSON as it is
    assert report["draft"]["base_moved"] is False and report["draft"]["author"] == "user:editor"
    assert report["changes"] == [{"section": "term_lists", "name": "Brand words", "action": "change"}]
    assert "-    forbidden: [Rabatt*]" in report["diff"] and "+    forbidden: [Rabatt*, Skonto]" in report["diff"]
    assert report["conflicts"] == [] and report["test"]["regressions"] == []
    replay = report["replay"]
    assert replay["window"] == {"tasks": 3} and replay["screened"] == 3
    assert [c["task_id"] for c in replay["changed"]] == [str(tasks[1].pk)]  # tasks[3] is outside the window
    changed = replay["changed"][0]
    assert (changed["before"], changed["after"]) == ("allowed", "blocked")
    assert changed["rules"] == {"new": ["term_list:Brand words:Skonto"], "lost": []}
    answer = Task.objects.get(pk=tasks[1].pk).answer
    assert answer[changed["passage"]["start"]:changed["passage"]["end"]] == "Skonto"
    assert "Skonto. " not in json.dumps(replay) and "harbour" not in json.dumps(replay)  # no text
    assert len(changed["task_id"]) == 36
    assert PolicyVersion.current() == version and GovernanceEvent.objects.count() == events


def test_an_hours_window_replays_only_the_texts_of_those_hours(provider):
    draft = skonto_draft(provider)
    tasks = tasks_at([10, 20, 150, 200], with_term={0, 2})
    report = draft_report(draft, replay_hours=2)
    assert report["replay"]["window"] == {"hours": 2} and report["replay"]["screened"] == 2
    assert [c["task_id"] for c in report["replay"]["changed"]] == [str(tasks[0].pk)]
    counts_only = draft_report(draft, replay_hours=4, task_ids=False)["replay"]
    # Four texts: fewer than GAVEL_REPORT_MIN_TEXTS, so a reader of counts learns nothing about them.
    assert counts_only["screened"] == "fewer than 5" and counts_only["withheld"] is True
    assert "counts" not in counts_only and "changed" not in counts_only
    assert str(tasks[0].pk) not in json.dumps(counts_only)


def test_a_regression_is_named_and_each_rule_is_explained_in_words(provider):
    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "harbour"]))
    test = draft_report(draft, replay_tasks=0)["test"]
    assert test["regressions"] == ["plain-news-allowed"]
    assert test["changed"] == [{"example": "plain-news-allowed", "live": "passed", "draft": "failed"}]
    assert (test["live"]["passed"], test["draft"]["passed"]) == (2, 1)
    row = next(r for r in test["rules"] if r["rule"] == "term_list:Brand words:harbour")
    assert row["live"] is None and (row["fired"], row["false_positive"]) == (1, 1)
    assert row["in_words"] == "no example expects it; 1 example fired where it should not"
    listed = next(r for r in test["rules"] if r["rule"] == "term_list:Brand words:Rabatt*")
    assert listed["in_words"] == "fired on 1 of 1 example that expects it; never fired where it should not"
    assert listed["precision"] == 1.0 and listed["recall"] == 1.0


def test_in_words_counts_plurals_and_misses():
    row = {"true_positive": 3, "false_positive": 1, "expected": 4}
    assert in_words(row) == "fired on 3 of 4 examples that expect it; 1 example fired where it should not"
    assert in_words({"true_positive": 0, "false_positive": 0, "expected": 0}) == (
        "no example expects it and it fired on none")


def test_a_moved_base_is_reported_with_its_conflict(provider):
    draft = skonto_draft(provider)
    proposals.record_change(draft, "pattern_rules", "legal.no-guarantee", None)
    from governance import policy

    document = policy.export_policy()
    document["term_lists"][0]["forbidden"] = ["Rabatt*", "Gratis"]
    from governance.policy import release

    release.apply_release(document, actor="user:admin")
    report = draft_report(draft, replay_tasks=0)
    assert report["draft"]["base_moved"] is True
    assert [(c["section"], c["name"]) for c in report["conflicts"]] == [("term_lists", "Brand words")]
    assert report["conflicts"][0]["live"]["forbidden"] == ["Rabatt*", "Gratis"]
    removed = [line for line in report["diff"].splitlines() if line.startswith("-") and "legal.no-guarantee" in line]
    assert removed and not any(line.startswith("+") and "legal.no-guarantee" in line
                               for line in report["diff"].splitlines())


def test_a_restore_draft_names_what_it_would_remove_and_nothing_changes_until_published(
        provider, django_capture_on_commit_callbacks):
    from governance import policy
    from governance.policy import release

    with django_capture_on_commit_callbacks(execute=True):
        document = live_policy(provider)
    old = PolicyVersion.current()
    document["examples"].append({"name": "third-example", "configuration": "newsroom", "text": NEWS,
                                 "expect": {"outcome": "allowed"}})
    document["pattern_rules"].append(dict(document["pattern_rules"][0], identifier="legal.second"))
    with django_capture_on_commit_callbacks(execute=True):
        release.apply_release(document, actor="user:admin")
    version, exported = PolicyVersion.current(), policy.export_policy()
    admin = person("admin", superuser=True)
    draft = proposals.draft_from_version(old, admin)
    report = draft_report(draft, replay_tasks=0)
    removals = [(c["section"], c["name"]) for c in report["changes"] if c["action"] == "remove"]
    assert removals == [("pattern_rules", "legal.second"), ("examples", "third-example")]
    assert {"example": "third-example", "live": "passed", "draft": "absent"} in report["test"]["changed"]
    assert "-  - name: third-example" in report["diff"]
    assert PolicyVersion.current() == version and policy.export_policy() == exported
    with pytest.raises(proposals.ExamplesRegressed):  # removing a passing example is a regression
        proposals.publish(draft, admin)
    with django_capture_on_commit_callbacks(execute=True):
        proposals.publish(draft, admin, allow_regressions=True)
    restored = policy.export_policy()
    assert [e["name"] for e in restored["examples"]] == ["discount-word-blocked", "plain-news-allowed"]
    assert [r["identifier"] for r in restored["pattern_rules"]] == ["legal.no-guarantee"]
