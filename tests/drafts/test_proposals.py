"""Drafts (SPEC §12.5) through the service: changes record by record, conflicts, approval, restore."""
import copy

import pytest
from django.test import override_settings
from django.utils import timezone

from governance import policy
from governance.models import Configuration, GovernanceEvent, PolicyDraft, PolicyRevision, PolicyVersion
from governance.policy import proposals, release
from governance.policy.format import NAME_KEYS
from termlists.models import TermList
from tests.drafts.helpers import live_policy, person, term_list

pytestmark = pytest.mark.django_db


def test_a_change_lands_in_the_draft_and_the_live_policy_stays_as_it_is(provider):
    live_policy(provider)
    editor = person("editor")
    version = PolicyVersion.current()
    draft = proposals.open_draft_for(editor, title="Skonto too")
    assert proposals.open_draft_for(editor) == draft  # the newest open draft is reused
    proposals.record_change(draft, "term_lists", "Brand words",
                            term_list(None, forbidden=["Rabatt*", "Skonto"]))
    draft.refresh_from_db()
    assert [(c["section"], c["name"], c["action"]) for c in draft.changes] == [
        ("term_lists", "Brand words", "change")]
    assert draft.changes[0]["base"]["forbidden"] == ["Rabatt*"]
    document, conflicts = proposals.draft_document(draft)
    assert conflicts == []
    assert document["term_lists"][0]["forbidden"] == ["Rabatt*", "Skonto"]
    assert PolicyVersion.current() == version and TermList.objects.get().forbidden == "Rabatt*"
    assert proposals.changes_touching("term_lists", "Brand words") == [draft]
    assert proposals.changes_touching("pattern_rules", "legal.no-guarantee") == []
    assert proposals.touched_records() == {("term_lists", "Brand words"): [draft]}
    assert proposals.touched_records("examples") == {}
    assert GovernanceEvent.objects.filter(decision="draft_created", actor="user:editor").count() == 1


def test_adding_then_removing_a_new_record_leaves_no_change(provider):
    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    new = dict(term_list(None), name="Extra words", forbidden=["Gratis"])
    proposals.record_change(draft, "term_lists", "Extra words", new)
    assert [c["action"] for c in draft.changes] == ["add"]
    proposals.record_change(draft, "term_lists", "Extra words", None)
    assert draft.changes == []
    proposals.record_change(draft, "examples", "plain-news-allowed", None)
    assert [(c["action"], c["record"]) for c in draft.changes] == [("remove", None)]
    document, _ = proposals.draft_document(draft)
    assert [e["name"] for e in document["examples"]] == ["discount-word-blocked"]
    with pytest.raises(proposals.UnknownRecord):
        proposals.record_change(draft, "colours", "red", None)


def test_a_record_changed_live_and_in_the_draft_is_the_one_conflict_and_blocks_publishing(
        provider, django_capture_on_commit_callbacks):
    document = live_policy(provider)
    admin = person("admin", superuser=True)
    draft = proposals.open_draft_for(person("editor"))
    base = draft.base_version
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    # Meanwhile a direct release changes the same list and another record.
    document["term_lists"][0]["forbidden"] = ["Rabatt*", "Gratis"]
    document["pattern_rules"][0]["statement"] = "Never promise an outcome."
    with django_capture_on_commit_callbacks(execute=True):
        release.apply_release(document, actor="user:admin")
    assert PolicyVersion.current() > base
    merged, conflicts = proposals.draft_document(draft)
    assert [(c.section, c.name) for c in conflicts] == [("term_lists", "Brand words")]
    conflict = conflicts[0]
    assert (conflict.base["forbidden"], conflict.live["forbidden"], conflict.draft["forbidden"]) == (
        ["Rabatt*"], ["Rabatt*", "Gratis"], ["Rabatt*", "Skonto"])
    assert merged["term_lists"][0]["forbidden"] == ["Rabatt*", "Gratis"]  # kept as live until resolved
    assert merged["pattern_rules"][0]["statement"] == "Never promise an outcome."
    version = PolicyVersion.current()
    with pytest.raises(proposals.DraftConflicts) as refused:
        proposals.publish(draft, admin)
    assert refused.value.fields == {"conflicts": ["term_lists:Brand words"]}
    assert PolicyVersion.current() == version
    assert GovernanceEvent.objects.get(decision="draft_refused").detail["reason"] == "conflicts"

    proposals.resolve_conflict(draft, "term_lists", "Brand words", "draft")
    assert proposals.draft_document(draft)[1] == []
    with django_capture_on_commit_callbacks(execute=True):
        number = proposals.publish(draft, admin)
    assert number == PolicyVersion.current() > version
    assert TermList.objects.get().forbidden.split() == ["Rabatt*", "Skonto"]
    assert policy.export_policy()["pattern_rules"][0]["statement"] == "Never promise an outcome."


def test_taking_the_live_record_drops_the_change():
    draft = PolicyDraft.objects.create(changes=[{"section": "term_lists", "name": "X", "action": "add",
                                                 "record": {"name": "X"}, "base": None}])
    proposals.resolve_conflict(draft, "term_lists", "X", "live")
    assert draft.changes == []


def test_publishing_records_author_and_approver_and_four_eyes_refuses_the_author(
        provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    author = person("anna", publisher=True)
    other = person("ben", publisher=True)
    nobody = person("carl")
    draft = proposals.open_draft_for(author)
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    proposals.submit(draft, author)
    assert not proposals.can_publish(nobody, draft)
    with pytest.raises(proposals.NotGranted):
        proposals.publish(draft, nobody)
    with override_settings(GAVEL_POLICY_FOUR_EYES=True):
        assert not proposals.can_publish(author, draft) and proposals.can_publish(other, draft)
        with pytest.raises(proposals.FourEyesRefused):
            proposals.publish(draft, author)
        with django_capture_on_commit_callbacks(execute=True):
            number = proposals.publish(draft, other)
    with override_settings(GAVEL_POLICY_FOUR_EYES=False):
        assert proposals.can_publish(author, draft)
    draft.refresh_from_db()
    assert (draft.status, draft.published_version, draft.approver_label) == ("published", number, "user:ben")
    revision = PolicyRevision.objects.get(number=number)
    assert (revision.author, revision.approver, revision.source) == ("user:anna", "user:ben", "draft")
    event = GovernanceEvent.objects.get(decision="draft_published")
    assert event.actor == "user:ben" and event.detail["version"] == number and event.detail["changed"] == 1
    with pytest.raises(proposals.NotPublishable):
        proposals.publish(draft, other)


def test_the_gate_refuses_a_regression_until_the_approver_accepts_it_counted(
        provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    admin = person("admin", superuser=True)
    draft = proposals.open_draft_for(person("editor"))
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "harbour"]))
    with pytest.raises(release.ExamplesRegressed) as refused:
        proposals.publish(draft, admin)
    assert refused.value.plan.regressions == ["plain-news-allowed"]
    event = GovernanceEvent.objects.get(decision="draft_refused")
    assert event.detail["reason"] == "examples_regressed" and event.detail["regressions"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        number = proposals.publish(draft, admin, allow_regressions=True)
    draft.refresh_from_db()
    assert draft.regressions_accepted == 1
    assert PolicyRevision.objects.get(number=number).regressions_accepted == 1
    assert GovernanceEvent.objects.get(decision="draft_published").detail["regressions_accepted"] == 1


def test_send_back_keeps_a_comment_and_withdraw_ends_the_draft(provider):
    live_policy(provider)
    editor, admin = person("editor"), person("admin", superuser=True)
    draft = proposals.open_draft_for(editor)
    proposals.submit(draft, editor)
    with pytest.raises(proposals.NotGranted):
        proposals.send_back(draft, editor, "no")
    proposals.send_back(draft, admin, "Please add an example for Skonto.")
    assert draft.status == "open" and draft.comments.get().text == "Please add an example for Skonto."
    event = GovernanceEvent.objects.get(decision="draft_sent_back")
    assert "Skonto" not in str(event.detail)
    proposals.withdraw(draft, editor)
    assert draft.status == "withdrawn"
    with pytest.raises(proposals.NotPublishable):
        proposals.submit(draft, editor)
    assert proposals.open_draft_for(editor) != draft


def test_restore_makes_a_draft_that_removes_what_the_old_version_lacked(provider, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        document = live_policy(provider)
    old = PolicyVersion.current()
    assert PolicyRevision.objects.filter(number=old).exists()
    document["examples"].append({"name": "third", "configuration": "newsroom", "text": "Hallo.",
                                 "expect": {"outcome": "allowed"}})
    document["pattern_rules"].append(dict(document["pattern_rules"][0], identifier="legal.second"))
    with django_capture_on_commit_callbacks(execute=True):
        release.apply_release(document, actor="user:admin")
    version = PolicyVersion.current()
    old_doc = policy.export_policy()
    draft = proposals.draft_from_version(old, person("admin", superuser=True))
    removed = {(c["section"], c["name"]) for c in draft.changes if c["action"] == "remove"}
    assert {("examples", "third"), ("pattern_rules", "legal.second")} <= removed
    assert PolicyVersion.current() == version and policy.export_policy() == old_doc
    with pytest.raises(proposals.UnknownRecord):
        proposals.draft_from_version(999999, None)


def test_every_section_has_a_name_key():
    assert set(NAME_KEYS) == set(proposals.SECTIONS)


def test_a_record_read_back_with_sorted_keys_is_put_in_the_files_order(provider):
    """PostgreSQL's JSON keeps keys sorted: the draft's document (and its diff) must not depend on it."""
    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    record = term_list(None, forbidden=["Rabatt*", "Skonto"])
    example = dict(policy.export_policy()["examples"][0], note="why")
    proposals.record_change(draft, "term_lists", "Brand words", dict(sorted(record.items())))
    proposals.record_change(draft, "examples", example["name"], dict(sorted(example.items())))
    document, _ = proposals.draft_document(draft)
    assert list(document["term_lists"][0]) == list(policy.TERM_LIST_KEYS)
    assert list(document["examples"][0]) == list(policy.EXAMPLE_KEYS)
    assert list(document["examples"][0]["expect"]) == [k for k in policy.EXPECT_KEYS if k in example["expect"]]


def test_the_governance_log_reads_a_draft_event_as_a_sentence(provider):
    from governance.screening.event_text import sentence

    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    event = GovernanceEvent.objects.get(decision="draft_created")
    assert sentence(event) == (f"Policy draft opened by the policy release check; draft {draft.pk}, 0 change(s), "
                               f"live version {PolicyVersion.current()}.")


def test_celery_beat_publishes_due_drafts_every_sweep(settings):
    from governance.celery import app
    from governance.work import tasks  # noqa: F401 -- the worker imports it (autodiscovery)

    schedule = {entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule["governance.publish_due_drafts"] == float(settings.GAVEL_SWEEP_INTERVAL_SECONDS)
    assert "governance.publish_due_drafts" in app.tasks


def test_every_record_of_the_example_policy_survives_a_draft_unchanged():
    """Each record of the normative example, recorded into a draft (kept as JSON in the database) and read
    back: the draft's document is the live one, record for record, and nothing conflicts."""
    from tests.governance.test_policy_examples import example_document

    policy.import_policy(example_document())
    live = policy.export_policy()
    draft = proposals.open_draft_for(person("editor"))
    for section, key in NAME_KEYS.items():
        for record in live.get(section) or ():  # mcp_servers: only once a server exists
            changed = dict(record)
            proposals.record_change(draft, section, record[key], None)  # a removal, then the record itself back
            proposals.record_change(draft, section, record[key], changed)
    assert PolicyDraft.objects.get(pk=draft.pk).changes == []
    # Every record changed in the draft: its base and record both travel through the database.
    for section, key in NAME_KEYS.items():
        for record in live.get(section) or ():  # mcp_servers: only once a server exists
            proposals.record_change(draft, section, record[key], dict(record, **{key: record[key]}) | (
                {"note": "changed"} if section == "examples" else {}))
    draft = PolicyDraft.objects.get(pk=draft.pk)
    document, conflicts = proposals.draft_document(draft)
    assert conflicts == []
    assert {k: v for k, v in document.items() if k != "examples"} == {
        k: v for k, v in live.items() if k != "examples"}
    assert [e["note"] for e in document["examples"]] == ["changed"] * len(live["examples"])


def test_two_approvers_publishing_at_once_publish_once_with_one_event(provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    author, first, second = person("anna"), person("ben", publisher=True), person("dora", publisher=True)
    draft = proposals.open_draft_for(author)
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    seen_by_second = PolicyDraft.objects.get(pk=draft.pk)  # the second approver's page, read before the first publish
    with django_capture_on_commit_callbacks(execute=True):
        number = proposals.publish(draft, first)
    with pytest.raises(proposals.NotPublishable):
        proposals.publish(seen_by_second, second)
    draft.refresh_from_db()
    assert (draft.status, draft.published_version, draft.approver_label) == ("published", number, "user:ben")
    assert GovernanceEvent.objects.filter(decision="draft_published").count() == 1


def test_only_an_administrator_publishes_a_draft_that_writes_administrator_fields(
        provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    author, publisher, admin = person("anna"), person("ben", publisher=True), person("root", superuser=True)
    configuration = copy.deepcopy(policy.export_policy()["configurations"][0])
    configuration["rules"]["mode"] = "off"  # switches the rules judges off: an administrator's field
    draft = proposals.open_draft_for(author)
    proposals.record_change(draft, "configurations", "newsroom", configuration)
    with pytest.raises(proposals.AdminOnlyChanges) as refused:
        proposals.publish(draft, publisher)
    assert "configurations:newsroom rules.mode" in str(refused.value)
    with pytest.raises(proposals.AdminOnlyChanges):
        proposals.schedule_publish(draft, publisher, timezone.now())
    assert Configuration.objects.get(identifier="newsroom").rule_mode == "report"
    # A change of an ordinary field stays any approver's to publish; the administrator publishes both.
    harmless = proposals.open_draft_for(person("carl"))
    proposals.record_change(harmless, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    with django_capture_on_commit_callbacks(execute=True):
        proposals.publish(harmless, publisher)
        proposals.publish(draft, admin)
    assert Configuration.objects.get(identifier="newsroom").rule_mode == "off"


def test_a_new_provider_in_a_draft_is_an_administrators_to_publish(provider):
    live_policy(provider)
    document = policy.export_policy()
    added = {**copy.deepcopy(document["providers"][0]), "name": "elsewhere", "api_base": "https://elsewhere.example/v1"}
    draft = proposals.open_draft_for(person("anna"))
    proposals.record_change(draft, "providers", "elsewhere", added)
    with pytest.raises(proposals.AdminOnlyChanges) as refused:
        proposals.publish(draft, person("ben", publisher=True))
    assert "providers:elsewhere api_base" in str(refused.value)
