"""A caller's `language` narrows, never switches a language-bound list off (issue 41, SPEC §5.1 with §3's
"the caller cannot switch a check off"; docs/termlists.md, "Site and language").

Gavel detects no language: the language of a text is unknown to it whatever the caller states. So a list
bound to `de` has its forbidden terms searched in every text of its configurations; the caller's statement
adds what only a statement can justify -- the list's required terms -- and removes nothing.
"""
import pytest
from rest_framework.test import APIClient

from termlists.models import TermList
from termlists.services import ALL_TERMS, FORBIDDEN_ONLY, scope_of
from tests.protocols.test_conformance import CLEAN

pytestmark = pytest.mark.django_db

STATED = ["en", "xx", "EN-us", "de", "de-AT", ""]


@pytest.fixture
def german_list(configuration):
    term_list = TermList.objects.create(name="German brand words", language="de", forbidden="Kunde",
                                        required="Impressum", message="Sagen Sie Kundin oder Kunde.")
    term_list.configurations.set([configuration])
    return term_list


def screen(api, configuration, text, language):
    body = {"configuration": configuration.identifier, "text": text}
    if language:
        body["language"] = language
    return api.post("/api/v1/screenings", body, format="json").json()


@pytest.mark.parametrize("language", STATED)
def test_a_stated_language_never_switches_the_forbidden_terms_off(api, configuration, german_list, language):
    body = screen(api, configuration, "Dear Kunde, " + CLEAN + " Impressum.", language)
    assert body["outcome"] == "blocked", (language, body)
    assert body["block"]["check"] == "term_list" and "German brand words" in body["block"]["message"]


@pytest.mark.parametrize(("language", "asked"), [("de", True), ("de-AT", True), ("en", False), ("xx", False),
                                                 ("", False)])
def test_the_required_terms_are_asked_only_of_a_text_stated_in_the_lists_language(api, configuration, german_list,
                                                                                  language, asked):
    body = screen(api, configuration, CLEAN, language)  # finished text, no forbidden term, no Impressum
    assert body["outcome"] == ("blocked" if asked else "allowed"), (language, body)
    if asked:
        assert "Impressum" in body["block"]["message"]


@pytest.mark.parametrize("language", ["en", "xx"])
def test_a_gateway_caller_stating_another_language_is_blocked_too(configuration, make_consumer, provider_server,
                                                                 german_list, language):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    provider_server.script([{"text": "Dear Kunde, " + CLEAN}])
    response = client.post("/openai/v1/chat/completions", {
        "model": "newsroom", "messages": [{"role": "user", "content": "Write about the harbour."}],
        "gavel": {"language": language}}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["gavel"]["outcome"] == "blocked" and body["choices"][0]["finish_reason"] == "content_filter"
    assert "Dear Kunde" not in response.content.decode()


class Facts:
    def __init__(self, site="", language=""):
        self.site, self.language = site, language


@pytest.mark.parametrize(("list_language", "call_language", "expected"), [
    ("de", "en", FORBIDDEN_ONLY), ("de", "xx", FORBIDDEN_ONLY), ("de", "den", FORBIDDEN_ONLY),
    ("de-AT", "de", FORBIDDEN_ONLY), ("de", "", FORBIDDEN_ONLY), ("de", "de-AT", ALL_TERMS), ("de", "DE", ALL_TERMS),
])
def test_scope_of_a_language_bound_list_is_never_none(list_language, call_language, expected):
    assert scope_of("", list_language, Facts(language=call_language)) == expected
