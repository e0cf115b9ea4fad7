"""Dry runs, the replay and the release gate (SPEC §12.3) through `import_policy`."""
import copy
from datetime import timedelta
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from governance import policy
from governance.models import GovernanceEvent, PolicyVersion, Task
from termlists.models import TermList
from tests.governance.test_policy_examples import NEWS, small_policy

pytestmark = pytest.mark.django_db


def import_file(tmp_path, document, *args) -> tuple[int, str, str]:
    path = tmp_path / "draft.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    out, err = StringIO(), StringIO()
    try:
        call_command("import_policy", str(path), *args, stdout=out, stderr=err)
        return 0, out.getvalue(), err.getvalue()
    except CommandError as exc:
        return 1, out.getvalue(), err.getvalue() + str(exc)


def with_term(document: dict, term: str) -> dict:
    draft = copy.deepcopy(document)
    draft["term_lists"][0]["forbidden"].append(term)
    return draft


# --- the gate (must show 2) ------------------------------------------------------------------


def test_a_draft_that_stops_a_passing_example_is_refused_naming_it(provider, tmp_path):
    current = small_policy(provider)
    policy.import_policy(current)
    version = PolicyVersion.current()
    code, _out, err = import_file(tmp_path, with_term(current, "harbour"))
    assert code == 1
    assert "plain-news-allowed" in err and "--allow-regressions" in err
    assert "example plain-news-allowed: passed -> failed (regression)" in err
    assert PolicyVersion.current() == version
    assert "harbour" not in TermList.objects.get().forbidden
    assert not GovernanceEvent.objects.filter(decision="released").exists()


def test_allowing_regressions_applies_and_the_event_says_one_was_accepted(provider, tmp_path):
    current = small_policy(provider)
    policy.import_policy(current)
    code, out, _err = import_file(tmp_path, with_term(current, "harbour"), "--allow-regressions")
    assert code == 0, _err
    assert "Applied with 1 regression(s) accepted: plain-news-allowed" in out
    assert "harbour" in TermList.objects.get().forbidden
    event = GovernanceEvent.objects.get(decision="released")
    assert event.check_name == "policy" and event.actor == "command:import_policy"
    assert event.detail["regressions_accepted"] == 1 and event.detail["regressions"] == ["plain-news-allowed"]
    assert event.detail["version"] == PolicyVersion.current()
    assert event.detail["changed"] == 1


def test_a_term_no_example_contains_applies(provider, tmp_path):
    current = small_policy(provider)
    policy.import_policy(current)
    code, _out, err = import_file(tmp_path, with_term(current, "Skonto"))
    assert code == 0, err
    assert "Skonto" in TermList.objects.get().forbidden
    assert GovernanceEvent.objects.get(decision="released").detail["regressions_accepted"] == 0


# --- the replay (must show 3) ----------------------------------------------------------------


def make_tasks(count: int, with_term_at: set[int], **extra) -> list[Task]:
    now = timezone.now()
    tasks = [Task(configuration="newsroom", status="ready", outcome="allowed",
                  answer=(f"Item {i}: " + ("Heute mit Skonto. " if i in with_term_at else "") + NEWS),
                  created=now - timedelta(minutes=i), **extra) for i in range(count)]
    return Task.objects.bulk_create(tasks)


def test_the_replay_names_exactly_the_tasks_a_new_term_would_stop_and_writes_nothing(provider, tmp_path):
    current = small_policy(provider)
    policy.import_policy(current)
    hits = set(range(3, 190, 11))  # 3, 14, 25, … 179: seventeen of the two hundred
    assert len(hits) == 17
    tasks = make_tasks(200, hits)
    expected_ids = sorted(str(t.pk) for i, t in enumerate(tasks) if i in hits)
    # Texts no longer retained: purged ones, and ones past the retention period, are never replayed.
    make_tasks(5, set(range(5)), purged_at=timezone.now())
    old = make_tasks(4, set(range(4)))
    Task.objects.filter(pk__in=[t.pk for t in old]).update(created=timezone.now() - timedelta(days=400))
    version, events = PolicyVersion.current(), GovernanceEvent.objects.count()

    code, out, err = import_file(tmp_path, with_term(current, "Skonto"), "--dry-run")
    assert code == 0, err
    assert "Replay of 200 retained task text(s), deterministic checks only:" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("allowed→blocked"))
    assert line.strip().startswith("allowed→blocked: 17 task(s): ")
    assert sorted(line.split(": ", 2)[2].split(", ")) == expected_ids
    assert "term_list:Brand words:Skonto: fires on 17 more, 0 fewer" in out
    assert "Skonto" not in out.replace("term_list:Brand words:Skonto", "")  # ids and rules, never text
    assert PolicyVersion.current() == version and GovernanceEvent.objects.count() == events
    assert "Skonto" not in TermList.objects.get().forbidden


def test_the_replay_reports_as_json_through_the_service(provider):
    from governance.policy import release

    current = small_policy(provider)
    policy.import_policy(current)
    tasks = make_tasks(6, {1, 4})
    plan = release.plan_release(with_term(current, "Skonto"), replay=3)
    assert plan.replay.replayed == 3  # the newest three
    assert plan.replay.counts == {"allowed→blocked": 1}
    assert plan.replay.changes["allowed→blocked"] == [str(tasks[1].pk)]
    assert plan.as_dict()["replay"]["rules"]["term_list:Brand words:Skonto"]["new"] == 1


# --- versions through the commands (must show 5, second half) --------------------------------


def test_export_of_an_old_version_reproduces_its_document_and_history_and_diff_show_the_change(
        provider, tmp_path, django_capture_on_commit_callbacks):
    current = small_policy(provider)
    with django_capture_on_commit_callbacks(execute=True):
        policy.import_policy(current)
    old_version, old_text = PolicyVersion.current(), policy.export_yaml()
    with django_capture_on_commit_callbacks(execute=True):
        assert import_file(tmp_path, with_term(current, "Skonto"))[0] == 0
    new_version = PolicyVersion.current()
    assert new_version > old_version

    out = StringIO()
    call_command("export_policy", "--policy-version", str(old_version), stdout=out)
    assert out.getvalue() == old_text
    out = StringIO()
    call_command("export_policy", "--policy-version", str(new_version), stdout=out)
    assert out.getvalue() == policy.export_yaml()

    out = StringIO()
    call_command("policy_history", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split()[0] == str(new_version) and "command:import_policy" in lines[0]
    assert "        changed term_lists:Brand words" in lines

    out = StringIO()
    call_command("policy_diff", str(old_version), str(new_version), stdout=out)
    diff = out.getvalue()
    assert f"--- version {old_version}" in diff
    assert "-    forbidden: [Rabatt*]" in diff and "+    forbidden: [Rabatt*, Skonto]" in diff
    with pytest.raises(CommandError):
        call_command("policy_diff", "1", "999999")
    with pytest.raises(CommandError):
        call_command("export_policy", "--policy-version", "999999")


def test_restoring_a_version_goes_through_the_gate(provider, tmp_path, django_capture_on_commit_callbacks):
    from governance.policy import release

    current = small_policy(provider)
    with django_capture_on_commit_callbacks(execute=True):
        policy.import_policy(with_term(current, "harbour"))
    stopping = PolicyVersion.current()
    with django_capture_on_commit_callbacks(execute=True):
        policy.import_policy(current)
    # Version `stopping` blocks the allowed example: restoring it is a regression, refused.
    with pytest.raises(release.ExamplesRegressed):
        release.restore_version(stopping, actor="user:admin")
    with django_capture_on_commit_callbacks(execute=True):
        release.restore_version(stopping, actor="user:admin", allow_regressions=True)
    assert "harbour" in TermList.objects.get().forbidden
    event = GovernanceEvent.objects.get(decision="released")
    assert event.detail["source"] == "restore" and event.actor == "user:admin"
