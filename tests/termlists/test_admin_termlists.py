"""The term-list admin (SPEC §2.5): filters, one term per line, scope required, bad terms refused
with their line, history, and the "try it" box.
"""
import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from governance.models import Configuration
from termlists.models import TermList
from tests.governance.drafted import PUBLISH, draft_record

CHANGELIST = "/admin/termlists/termlist/"
ADD = "/admin/termlists/termlist/add/"


@pytest.fixture
def admin_client(db):
    user = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def term_list(db, configuration):
    term_list = TermList.objects.create(name="Brand", forbidden="Kunde\nRabatt*", required="Impressum",
                                        message="Say client.")
    term_list.configurations.set([configuration])
    return term_list


def form_data(configuration, **fields):
    data = {"name": "Style", "forbidden": "", "required": "", "configurations": [configuration.pk], "site": "",
            "language": "", "message": "", "mode": "block", "is_active": "on"}
    data.update(fields)
    return data


def test_the_list_page_filters_by_configuration_mode_and_active(admin_client, term_list, configuration, provider):
    other = Configuration.objects.create(identifier="shop", provider=provider, model="m")
    shadow = TermList.objects.create(name="Shadow", forbidden="x", mode="report", is_active=False)
    shadow.configurations.set([other])
    page = admin_client.get(CHANGELIST)
    assert page.status_code == 200
    assert "Brand" in page.text and "Shadow" in page.text
    by_configuration = admin_client.get(CHANGELIST, {"configurations__id__exact": other.pk}).text
    assert "Shadow" in by_configuration and "Brand" not in by_configuration
    by_mode = admin_client.get(CHANGELIST, {"mode__exact": "block"}).text
    assert "Brand" in by_mode and "Shadow" not in by_mode
    inactive = admin_client.get(CHANGELIST, {"is_active__exact": "0"}).text
    assert "Shadow" in inactive and "Brand" not in inactive


def test_the_list_page_searches_terms(admin_client, term_list):
    assert "Brand" in admin_client.get(CHANGELIST, {"q": "Rabatt"}).text
    assert "Brand" not in admin_client.get(CHANGELIST, {"q": "Preis"}).text


def test_a_list_is_saved_one_term_per_line(admin_client, configuration):
    response = admin_client.post(ADD, form_data(configuration, forbidden="  Kunde \n\nkunde\nRabatt*\n",
                                                required="Impressum\r\nDatenschutz", **PUBLISH))
    assert response.status_code == 302, response.context["adminform"].form.errors
    saved = TermList.objects.get(name="Style")
    assert saved.forbidden == "Kunde\nRabatt*"  # white space and a case duplicate dropped
    assert saved.required == "Impressum\nDatenschutz"
    assert list(saved.configurations.all()) == [configuration]


def test_the_change_page_has_one_textarea_per_term_field(admin_client, term_list):
    page = admin_client.get(f"{CHANGELIST}{term_list.pk}/change/").text
    assert '<textarea name="forbidden"' in page
    assert '<textarea name="required"' in page


def test_a_list_without_scope_is_refused(admin_client, configuration):
    response = admin_client.post(ADD, form_data(configuration, forbidden="Kunde", configurations=[]))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert errors["configurations"] == [
        "Name at least one configuration: a term list without one would apply to no call."
    ]
    assert not TermList.objects.filter(name="Style").exists()


def test_removing_every_configuration_is_refused(admin_client, term_list, configuration):
    data = form_data(configuration, name="Brand", forbidden="Kunde", configurations=[])
    response = admin_client.post(f"{CHANGELIST}{term_list.pk}/change/", data)
    assert "configurations" in response.context["adminform"].form.errors
    assert list(term_list.configurations.all()) == [configuration]


@pytest.mark.parametrize(
    ("field", "lines", "message"),
    [
        ("forbidden", "Kunde\n\nKun*de", "line 3: '*' is only allowed at the end of a term."),
        ("forbidden", "*", "line 1: A term must hold more than '*' and white space."),
        ("required", "Impressum\n  **  ", "line 2: A term must hold more than '*' and white space."),
        ("required", "*Rabatt", "line 1: '*' is only allowed at the end of a term."),
    ],
)
def test_a_bad_term_is_refused_naming_its_line(admin_client, configuration, field, lines, message):
    response = admin_client.post(ADD, form_data(configuration, **{field: lines}))
    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field] == [message]
    assert not TermList.objects.filter(name="Style").exists()


def test_a_bad_term_is_refused_in_german(admin_client, configuration):
    response = admin_client.post(ADD, form_data(configuration, forbidden="Kun*de"), HTTP_ACCEPT_LANGUAGE="de")
    errors = response.context["adminform"].form.errors
    assert errors["forbidden"] == ["Zeile 1: „*“ ist nur am Ende eines Begriffs erlaubt."]


def test_history_is_kept(admin_client, term_list, configuration):
    data = form_data(configuration, name="Brand", forbidden="Kunde\nPreis", **PUBLISH)
    assert admin_client.post(f"{CHANGELIST}{term_list.pk}/change/", data).status_code == 302
    latest = term_list.history.first()
    assert latest.forbidden == "Kunde\nPreis"
    assert latest.history_user.username == "root"
    assert "Kunde\nRabatt*" in {h.forbidden for h in term_list.history.all()}
    assert admin_client.get(f"{CHANGELIST}{term_list.pk}/history/").status_code == 200


# --- the "try it" box ---
def test_the_change_page_offers_the_try_box(admin_client, term_list):
    page = admin_client.get(f"{CHANGELIST}{term_list.pk}/change/").text
    assert f'action="{CHANGELIST}{term_list.pk}/try/"' in page
    assert 'name="csrfmiddlewaretoken"' in page.split('id="try-it"')[1]


def test_the_add_page_has_no_try_box(admin_client, db):
    assert 'id="try-it"' not in admin_client.get(ADD).text


def test_the_try_box_shows_what_the_saved_list_finds(admin_client, term_list):
    text = "Der <b>KUNDE</b> nutzt die Rabattaktion."
    page = admin_client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": text})
    assert page.status_code == 200
    result = page.context["result"]
    assert [hit["term"] for hit in result["forbidden"]] == ["Kunde", "Rabatt*"]
    assert [hit["passage"] for hit in result["forbidden"]] == ["KUNDE", "Rabattaktion"]
    assert result["required_missing"] == ["Impressum"]
    assert result["finished"] is False
    html = page.text
    assert "Forbidden terms found: Kunde, Rabatt*." in html
    assert "Required terms missing: Impressum." in html
    assert "This text has 5 words; required terms are only demanded from finished text (at least 30 words)." in html
    assert "<mark>Rabattaktion</mark>" in html
    assert "&lt;b&gt;KUNDE&lt;/b&gt;" in html  # the pasted text comes back escaped, in the box


def test_the_try_box_with_a_clean_text(admin_client, term_list):
    page = admin_client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": "Im Kundenkonto steht das Impressum."})
    assert "No forbidden term occurs in this text." in page.text
    assert page.context["result"]["required_present"] == ["Impressum"]


def test_the_try_box_runs_the_saved_version(admin_client, term_list):
    term_list.forbidden = "Preis"
    term_list.save()
    page = admin_client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": "Kunde und Preis"})
    assert [hit["term"] for hit in page.context["result"]["forbidden"]] == ["Preis"]


def test_the_try_box_is_csrf_protected(term_list):
    user = User.objects.create_superuser("root2", "r@example.com", "pw-root-123")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": "Kunde"}).status_code == 403
    page = client.get(f"{CHANGELIST}{term_list.pk}/try/")
    token = page.cookies["csrftoken"].value if "csrftoken" in page.cookies else client.cookies["csrftoken"].value
    response = client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": "Kunde", "csrfmiddlewaretoken": token})
    assert response.status_code == 200
    assert [hit["term"] for hit in response.context["result"]["forbidden"]] == ["Kunde"]


def test_the_try_box_needs_permission_to_see_the_list(term_list):
    staff = User.objects.create_user("editor", password="pw-editor-123", is_staff=True)
    client = Client()
    client.force_login(staff)
    assert client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": "Kunde"}).status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_termlist"))
    assert client.post(f"{CHANGELIST}{term_list.pk}/try/", {"text": "Kunde"}).status_code == 200


def test_the_try_box_for_an_unknown_list_redirects(admin_client, db):
    assert admin_client.get(f"{CHANGELIST}999999/try/").status_code == 302


def test_a_policy_editor_with_model_permissions_edits_lists(configuration):
    staff = User.objects.create_user("policy", password="pw-policy-123", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__in=["add_termlist", "change_termlist",
                                                                       "view_termlist"]))
    client = Client()
    client.force_login(staff)
    assert client.post(ADD, form_data(configuration, forbidden="Kunde")).status_code == 302
    # Into the editor's draft (SPEC §12.5), not live.
    assert draft_record(staff, "term_lists", "Style")["forbidden"] == ["Kunde"]
    assert not TermList.objects.filter(name="Style").exists()
