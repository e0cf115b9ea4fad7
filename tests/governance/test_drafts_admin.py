"""Admin saves of policy records land in the person's open draft (SPEC §12.5, issue 27): the live policy and its
version do not change; lists and forms show which drafts change a record; approvers may save and publish."""
import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.test import Client, override_settings

from governance.models import GovernanceEvent, PolicyDraft, PolicyRevision, PolicyVersion
from snippets.models import PatternRule
from termlists.models import TermList
from tests.drafts.helpers import live_policy, person

pytestmark = pytest.mark.django_db

EDITOR_MODELS = ("termlist", "patternrule", "snippet", "policyexample", "policydraft", "configuration")


def editor():
    user = person("pia")
    user.user_permissions.add(*Permission.objects.filter(
        codename__in=[f"{a}_{m}" for m in EDITOR_MODELS for a in ("add", "change", "view")]))
    return user


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def term_list_form(term_list: TermList, **changes) -> dict:
    data = {"name": term_list.name, "forbidden": term_list.forbidden, "required": term_list.required,
            "configurations": [c.pk for c in term_list.configurations.all()], "site": term_list.site or "",
            "language": term_list.language or "", "message": term_list.message or "", "mode": term_list.mode,
            "is_active": "on" if term_list.is_active else ""}
    data.update(changes)
    return data


def test_an_editors_change_lands_in_a_draft_and_the_live_policy_stays(provider):
    live_policy(provider)
    pia = editor()
    brand = TermList.objects.get(name="Brand words")
    version, revisions, history = PolicyVersion.current(), PolicyRevision.objects.count(), brand.history.count()
    client = client_for(pia)
    url = f"/admin/termlists/termlist/{brand.pk}/change/"
    response = client.post(url, term_list_form(brand, mode="report"), follow=True)
    assert response.status_code == 200
    draft = PolicyDraft.objects.get(author=pia)
    html = response.content.decode()
    assert "Saved into your draft" in html and f"/admin/governance/policydraft/{draft.pk}/change/" in html
    assert "was changed successfully" not in html
    # Live: the same list, the same version, no revision, no history row, no admin log entry.
    brand.refresh_from_db()
    assert brand.mode == "block" and PolicyVersion.current() == version
    assert PolicyRevision.objects.count() == revisions and brand.history.count() == history
    assert not LogEntry.objects.exists()
    [change] = draft.changes
    assert (change["section"], change["name"], change["action"]) == ("term_lists", "Brand words", "change")
    assert change["record"]["mode"] == "report" and change["base"]["mode"] == "block"
    # The list and the form say a draft changes the record; the author's form shows the draft's values.
    listing = client.get("/admin/termlists/termlist/").content.decode()
    assert f'<a href="/admin/governance/policydraft/{draft.pk}/change/">' in listing
    form = client.get(url).content.decode()
    assert "Your open draft changes this record" in form
    assert '<option value="report" selected>' in form
    # A second save builds on the draft: the report mode stays, the new term joins it.
    client.post(url, term_list_form(brand, mode="report", forbidden="Rabatt*\nSkonto"))
    draft.refresh_from_db()
    assert draft.changes[0]["record"]["mode"] == "report"
    assert draft.changes[0]["record"]["forbidden"] == ["Rabatt*", "Skonto"]
    assert TermList.objects.get(pk=brand.pk).forbidden == "Rabatt*"
    # Someone else sees that a draft changes it, and the live record.
    other = client_for(person("root", superuser=True)).get(url).content.decode()
    assert "An open draft changes this record" in other and '<option value="block" selected>' in other


def test_adding_and_deleting_records_and_bulk_actions_are_drafted_too(provider):
    live_policy(provider)
    pia = editor()
    pia.user_permissions.add(*Permission.objects.filter(codename__in=["delete_patternrule"]))
    client = client_for(pia)
    version = PolicyVersion.current()
    brand = TermList.objects.get()
    added = client.post("/admin/termlists/termlist/add/", term_list_form(brand, name="Extra words", forbidden="Gratis"))
    assert added.status_code == 302 and added["Location"] == "/admin/termlists/termlist/"
    rule = PatternRule.objects.get()
    deleted = client.post(f"/admin/snippets/patternrule/{rule.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 302
    client.post("/admin/termlists/termlist/", {"action": "deactivate", "_selected_action": [brand.pk]})
    draft = PolicyDraft.objects.get(author=pia)
    assert sorted((c["section"], c["name"], c["action"]) for c in draft.changes) == [
        ("pattern_rules", "legal.no-guarantee", "remove"), ("term_lists", "Brand words", "change"),
        ("term_lists", "Extra words", "add")]
    assert next(c for c in draft.changes if c["name"] == "Brand words")["record"]["is_active"] is False
    assert TermList.objects.count() == 1 and TermList.objects.get().is_active and PatternRule.objects.exists()
    assert PolicyVersion.current() == version


def test_a_form_with_errors_saves_nothing_into_a_draft(provider):
    live_policy(provider)
    pia = editor()
    brand = TermList.objects.get()
    page = client_for(pia).post(f"/admin/termlists/termlist/{brand.pk}/change/",
                                term_list_form(brand, configurations=[]))
    assert page.status_code == 200 and "errornote" in page.content.decode()
    assert not PolicyDraft.objects.filter(author=pia).exclude(changes=[]).exists()


def test_an_approver_saves_and_publishes_through_the_gate(provider):
    live_policy(provider)
    root = person("root", superuser=True)
    client = client_for(root)
    brand = TermList.objects.get()
    url = f"/admin/termlists/termlist/{brand.pk}/change/"
    assert 'name="_gavel_publish"' in client.get(url).content.decode()
    assert 'name="_gavel_publish"' not in client_for(editor()).get(url).content.decode()
    version = PolicyVersion.current()
    # "harbour" stops the passing example plain-news-allowed: refused, the draft's page names it.
    refused = client.post(url, term_list_form(brand, forbidden="Rabatt*\nharbour", _gavel_publish="1"), follow=True)
    draft = PolicyDraft.objects.get(author=root)
    assert refused.redirect_chain[-1][0] == f"/admin/governance/policydraft/{draft.pk}/change/?refused=1"
    # The draft's page names the regression and offers the approver to accept it.
    assert 'id="draft-refused"' in refused.content.decode() and "plain-news-allowed" in refused.content.decode()
    assert PolicyVersion.current() == version and TermList.objects.get().forbidden == "Rabatt*"
    assert draft.status == "open" and draft.changes
    # A harmless change publishes at once.
    client.post(url, term_list_form(brand, forbidden="Rabatt*\nSkonto", _gavel_publish="1"))
    draft.refresh_from_db()
    assert draft.status == "published" and draft.approver_label == "user:root"
    assert TermList.objects.get().forbidden == "Rabatt*\nSkonto" and PolicyVersion.current() > version
    assert GovernanceEvent.objects.filter(decision="draft_published").count() == 1


@override_settings(GAVEL_POLICY_FOUR_EYES=True)
def test_with_four_eyes_no_save_and_publish_button(provider):
    live_policy(provider)
    root = person("root", superuser=True)
    brand = TermList.objects.get()
    html = client_for(root).get(f"/admin/termlists/termlist/{brand.pk}/change/").content.decode()
    assert 'name="_gavel_publish"' not in html and "Saving puts this change into your open draft" in html


def test_an_admin_only_field_is_still_refused_for_an_editor(provider):
    live_policy(provider)
    from governance.models import Configuration
    from tests.governance.test_admin import configuration_form

    pia = editor()
    newsroom = Configuration.objects.get(identifier="newsroom")
    response = client_for(pia).post(f"/admin/governance/configuration/{newsroom.pk}/change/",
                                    configuration_form(newsroom, rule_mode="block"))
    assert response.status_code == 403
    assert not PolicyDraft.objects.filter(author=pia).exclude(changes=[]).exists()


def test_a_confirmed_bulk_delete_is_drafted_and_says_so(provider):
    live_policy(provider)
    root = person("root", superuser=True)
    rule = PatternRule.objects.get()
    page = client_for(root).post("/admin/snippets/patternrule/", {
        "action": "delete_selected", "_selected_action": [rule.pk], "post": "yes"}, follow=True).content.decode()
    assert "Saved into your draft" in page and "Successfully deleted" not in page
    draft = PolicyDraft.objects.get(author=root)
    assert [(c["section"], c["action"]) for c in draft.changes] == [("pattern_rules", "remove")]
    assert PatternRule.objects.filter(pk=rule.pk).exists()
