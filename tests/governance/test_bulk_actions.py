"""Bulk actions (issue 11): activate, deactivate and report mode for term lists and snippets, saved one by one
(history names the person) as one policy edit."""
from django.urls import reverse

from governance.models import PolicyVersion
from snippets.models import Snippet
from termlists.models import TermList
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
    assert set(TermList.objects.values_list("mode", flat=True)) == {"report"}
    assert PolicyVersion.current() == version + 1  # one edit, however many records
    assert lists[0].history.latest().history_user == superuser

    run_action(superuser_client, url, "deactivate", [lists[0].pk])
    assert list(TermList.objects.filter(is_active=False).values_list("name", flat=True)) == ["List 0"]


def test_snippets_deactivate_and_activate_in_bulk(superuser_client, db):
    snippets = [Snippet.objects.create(identifier=f"s{i}", name=f"S{i}", body="Be brief.") for i in range(2)]
    url = reverse("admin:snippets_snippet_changelist")
    run_action(superuser_client, url, "deactivate", [s.pk for s in snippets])
    assert not Snippet.objects.filter(is_active=True).exists()
    response = run_action(superuser_client, url, "activate", [snippets[0].pk])
    assert "1 record changed." in response.content.decode()
    assert list(Snippet.objects.filter(is_active=True).values_list("identifier", flat=True)) == ["s0"]
