"""Drafts through the commands and the worker (SPEC §12.5): import --draft, the report as the API gives it,
publish_at run by publish_due (the beat task and the embedded default's command)."""
import copy
import json
from datetime import timedelta
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from rest_framework.test import APIClient

from governance.models import GovernanceEvent, PolicyDraft, PolicyRevision, PolicyVersion
from governance.policy import proposals
from governance.work import tasks as worker_tasks
from termlists.models import TermList
from tests.drafts.helpers import live_policy, person, term_list
from tests.drafts.test_report import tasks_at

pytestmark = pytest.mark.django_db


def command(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_import_policy_with_draft_makes_then_updates_a_draft_and_releases_nothing(provider, tmp_path):
    document = live_policy(provider)
    version = PolicyVersion.current()
    draft_file = tmp_path / "draft.yaml"
    document["term_lists"][0]["forbidden"].append("Skonto")
    draft_file.write_text(yaml.safe_dump(document), encoding="utf-8")
    out = command("import_policy", str(draft_file), "--draft", "Skonto please")
    draft = PolicyDraft.objects.get()
    assert f"Draft {draft.pk} created: 1 change(s)" in out and "change term_lists:Brand words" in out
    assert draft.author_label == "command:import_policy" and draft.title == "Skonto please"
    document["pattern_rules"][0]["statement"] = "Never promise."
    draft_file.write_text(yaml.safe_dump(document), encoding="utf-8")
    out = command("import_policy", str(draft_file), "--draft", "Skonto please")
    assert f"Draft {draft.pk} updated: 2 change(s)" in out and PolicyDraft.objects.count() == 1
    assert PolicyVersion.current() == version and TermList.objects.get().forbidden == "Rabatt*"
    with pytest.raises(CommandError, match="releases nothing"):
        call_command("import_policy", str(draft_file), "--draft", "x", "--dry-run", stdout=StringIO())
    draft_file.write_text(yaml.safe_dump({"configurations": [{"identifier": "x"}]}), encoding="utf-8")
    with pytest.raises(CommandError):
        call_command("import_policy", str(draft_file), "--draft", "broken", stdout=StringIO(), stderr=StringIO())


def test_the_api_and_the_command_give_the_same_report_for_the_same_draft(provider, make_consumer):
    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"), title="Skonto")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    proposals.record_change(draft, "examples", "plain-news-allowed", None)
    tasks_at([1, 2, 3, 4, 5, 6, 7], with_term={0, 2, 3, 5, 6})
    _consumer, token = make_consumer("release-manager", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    from_api = client.get(f"/api/v1/policy/drafts/{draft.pk}?replay=6").json()
    from_command = json.loads(command("policy_draft", str(draft.pk), "--format", "json", "--replay", "6",
                                      "--counts-only"))
    assert from_api == from_command
    by_hours = client.get(f"/api/v1/policy/drafts/{draft.pk}?replay_hours=0.05&judges=cached").json()
    assert by_hours == json.loads(command("policy_draft", str(draft.pk), "--format", "json", "--replay-hours",
                                          "0.05", "--judges", "cached", "--counts-only"))
    # 3 minutes hold 2 texts: fewer than GAVEL_REPORT_MIN_TEXTS, so the counts-only report says nothing more.
    assert by_hours["replay"]["window"] == {"hours": 0.05} and by_hours["replay"]["screened"] == "fewer than 5"
    assert by_hours["replay"]["withheld"] is True and "counts" not in by_hours["replay"]
    assert from_api["replay"]["screened"] == 6 and from_api["replay"]["counts"] == {
        "allowed→blocked": "fewer than 5", "blocked→allowed": "fewer than 5", "new_hints": "fewer than 5",
        "lost_hints": "fewer than 5"}  # 4 changed: fewer than GAVEL_REPORT_MIN_TEXTS
    assert from_api["changes"] == [{"section": "term_lists", "name": "Brand words", "action": "change"},
                                   {"section": "examples", "name": "plain-news-allowed", "action": "remove"}]
    # What the admin page shows (people who may open every task) is the full report, task ids included.
    full = json.loads(command("policy_draft", str(draft.pk), "--format", "json", "--replay", "6"))
    assert full == json.loads(json.dumps(proposals_report_of(draft, 6)))
    assert len(full["replay"]["changed"]) == 4
    assert {k: v for k, v in full.items() if k not in ("replay", "blocked")} == {
        k: v for k, v in from_api.items() if k not in ("replay", "blocked")}  # both count readers and text readers apart
    text = command("policy_draft", str(draft.pk), "--replay", "6")
    assert "remove examples:plain-news-allowed" in text and "allowed→blocked: 4" in text


def proposals_report_of(draft, replay):
    from governance.policy.proposals_report import draft_report

    return draft_report(draft, replay_tasks=replay)


def scheduled_draft(provider, forbidden, *, word):
    """A draft adding a term, submitted and scheduled by an approver for a minute ago."""
    live_policy(provider)
    editor, admin = person("editor"), person("admin", superuser=True)
    draft = proposals.open_draft_for(editor, title=f"Add {word}")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=forbidden))
    proposals.submit(draft, editor)
    proposals.schedule_publish(draft, admin, timezone.now() - timedelta(minutes=1))
    return draft


def test_a_due_draft_is_published_by_the_worker_through_the_gate_and_the_log_holds_no_text(
        provider, django_capture_on_commit_callbacks):
    draft = scheduled_draft(provider, ["Rabatt*", "Skonto"], word="Skonto")
    version = PolicyVersion.current()
    later = PolicyDraft.objects.create(title="later", author_label="user:x", base_version=version,
                                       publish_at=timezone.now() + timedelta(hours=1), scheduled_by="user:admin")
    with django_capture_on_commit_callbacks(execute=True):
        assert worker_tasks.publish_due_drafts.apply().get() == 1  # what celery beat runs
    draft.refresh_from_db()
    later.refresh_from_db()
    assert draft.status == "published" and draft.published_version == PolicyVersion.current() > version
    assert later.status == "open"
    assert TermList.objects.get().forbidden.split() == ["Rabatt*", "Skonto"]
    revision = PolicyRevision.objects.get(number=draft.published_version)
    assert (revision.author, revision.approver) == ("user:editor", "user:admin")
    events = GovernanceEvent.objects.filter(correlation_id=f"draft-{draft.pk}").order_by("at", "id")
    assert [e.detail["event"] for e in events] == ["draft.created", "draft.submitted", "draft.published"]
    assert events.last().detail["version"] == draft.published_version and events.last().detail["scheduled"]
    logged = json.dumps([[e.actor, e.detail] for e in GovernanceEvent.objects.all()], ensure_ascii=False)
    assert "Rabattaktion" not in logged and "harbour" not in logged and "Add Skonto" not in logged
    assert command("publish_due_drafts") == "No draft is due.\n"


def test_a_due_draft_with_a_regression_is_refused_once_and_stays_a_draft(provider):
    draft = scheduled_draft(provider, ["Rabatt*", "harbour"], word="harbour")
    version = PolicyVersion.current()
    out = command("publish_due_drafts")  # the embedded default's way, as the README names it
    assert out == f"Draft {draft.pk} refused: examples_regressed.\n"
    draft.refresh_from_db()
    assert draft.status == "submitted" and draft.publish_at is None and PolicyVersion.current() == version
    refused = GovernanceEvent.objects.get(decision="draft_refused")
    assert refused.detail["examples"] == ["plain-news-allowed"] and refused.detail["scheduled"] is True
    assert command("publish_due_drafts") == "No draft is due.\n"  # not tried again every minute


def test_only_an_approver_schedules_and_an_unscheduled_time_is_not_published(provider):
    live_policy(provider)
    editor = person("editor")
    draft = proposals.open_draft_for(editor)
    with pytest.raises(proposals.NotGranted):
        proposals.schedule_publish(draft, editor, timezone.now())
    PolicyDraft.objects.filter(pk=draft.pk).update(publish_at=timezone.now() - timedelta(minutes=1))
    assert proposals.publish_due() == []


def test_policy_draft_restore_and_list(provider, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document = live_policy(provider)
    old = PolicyVersion.current()
    changed = copy.deepcopy(document)
    changed["examples"].pop()
    from governance.policy import release

    with django_capture_on_commit_callbacks(execute=True):
        release.apply_release(changed, actor="user:admin", allow_regressions=True)
    out = json.loads(command("policy_draft", "--restore", str(old), "--format", "json", "--replay", "0"))
    assert {"section": "examples", "name": "plain-news-allowed", "action": "add"} in out["changes"]
    assert out["draft"]["author"] == "command:policy_draft"
    assert f"{out['draft']['id']:>6}  open" in command("policy_draft", "--list")
    with pytest.raises(CommandError):
        call_command("policy_draft", "424242", stdout=StringIO())


def test_the_operator_submits_schedules_and_publishes_from_the_command_line(
        provider, tmp_path, django_capture_on_commit_callbacks):
    document = live_policy(provider)
    document["term_lists"][0]["forbidden"].append("harbour")  # stops the allowed example: a regression
    path = tmp_path / "draft.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    command("import_policy", str(path), "--draft", "harbour")
    draft = PolicyDraft.objects.get()
    assert command("policy_draft", str(draft.pk), "--submit") == f"Draft {draft.pk} submitted.\n"
    with pytest.raises(CommandError, match="plain-news-allowed"):
        call_command("policy_draft", str(draft.pk), "--publish", stdout=StringIO())
    with pytest.raises(CommandError, match="ISO time"):
        call_command("policy_draft", str(draft.pk), "--publish-at", "tomorrowish", stdout=StringIO())
    assert "publishes at" in command("policy_draft", str(draft.pk), "--publish-at", "now")
    assert command("publish_due_drafts") == f"Draft {draft.pk} refused: examples_regressed.\n"
    with django_capture_on_commit_callbacks(execute=True):
        out = command("policy_draft", str(draft.pk), "--publish", "--allow-regressions")
    assert out == f"Draft {draft.pk} published as version {PolicyVersion.current()}.\n"
    revision = PolicyRevision.objects.get(number=PolicyVersion.current())
    assert (revision.author, revision.approver, revision.regressions_accepted) == (
        "command:import_policy", "command:policy_draft", 1)


def test_a_conflict_is_resolved_from_the_command_line(provider, tmp_path):
    document = live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    document["term_lists"][0]["forbidden"] = ["Rabatt*", "Gratis"]
    from governance.policy import release

    release.apply_release(document, actor="user:admin")
    assert "CONFLICT term_lists:Brand words" in command("policy_draft", str(draft.pk), "--replay", "0")
    with pytest.raises(CommandError, match="draft_conflicts|conflicts"):
        call_command("policy_draft", str(draft.pk), "--publish", stdout=StringIO())
    with pytest.raises(CommandError, match="SECTION:NAME"):
        call_command("policy_draft", str(draft.pk), "--resolve", "Brand words", stdout=StringIO())
    out = command("policy_draft", str(draft.pk), "--resolve", "term_lists:Brand words=draft", "--publish")
    assert "resolved (draft)" in out and "published as version" in out
    assert TermList.objects.get().forbidden.split() == ["Rabatt*", "Skonto"]
