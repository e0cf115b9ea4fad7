"""Issue 41: an approval covers the draft as the approver read it (SPEC §12.5, amended).

Repro: an approver schedules an open draft; the author keeps saving into it (a block list switched to report
mode); at the set time the worker published everything under the approver's name. Over the API, publishing
was not pinned to the draft the approver read. And: the version names author and approver; `publish_at`
over the API.
"""
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from governance.models import GovernanceEvent, PolicyDraft, PolicyRevision
from governance.policy import proposals
from termlists.models import TermList
from tests.drafts.helpers import live_policy, person, term_list

pytestmark = pytest.mark.django_db


def client_for(make_consumer, name):
    _consumer, token = make_consumer(name, is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def skonto_draft(author):
    draft = proposals.open_draft_for(author, title="Skonto")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    draft.refresh_from_db()
    return draft


def test_a_change_after_the_schedule_withdraws_it_and_the_worker_publishes_nothing(
        provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    author, approver = person("anna"), person("ben", superuser=True)
    draft = skonto_draft(author)
    proposals.schedule_publish(draft, approver, timezone.now() - timedelta(minutes=1))
    draft.refresh_from_db()
    assert draft.approved_revision == proposals.revision_of(draft)
    # The author keeps saving into the same draft: the list goes to report mode.
    proposals.record_change(draft, "term_lists", "Brand words",
                            term_list(None, forbidden=["Rabatt*", "Skonto"], mode="report"))
    draft.refresh_from_db()
    assert (draft.publish_at, draft.scheduled_by, draft.approved_revision) == (None, "", "")
    assert "user:ben" in draft.approval_withdrawn and "user:anna" in draft.approval_withdrawn
    event = GovernanceEvent.objects.get(detail__event="draft.approval_withdrawn")
    assert event.actor == "user:anna" and event.detail["approver"] == "user:ben"
    with django_capture_on_commit_callbacks(execute=True):
        assert proposals.publish_due() == []
    assert TermList.objects.get().mode == "block"
    # The draft page says so, to the approver too.
    client = Client()
    client.force_login(approver)
    page = client.get(f"/admin/governance/policydraft/{draft.pk}/change/").content.decode()
    assert "changed after it was approved" in page


def test_a_change_to_a_submitted_draft_sends_it_back_to_open(provider):
    live_policy(provider)
    author = person("anna")
    draft = skonto_draft(author)
    proposals.submit(draft, author)
    assert draft.approved_revision == proposals.revision_of(draft)
    draft.changes[0]["record"]["forbidden"].append("Gratis")  # a change the service is asked to hold
    proposals.resolve_conflict(draft, "term_lists", "Brand words", "draft")
    draft.refresh_from_db()
    assert draft.status == "open" and draft.approved_revision == ""


def test_the_worker_publishes_only_the_pinned_content(provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    draft = skonto_draft(person("anna"))
    proposals.schedule_publish(draft, person("ben", superuser=True), timezone.now() - timedelta(minutes=1))
    # A write that goes around the service (a raw update) still never reaches the live policy.
    changes = draft.changes
    changes[0]["record"]["mode"] = "report"
    PolicyDraft.objects.filter(pk=draft.pk).update(changes=changes)
    with django_capture_on_commit_callbacks(execute=True):
        results = proposals.publish_due()
    assert results == [{"draft": draft.pk, "refused": "draft_changed"}]
    assert TermList.objects.get().mode == "block"
    assert GovernanceEvent.objects.get(decision="draft_refused").detail["reason"] == "draft_changed"


def test_publishing_over_the_api_names_the_revision_it_approves(make_consumer, provider,
                                                                django_capture_on_commit_callbacks):
    live_policy(provider)
    author, approver = client_for(make_consumer, "ci"), client_for(make_consumer, "release-manager")
    document = author.get("/api/v1/policy").json()
    document["term_lists"][0]["forbidden"].append("Skonto")
    made = author.post("/api/v1/policy/drafts", {"title": "Skonto", "document": document}, format="json").json()
    read = approver.get(f"/api/v1/policy/drafts/{made['id']}?replay=0").json()
    revision = read["draft"]["revision"]
    assert revision and made["revision"] == revision
    missing = approver.post(f"/api/v1/policy/drafts/{made['id']}/publish", {}, format="json")
    assert missing.status_code == 400 and "revision" in missing.json()["error"]["fields"]
    # The author changes the draft after the approver read it.
    document["term_lists"][0]["mode"] = "report"
    assert author.post("/api/v1/policy/drafts", {"title": "Skonto", "document": document},
                       format="json").status_code == 200
    stale = approver.post(f"/api/v1/policy/drafts/{made['id']}/publish", {"revision": revision}, format="json")
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "draft_changed"
    assert TermList.objects.get().mode == "block"
    fresh = approver.get(f"/api/v1/policy/drafts/{made['id']}?replay=0").json()["draft"]["revision"]
    with django_capture_on_commit_callbacks(execute=True):
        done = approver.post(f"/api/v1/policy/drafts/{made['id']}/publish", {"revision": fresh, "allow_regressions": True},
                             format="json")  # report mode regresses the discount example
    assert done.status_code == 200, done.content
    assert TermList.objects.get().mode == "report"


def test_publish_at_over_the_api_and_the_version_names_author_and_approver(make_consumer, provider,
                                                                           django_capture_on_commit_callbacks):
    live_policy(provider)
    author, approver = client_for(make_consumer, "ci"), client_for(make_consumer, "release-manager")
    document = author.get("/api/v1/policy").json()
    document["term_lists"][0]["forbidden"].append("Skonto")
    made = author.post("/api/v1/policy/drafts", {"title": "Skonto", "document": document}, format="json").json()
    at = (timezone.now() + timedelta(hours=1)).isoformat()
    bad = approver.post(f"/api/v1/policy/drafts/{made['id']}/publish",
                        {"revision": made["revision"], "publish_at": "tomorrow"}, format="json")
    assert bad.status_code == 400 and "publish_at" in bad.json()["error"]["fields"]
    # Each member is well formed, together they ask the worker to accept a regression: 422, nothing scheduled.
    regressing = approver.post(f"/api/v1/policy/drafts/{made['id']}/publish",
                               {"revision": made["revision"], "publish_at": at, "allow_regressions": True},
                               format="json")
    assert regressing.status_code == 422 and "allow_regressions" in regressing.json()["error"]["fields"]
    assert approver.get(f"/api/v1/policy/drafts/{made['id']}?replay=0").json()["draft"]["publish_at"] is None
    scheduled = approver.post(f"/api/v1/policy/drafts/{made['id']}/publish",
                              {"revision": made["revision"], "publish_at": at}, format="json")
    assert scheduled.status_code == 200, scheduled.content
    body = scheduled.json()
    assert body["status"] == "open" and body["publish_at"] and body["scheduled_by"] == "consumer:release-manager"
    assert "Skonto" not in TermList.objects.get().forbidden
    with django_capture_on_commit_callbacks(execute=True):
        assert proposals.publish_due(timezone.now() + timedelta(hours=2))[0]["published"]
    versions = approver.get("/api/v1/policy/versions").json()["versions"]
    assert (versions[0]["author"], versions[0]["approver"]) == ("consumer:ci", "consumer:release-manager")
    # A direct release (four eyes off) is its actor's: author and approver both.
    document = approver.get("/api/v1/policy").json()
    document["term_lists"][0]["forbidden"].append("Gratis")
    with django_capture_on_commit_callbacks(execute=True):
        assert approver.put("/api/v1/policy", document, format="json").status_code == 200
    newest = PolicyRevision.objects.order_by("-number").first()
    assert (newest.author, newest.approver) == ("consumer:release-manager", "consumer:release-manager")


def test_the_command_publishes_the_revision_it_names(provider, django_capture_on_commit_callbacks):
    from io import StringIO

    from django.core.management import CommandError, call_command

    live_policy(provider)
    draft = skonto_draft(person("anna"))
    with pytest.raises(CommandError, match="changed after you read it"):
        call_command("policy_draft", str(draft.pk), "--publish", "--revision", "0" * 64, stdout=StringIO())
    assert "Skonto" not in TermList.objects.get().forbidden
    with django_capture_on_commit_callbacks(execute=True):
        call_command("policy_draft", str(draft.pk), "--publish", "--revision", proposals.revision_of(draft),
                     stdout=StringIO())
    assert "Skonto" in TermList.objects.get().forbidden


def test_an_admin_save_into_a_scheduled_draft_tells_the_author_it_withdrew_the_schedule(provider):
    from django.contrib.auth.models import Permission

    live_policy(provider)
    pia = person("pia")
    pia.user_permissions.add(*Permission.objects.filter(codename__in=[
        f"{a}_{m}" for m in ("termlist", "policydraft") for a in ("add", "change", "view")]))
    draft = skonto_draft(pia)
    proposals.schedule_publish(draft, person("ben", superuser=True), timezone.now() + timedelta(hours=1))
    brand = TermList.objects.get()
    client = Client()
    client.force_login(pia)
    response = client.post(f"/admin/termlists/termlist/{brand.pk}/change/", {
        "name": brand.name, "forbidden": "Rabatt*\nSkonto\nGratis", "required": "",
        "configurations": [c.pk for c in brand.configurations.all()], "site": "", "language": "", "message": "",
        "mode": "block", "is_active": "on"}, follow=True)
    assert "changed after it was approved" in response.content.decode()
    draft.refresh_from_db()
    assert draft.publish_at is None and draft.scheduled_by == ""
