"""Bulk actions (issue 11): activate, deactivate and report mode for term lists and snippets, saved one by one
(history names the person) as one policy edit."""
from django.urls import reverse

from governance.models import PolicyDraft, PolicyVersion
from snippets.models import Snippet
from termlists.models import TermList
from tests.governance.drafted import draft_record
from tests.governance.test_admin import desk, gateway, judges, superuser, superuser_client  # noqa: F401


def run_action(client, url, action, pks):
    return client.post(url, {"action": action, "_selected_action": pks}, follow=True)


def test_term_lists_switch_to_report_mode_and_back_in_bulk(superuser_client, superuser, desk):
    lists = [TermList.objects.create(name=f"List {i}", forbidden="Kunde") for i in range(3)]
    for term_list in lists:
        term_list.configurations.set([desk])
    TermList.objects.filter(pk=lists[2].pk).update(mode="report")
    version = PolicyVersion.current()

    url = reverse("admin:termlists_termlist_changelist")
    response = run_action(superuser_client, url, "report_mode", [t.pk for t in lists])
    assert "2 records changed; 1 already so." in response.content.decode()
    # Into the person's draft (SPEC §12.5): the live lists and the version stay as they were.
    assert "Saved into your draft" in response.content.decode()
    assert draft_record(superuser, "term_lists", "List 0")["mode"] == "report"
    assert draft_record(superuser, "term_lists", "List 1")["mode"] == "report"
    assert sorted(TermList.objects.values_list("mode", flat=True)) == ["block", "block", "report"]
    assert PolicyVersion.current() == version

    # The next action builds on the draft: List 0 keeps report mode and is switched off too.
    run_action(superuser_client, url, "deactivate", [lists[0].pk])
    record = draft_record(superuser, "term_lists", "List 0")
    assert (record["mode"], record["is_active"]) == ("report", False)
    assert not TermList.objects.filter(is_active=False).exists()


def test_snippets_deactivate_and_activate_in_bulk(superuser_client, superuser, db):
    snippets = [Snippet.objects.create(identifier=f"s{i}", name=f"S{i}", body="Be brief.") for i in range(2)]
    url = reverse("admin:snippets_snippet_changelist")
    run_action(superuser_client, url, "deactivate", [s.pk for s in snippets])
    assert [draft_record(superuser, "snippets", s)["is_active"] for s in ("s0", "s1")] == [False, False]
    response = run_action(superuser_client, url, "activate", [snippets[0].pk])
    assert "1 record changed." in response.content.decode()
    # s0 is back as it is live, so the draft no longer changes it; s1 stays switched off in the draft.
    draft = PolicyDraft.objects.get(author=superuser)
    assert [(c["name"], c["record"]["is_active"]) for c in draft.changes] == [("s1", False)]
    assert Snippet.objects.filter(is_active=True).count() == 2
