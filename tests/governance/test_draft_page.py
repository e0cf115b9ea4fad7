"""The draft's page in the admin (SPEC §12.5, issue 27): diff, examples live vs draft, replay over a chosen window
with each changed text linked (and its passage for text readers), conflicts, approval buttons, restore as a draft."""
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.test import Client, override_settings
from django.utils import timezone

from governance import policy
from governance.admin.draft_page import replay_rows
from governance.models import GovernanceEvent, PolicyDraft, PolicyRevision, PolicyVersion, Task
from governance.policy import proposals, release
from termlists.models import TermList
from tests.drafts.helpers import live_policy, person, term_list
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.django_db


def editor():
    user = person("pia")
    user.user_permissions.add(*Permission.objects.filter(codename__in=[
        f"{a}_{m}" for m in ("termlist", "policyexample", "policydraft") for a in ("add", "change", "view")]))
    return user


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def tasks_with_discount(ages_in_hours: list[float]) -> list[Task]:
    """Retained texts that name a discount (blocked live, in block mode) and one plain text."""
    now = timezone.now()
    rows = [Task(configuration="newsroom", status="ready", outcome="blocked", created=now - timedelta(hours=age),
                 answer=f"Item {i}: Heute mit Rabattaktion für alle. " + NEWS) for i, age in enumerate(ages_in_hours)]
    rows.append(Task(configuration="newsroom", status="ready", outcome="allowed", answer=NEWS,
                     created=now - timedelta(minutes=1)))
    return Task.objects.bulk_create(rows)


def report_mode_draft(author) -> PolicyDraft:
    draft = proposals.open_draft_for(author, title="Brand words as hints")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, mode="report"))
    return draft


def page_of(client, draft, **params) -> str:
    response = client.get(f"/admin/governance/policydraft/{draft.pk}/change/", params)
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_the_diff_the_regression_and_the_replayed_texts_with_their_passage(provider):
    live_policy(provider)
    pia = editor()
    tasks = tasks_with_discount([0.5, 30])
    draft = report_mode_draft(pia)
    html = page_of(client_for(pia), draft)
    assert '<span class="removed">-    mode: block</span>' in html and '<span class="added">+    mode: report</span>' in html
    row = re.search(r'<tr class="regression" id="example-discount-word-blocked">(.*?)</tr>', html, re.S).group(1)
    assert "passed" in row and "failed" in row and "(regression)" in row
    assert "1 passing example would fail (a regression)." in html
    # Precision and recall in words, not confusion counts alone.
    assert "fired on 1 of 1 example that expects it; never fired where it should not" in html
    # Both discount texts change, each linked by its whole id, the passage marked for a text reader.
    assert "3 retained texts of the last 500 tasks screened under both policies." in html
    for task in tasks[:2]:
        assert f'<a href="/review/tasks/{task.pk}/"><code class="gavel-id">{task.pk}</code></a>' in html
    assert str(tasks[2].pk) not in html
    assert "blocked → delivered (2)" in html
    # The report names no changed rule (the same term fires, the list's mode changed): the page finds the
    # draft's term in each text and marks it, for a reader allowed to read texts.
    assert html.count("<mark>Rabattaktion</mark>") == 2
    rows = re.findall(r'<tr class="replayed">(.*?)</tr>', html, re.S)
    assert len(rows) == 2 and all("<td>blocked</td><td>delivered with hints</td>" in row for row in rows)
    # Nothing of it is live.
    assert TermList.objects.get().mode == "block"


def test_the_window_chooses_the_last_hours_and_the_drafts_button_switches_judges(provider):
    live_policy(provider)
    pia = editor()
    tasks = tasks_with_discount([0.5, 30])
    draft = report_mode_draft(pia)
    html = page_of(client_for(pia), draft, window="hours", hours="2", tasks="500")
    assert "2 retained texts of the last 2.0 hours screened under both policies." in html
    assert str(tasks[0].pk) in html and str(tasks[1].pk) not in html
    # Judges are the draft's choice (on by default), switched by a button the governance of the draft logs.
    assert 'id="draft-judges"' in html and "cost 0.000000 of at most 1.00." in html
    switched = client_for(pia).post(f"/admin/governance/policydraft/{draft.pk}/change/", {"replay_judges": "0"})
    assert switched.status_code == 302
    draft.refresh_from_db()
    assert draft.replay_judges is False
    off = page_of(client_for(pia), draft, window="tasks", tasks="10")
    assert 'id="draft-judges"' not in off and 'id="draft-judges-off"' in off
    from django.contrib.admin.models import LogEntry

    assert LogEntry.objects.filter(object_id=str(draft.pk), user=pia).count() == 1


def test_passages_only_for_people_allowed_to_read_texts(provider):
    live_policy(provider)
    tasks = tasks_with_discount([0.1])
    replay = {"changed": [{"task_id": str(tasks[0].pk), "before": "blocked", "after": "allowed_with_hints",
                           "rules": {"new": [], "lost": []}, "passage": {"start": 18, "end": 30}}]}
    assert replay_rows(replay, editor())["items"][0]["passage"]["mark"] == "Rabattaktion"
    outsider = replay_rows(replay, AnonymousUser())
    assert outsider["readable"] is False and outsider["items"][0]["passage"] is None


def test_submit_refused_publish_accept_and_the_version_names_author_and_approver(
        provider, django_capture_on_commit_callbacks):
    live_policy(provider)
    pia, root = editor(), person("root", superuser=True)
    draft = report_mode_draft(pia)
    author_page = page_of(client_for(pia), draft)
    assert 'id="draft-publish"' not in author_page and 'id="draft-submit"' in author_page
    client_for(pia).post(f"/admin/governance/policydraft/{draft.pk}/change/", {"submit": "1"})
    draft.refresh_from_db()
    assert draft.status == "submitted"
    admin = client_for(root)
    version = PolicyVersion.current()
    refused = admin.post(f"/admin/governance/policydraft/{draft.pk}/change/", {"publish": "1", "revision": proposals.revision_of(draft)}).content.decode()
    assert 'id="draft-refused"' in refused and "discount-word-blocked" in refused
    assert 'name="allow_regressions"' in refused and PolicyVersion.current() == version
    with django_capture_on_commit_callbacks(execute=True):
        admin.post(f"/admin/governance/policydraft/{draft.pk}/change/", {"publish": "1", "revision": proposals.revision_of(draft), "allow_regressions": "1"})
    draft.refresh_from_db()
    assert draft.status == "published" and draft.regressions_accepted == 1
    assert TermList.objects.get().mode == "report" and PolicyVersion.current() > version
    revision = PolicyRevision.objects.get(number=PolicyVersion.current())
    assert (revision.author, revision.approver) == ("user:pia", "user:root")
    assert 'published as version' in page_of(admin, draft)


def test_send_back_needs_a_comment_and_withdraw_ends_the_draft(provider):
    live_policy(provider)
    pia, root = editor(), person("root", superuser=True)
    draft = report_mode_draft(pia)
    proposals.submit(draft, pia)
    url = f"/admin/governance/policydraft/{draft.pk}/change/"
    nothing = client_for(root).post(url, {"send_back": "1", "comment": " "}, follow=True).content.decode()
    assert "Say why you send the draft back" in nothing
    client_for(root).post(url, {"send_back": "1", "comment": "Keep block mode for Kunde."})
    draft.refresh_from_db()
    assert draft.status == "open"
    assert "Keep block mode for Kunde." in page_of(client_for(pia), draft)
    client_for(pia).post(url, {"withdraw": "1"})
    draft.refresh_from_db()
    assert draft.status == "withdrawn"
    assert GovernanceEvent.objects.filter(decision="draft_withdrawn").count() == 1


@override_settings(GAVEL_POLICY_FOUR_EYES=True)
def test_four_eyes_the_author_has_no_publish_button_another_approver_has(provider):
    live_policy(provider)
    anna, root = person("anna", superuser=True), person("root", superuser=True)
    draft = report_mode_draft(anna)
    own = page_of(client_for(anna), draft)
    assert 'id="draft-publish"' not in own and 'id="draft-four-eyes"' in own
    assert 'id="draft-publish"' in page_of(client_for(root), draft)
    refused = client_for(anna).post(f"/admin/governance/policydraft/{draft.pk}/change/", {"publish": "1", "revision": proposals.revision_of(draft)}, follow=True)
    assert "Four eyes" in refused.content.decode()
    draft.refresh_from_db()
    assert draft.status == "open"


def test_a_conflict_is_shown_side_by_side_and_resolved_by_a_button(provider):
    document = live_policy(provider)
    pia = editor()
    draft = proposals.open_draft_for(pia)
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    document["term_lists"][0]["forbidden"] = ["Rabatt*", "Gratis"]
    release.apply_release(document, actor="user:root", source="import")
    html = page_of(client_for(pia), draft)
    assert 'id="draft-base-moved"' in html and "1 conflict: changed live and in this draft" in html
    sides = re.search(r'<div class="gavel-sides">(.*?)</div>\s*</div>', html, re.S).group(1)
    assert "Gratis" in sides and "Skonto" in sides
    client_for(pia).post(f"/admin/governance/policydraft/{draft.pk}/change/",
                         {"take": "draft", "record": "term_lists:Brand words"})
    assert "conflict" not in page_of(client_for(pia), draft).split('id="draft-changes"')[0].lower().replace(
        "gavel-callout", "")


def test_restore_from_the_history_makes_a_draft_that_names_what_it_removes(provider):
    document = live_policy(provider)
    with_extra = {**document, "term_lists": [*document["term_lists"], {
        "name": "Extra words", "configurations": ["newsroom"], "forbidden": ["Gratis"]}]}
    first = PolicyVersion.current()
    PolicyRevision.objects.all().delete()
    from governance.policy import versions

    versions.record(actor="user:root", source="import")
    policy.import_policy(with_extra)
    versions.record(actor="user:root", source="import")
    pia = editor()
    response = client_for(pia).post("/admin/policy/history/", {"restore": str(first)})
    draft = PolicyDraft.objects.get(author=pia)
    assert response.status_code == 302 and response["Location"] == f"/admin/governance/policydraft/{draft.pk}/change/"
    html = page_of(client_for(pia), draft)
    assert 'id="draft-removals"' in html and "term_lists:Extra words" in html
    assert TermList.objects.filter(name="Extra words").exists()  # nothing changes until it is published


def test_a_policy_editors_index_offers_drafts_history_test_and_dry_run(provider):
    live_policy(provider)
    html = client_for(editor()).get("/admin/").content.decode()
    for link in ("/admin/governance/policydraft/", "/admin/policy/history/", "/admin/policy/test/",
                 "Dry run: a draft’s test report and replay"):
        assert link in html
    assert "/admin/policy/import/" not in html


def test_the_draft_page_and_try_it_read_in_german(provider):
    """Every string these pages show is German when the reader asks for it (issue 27: German complete)."""
    from tests.governance.test_german import english_probes, visible_text

    document = live_policy(provider)
    tasks_with_discount([0.5])
    root = person("root", superuser=True)
    draft = report_mode_draft(editor())
    proposals.submit(draft, draft.author)
    client = client_for(root)
    refused = client.post(f"/admin/governance/policydraft/{draft.pk}/change/", {"publish": "1", "revision": proposals.revision_of(draft)},
                          HTTP_ACCEPT_LANGUAGE="de")
    conflicting = proposals.open_draft_for(root)
    proposals.record_change(conflicting, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    document["term_lists"][0]["forbidden"] = ["Rabatt*", "Gratis"]
    release.apply_release(document, actor="user:root", source="import")
    pages = {
        "refused": refused.content.decode(),
        "conflict": client.get(f"/admin/governance/policydraft/{conflicting.pk}/change/",
                               HTTP_ACCEPT_LANGUAGE="de").content.decode(),
        "list": client.get("/admin/governance/policydraft/", HTTP_ACCEPT_LANGUAGE="de").content.decode(),
        "term list": client.get(f"/admin/termlists/termlist/{TermList.objects.get().pk}/change/",
                                HTTP_ACCEPT_LANGUAGE="de").content.decode(),
        "try": client.post("/admin/governance/policyexample/add/", {
            "name": "x", "configuration": "newsroom", "kind": "completion", "format": "text",
            "text": "Jetzt mit Rabattaktion.", "tool_calls": "[]", "expect_outcome": "allowed",
            "expect_findings-0-check": "", "expect_findings-0-target": "", "expect_findings-0-detail": "",
            "_try": "1"}, HTTP_ACCEPT_LANGUAGE="de").content.decode(),
    }
    assert "Veröffentlichung abgelehnt" in pages["refused"] and "Rückschritt" in pages["refused"]
    assert "1 Konflikt" in pages["conflict"] and "Prüfer: " in pages["conflict"]
    assert "Ergebnis: gestoppt (erwartet: ausgeliefert)." in pages["try"]
    assert "Speichern und veröffentlichen" in pages["term list"]
    probes = english_probes()
    found = [(name, probe) for name, html in pages.items() for probe in probes if probe in visible_text(html)]
    assert found == []


def test_the_page_shows_the_report_the_command_gives(provider):
    """Must show 6, the admin's part: the page renders the very report `policy_draft ID --format json` prints."""
    import json
    from io import StringIO

    from django.core.management import call_command

    live_policy(provider)
    tasks_with_discount([0.5, 3])
    pia = editor()
    draft = report_mode_draft(pia)
    for params, args in (({}, []), ({"window": "hours", "hours": "1"}, ["--replay-hours", "1"]),
                         ({"window": "tasks", "tasks": "2"}, ["--replay", "2"])):
        page = client_for(pia).get(f"/admin/governance/policydraft/{draft.pk}/change/", params)
        out = StringIO()
        call_command("policy_draft", str(draft.pk), "--format", "json", *args, stdout=out)
        assert json.loads(json.dumps(page.context["report"])) == json.loads(out.getvalue())
