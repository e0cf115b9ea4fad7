"""A person's language (SPEC §1, issue 11): their profile's, else the browser's Accept-Language; the admin
shows a switch that saves the choice in the profile."""
from django.urls import reverse

from governance.models import UserProfile
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401

INDEX = reverse("admin:index")


def test_without_a_profile_the_browser_decides(superuser_client):
    assert "Gavel-Verwaltung" in superuser_client.get(INDEX, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Gavel administration" in superuser_client.get(INDEX, HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_the_switch_saves_the_profile_language_which_then_wins(superuser_client, superuser):
    page = superuser_client.get(INDEX, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="gavel-language"' in page and '<option value="de">Deutsch</option>' in page
    response = superuser_client.post(reverse("gavel_switch_language"), {"language": "de", "next": INDEX})
    assert response.status_code == 302 and response["Location"] == INDEX
    assert UserProfile.objects.get(user=superuser).language == "de"
    # The browser asks for English; the profile says German.
    german = superuser_client.get(INDEX, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Gavel-Verwaltung" in german
    assert '<option value="de" selected>Deutsch</option>' in german


def test_the_switch_refuses_an_unknown_language_and_a_foreign_next(superuser_client, superuser):
    response = superuser_client.post(reverse("gavel_switch_language"),
                                     {"language": "Deutsch", "next": "https://elsewhere.example/"})
    assert response["Location"] == "/admin/"
    assert UserProfile.objects.get(user=superuser).language == ""
