"""Every field explained (issue 11): labels and help text on the admin pages, choices as words, a language
given as a code, and silent clean-ups said."""
import pytest
from django.urls import reverse

from termlists.models import TermList
from tests.governance.test_admin import desk, gateway, judges, superuser, superuser_client  # noqa: F401
from tests.governance.drafted import PUBLISH


@pytest.mark.parametrize("url_name, texts", [
    ("admin:governance_configuration_add", ["Rule mode", "a shadow mode for trying rules", "Rule default",
                                            "fail closed", "Min confidence", "Context tags", "Rule tags",
                                            "Escalation"]),
    ("admin:governance_provider_add", ["API base", "Key variable", "Price per million input tokens",
                                       "external, worldwide", "local (this machine or network)"]),
    ("admin:snippets_snippet_add", ["Hidden: still added to prompts", "Inactive: used nowhere", "Data class",
                                    "secret-adjacent"]),
    ("admin:termlists_termlist_add", ["Terms are words, not regular expressions", "de or de-DE"]),
])
def test_the_add_pages_explain_their_fields(superuser_client, url_name, texts):
    html = superuser_client.get(reverse(url_name)).content.decode().replace("&#x27;", "'")
    for text in texts:
        assert text in html, text


def test_a_language_name_is_refused_with_the_code_to_give(superuser_client, desk):
    response = superuser_client.post(reverse("admin:termlists_termlist_add"), {
        "name": "Brand words", "forbidden": "Kunde", "required": "", "configurations": [desk.pk], "site": "",
        "language": "Deutsch", "message": "", "mode": "block", "is_active": "on", "_save": "Save"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["language"] == [
        "Give a language code such as de or de-DE, not a language name."]


def test_repeated_terms_are_folded_and_the_message_says_so(superuser_client, desk):
    response = superuser_client.post(reverse("admin:termlists_termlist_add"), {
        "name": "Brand words", "forbidden": "Kunde\nkunde\nRabatt*\nKunde", "required": "",
        "configurations": [desk.pk], "site": "", "language": "de-DE", "message": "", "mode": "block",
        "is_active": "on", "_save": "Save", **PUBLISH}, follow=True)
    assert "Forbidden: 2 repeated term(s) removed; each term is kept once." in response.content.decode()
    assert TermList.objects.get(name="Brand words").forbidden.splitlines() == ["Kunde", "Rabatt*"]
