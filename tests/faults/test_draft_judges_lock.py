"""A policy test under a draft asks its judges outside the draft's transaction (issue 25, finding 13).

A draft is imported inside a transaction that is rolled back; on SQLite that transaction holds the
database's one write lock. With the judges asked inside it, every other consumer's write waited for the
judges and got 503 once SQLite's busy timeout (5 s) ran out. Here a judge takes longer than that timeout
while a consumer posts a task: the task is taken, and the test's report is the one a run without passes
gives (the same calls, the same verdicts, the verdict cache kept, nothing of the draft left).
"""
import threading
import time

import pytest
from django.db import connection
from rest_framework.test import APIClient

from governance.models import Configuration, GovernanceEvent, PolicyExample, PolicyVersion, Task, set_links
from governance.policy import export_policy, release
from tests.judging.conftest import JUDGE_MODEL, TEXT, judge_requests, set_rules, verdict
from tests.judging.conftest import judge, provider_key, snippets  # noqa: F401 -- fixtures

pytestmark = pytest.mark.django_db(transaction=True)

# Longer than SQLite's busy timeout (Django's default, 5 s): a write queued behind the judge fails.
JUDGE_SECONDS = 6.5
PASSAGE = "we ship your order tomorrow"


@pytest.fixture
def judged(configuration, judge, snippets, make_consumer, provider):
    provider.timeout = 15  # the judge may take JUDGE_SECONDS
    provider.save()
    set_rules(configuration, "report", judges=[judge.identifier])
    PolicyExample.objects.create(name="promise", configuration="newsroom", text=TEXT,
                                 expect_outcome="allowed_with_hints",
                                 expect_findings=[{"check": "rules_judge", "snippet": "tone", "rule": 3}])
    # Another consumer's configuration, without rules: its task asks no judge.
    desk = Configuration.objects.create(identifier="desk", provider=provider, model="test-model")
    _consumer, token = make_consumer("other-app", [desk])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def in_thread(run):
    """Run `run()` in a thread with its own database connection; the thread's result or error."""
    outcome: dict = {}

    def target():
        try:
            outcome["result"] = run()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=target)
    thread.start()
    return thread, outcome


def wait_for_judge(server, outcome, seconds=10.0):
    """Until the judge's request is being answered (the provider holds it for JUDGE_SECONDS)."""
    deadline = time.monotonic() + seconds
    while not server.in_flight:
        assert "error" not in outcome, outcome["error"]
        assert time.monotonic() < deadline, "the judge was never asked"
        time.sleep(0.02)


def test_a_task_posted_while_a_drafts_judge_answers_is_taken(judged, provider_server):
    provider_server.set_default(verdict((2, PASSAGE)))
    provider_server.script([{**verdict((2, PASSAGE)), "delay": JUDGE_SECONDS}])
    version = PolicyVersion.current()
    draft = export_policy()
    draft["term_lists"] = [{"name": "Draft words", "configurations": ["newsroom"], "forbidden": ["Skonto"],
                            "mode": "block"}]
    thread, outcome = in_thread(lambda: release.test_policy(draft=draft, judges="live"))
    wait_for_judge(provider_server, outcome)
    started = time.monotonic()
    posted = judged.post("/api/v1/tasks", {"kind": "queued_task", "configuration": "desk",
                                            "instruction": "Write one line."},
                         format="json")
    waited = time.monotonic() - started
    thread.join(30)
    assert posted.status_code == 202, (posted.status_code, posted.content)
    assert waited < JUDGE_SECONDS - 1  # not queued behind the judge
    assert "error" not in outcome, outcome.get("error")
    report = outcome["result"]
    assert report.draft and report.ok, report.as_dict()
    assert report.judges["calls"] == 1 and report.judges["cache_hits"] == 0
    assert len(judge_requests(provider_server)) == 1
    # Nothing of the draft stays; the consumer's task does.
    assert PolicyVersion.current() == version
    assert not GovernanceEvent.objects.filter(check_name="policy").exists()
    assert Task.objects.count() == 1
    from termlists.models import TermList

    assert not TermList.objects.filter(name="Draft words").exists()
    # The verdict the draft's judge gave is kept: the same draft again asks no judge.
    again = release.test_policy(draft=draft)
    assert (again.judges["calls"], again.judges["cache_hits"]) == (0, 1) and again.ok
    assert len(judge_requests(provider_server)) == 1


def test_a_dry_run_reads_as_before_with_a_chain_that_needs_a_second_judge(judged, judge, provider, provider_server):
    """The first judge fails, the second decides: two passes ask them in turn, and the report counts two
    calls, as a run that asked them inline did. A provider failure of the draft writes no event."""
    second = Configuration.objects.create(identifier="judge-two", provider=provider, model="judge-two-model")
    set_links(Configuration.objects.get(identifier="newsroom"), "rule_judges", [judge.identifier, second.identifier])
    provider_server.script([{"for_model": JUDGE_MODEL, "status": 400},
                            {**verdict((2, PASSAGE)), "for_model": "judge-two-model"}])
    draft = export_policy()
    report = release.test_policy(draft=draft, judges="live")
    assert report.ok, report.as_dict()
    assert report.judges["calls"] == 2
    assert len(judge_requests(provider_server)) == 1
    assert len(judge_requests(provider_server, "judge-two-model")) == 1
    assert not GovernanceEvent.objects.filter(decision="provider_failed").exists()


def test_a_replay_under_a_draft_stops_asking_at_its_cost_cap(judged, provider_server):
    """Judges of a replay count against its cap when asked between passes, as they did inline: with a cap
    below one call's cost, the first text's judge is asked and no other."""
    provider_server.set_default(verdict((2, PASSAGE)))
    for number in range(3):
        Task.objects.create(configuration="newsroom", answer=f"{TEXT} ({number})",
                            status="done")
    plan = release.plan_release(export_policy(), replay=3, replay_judges=True, cost_cap=1e-9)
    # Under the current policy: the first text's judge (then the cap is spent). Under the draft: the first
    # text's verdict from the cache, the second text's judge, then the cap is spent again.
    assert (plan.replay.judge_calls["calls"], plan.replay.judge_calls["cache_hits"]) == (2, 1)
    # With the example's judge: three questions in all.
    assert len(judge_requests(provider_server)) == 3


def test_a_judge_still_wanted_in_the_last_allowed_pass_is_reported_as_not_asked(judged, provider_server):
    from governance.policy.drafts import under_draft
    from governance.policy.testing import run_examples, select_examples

    provider_server.set_default(verdict((2, PASSAGE)))
    _report, result = under_draft(export_policy(), lambda: run_examples(select_examples(), judges="live"), passes=1)
    (example,) = result.examples
    assert not example.passed and example.missing == [{"check": "rules_judge", "snippet": "tone", "rule": 3}]
    assert result.judges["calls"] == 0 and judge_requests(provider_server) == []
    # With a second pass allowed the judge is asked between them, once.
    _report, result = under_draft(export_policy(), lambda: run_examples(select_examples(), judges="live"), passes=2)
    assert result.ok and result.judges["calls"] == 1 and len(judge_requests(provider_server)) == 1
