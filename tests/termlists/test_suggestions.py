"""Suggestions on forbidden terms (`Kunde => Kundin oder Kunde`): the list splits them off before the
matcher, block messages and hints name them, the policy file writes them back, the try box shows them,
and the review page's *apply suggestion* turns a text into one the list lets through.
"""
import pytest
import yaml
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client

from governance.policy import PolicyInvalid, export_policy, export_yaml, import_policy
from governance.review.passages import apply_suggestion, spans_of
from termlists import matcher
from termlists.models import TermList

LINE = "Kunde => Kundin oder Kunde"


# --- pure: the line, the matcher, the replacement ---
def test_a_line_splits_into_term_and_suggestion():
    assert matcher.split_suggestion(LINE) == ("Kunde", "Kundin oder Kunde")
    assert matcher.split_suggestion("a => b => c") == ("a", "b => c")  # the first => splits
    assert matcher.split_suggestion("Rabatt*") == ("Rabatt*", None)
    assert matcher.parse_entries([LINE, "kunde", "Rabatt*"]) == [("Kunde", "Kundin oder Kunde"), ("Rabatt*", None)]
    assert matcher.entry_line("Kunde", "Kundin oder Kunde") == LINE


def test_bad_suggestion_lines_are_refused():
    assert matcher.validate_entry("Kunde =>") == matcher.MSG_EMPTY_SUGGESTION
    assert matcher.validate_entry("* => Kunde") == matcher.MSG_ONLY_STAR_OR_SPACE
    assert matcher.validate_entry(LINE, suggestion_allowed=False) == matcher.MSG_SUGGESTION_NOT_HERE
    assert matcher.validate_entry(LINE) is None


def test_a_term_inside_its_own_suggestion_is_not_a_hit():
    text = "Jede Kundin oder Kunde zahlt; der Kunde auch."
    spans = matcher.matches_outside("Kunde", "Kundin oder Kunde", text)
    assert [text[s:e] for s, e in spans] == ["Kunde"] and spans[0][0] == text.rindex("Kunde")


def test_apply_suggestion_replaces_every_marked_occurrence():
    text = "Der Kunde zahlt. Jeder KUNDE bekommt Post, auch die Kundin oder Kunde von gestern."
    start = text.index("Kunde")
    hint = {"check": "term_list", "type": "forbidden", "list": "Anrede", "terms": ["Kunde"], "passage": "Kunde",
            "start": start, "end": start + 5, "suggestion": {"Kunde": "Kundin oder Kunde"}}
    assert len(spans_of(text, hint)) == 2  # the occurrence inside the suggestion is not marked
    edited, count = apply_suggestion(text, hint, "Kunde")
    assert count == 2
    assert edited == ("Der Kundin oder Kunde zahlt. Jeder Kundin oder Kunde bekommt Post, "
                      "auch die Kundin oder Kunde von gestern.")
    assert matcher.matches_outside("Kunde", "Kundin oder Kunde", edited) == []
    assert apply_suggestion(text, hint, "Rabatt*") == (text, 0)  # a term the hint does not name


# --- the record, the screening ---
@pytest.fixture
def make_list(db, configuration):
    def make(forbidden=LINE, mode="block", **fields):
        term_list = TermList(name="Anrede", forbidden=forbidden, mode=mode, **fields)
        term_list.full_clean(exclude=["configurations"])
        term_list.save()
        term_list.configurations.set([configuration])
        return term_list

    return make


def test_a_saved_list_keeps_the_suggestion_in_one_spelling(make_list):
    term_list = make_list(forbidden="Kunde   =>   Kundin oder Kunde\nkunde => doppelt\nRabatt*")
    assert term_list.forbidden == f"{LINE}\nRabatt*"


def test_a_required_term_may_not_carry_a_suggestion(db):
    with pytest.raises(ValidationError) as caught:
        TermList(name="Pflicht", required="ACME => Acme").full_clean(exclude=["configurations"])
    assert "Only forbidden terms carry a suggestion" in str(caught.value)


def screen(api, text, language="en"):
    response = api.post("/api/v1/screenings", {"text": text, "configuration": "newsroom"}, format="json",
                        HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_block_message_names_the_suggestion_in_english_and_german(api, make_list):
    make_list()
    body = screen(api, "Der Kunde zahlt.")
    assert body["outcome"] == "blocked"
    assert body["block"]["message"] == ("The term list “Anrede” does not allow: Kunde. "
                                        "Instead of “Kunde”, write “Kundin oder Kunde”.")
    german = screen(api, "Der Kunde zahlt.", language="de")
    assert "Statt „Kunde“ schreiben Sie „Kundin oder Kunde“." in german["block"]["message"]


def test_the_hint_carries_the_suggestion_and_the_suggested_text_passes(api, make_list):
    make_list(mode="report")
    body = screen(api, "Der Kunde zahlt.")
    assert body["outcome"] == "allowed_with_hints"
    [hint] = body["hints"]
    assert hint["suggestion"] == {"Kunde": "Kundin oder Kunde"}
    assert hint["terms"] == ["Kunde"] and hint["passage"] == "Kunde"
    assert "Instead of “Kunde”, write “Kundin oder Kunde”." in hint["message"]
    # The text the suggestion makes is what the list asks for.
    assert screen(api, "Der Kundin oder Kunde zahlt.")["outcome"] == "allowed"
    assert screen(api, "Die Kundin oder Kunde zahlt; der Kunde nicht.")["outcome"] == "allowed_with_hints"


def test_a_term_without_suggestion_has_no_suggestion_field(api, make_list):
    make_list(forbidden="Rabatt*", mode="report")
    [hint] = screen(api, "Die Rabattaktion läuft.")["hints"]
    assert "suggestion" not in hint


# --- the policy file ---
def test_the_policy_file_writes_the_suggestion_back_and_round_trips(make_list):
    make_list(forbidden=f"{LINE}\nRabatt*")
    written = export_yaml()
    assert f'forbidden: ["{LINE}", Rabatt*]' in written  # as policy-example.yaml writes it
    document = yaml.safe_load(written)
    [entry] = document["term_lists"]
    assert entry["forbidden"] == [LINE, "Rabatt*"]
    TermList.objects.all().delete()
    import_policy(document)
    assert TermList.objects.get(name="Anrede").forbidden == f"{LINE}\nRabatt*"
    assert export_policy()["term_lists"] == document["term_lists"]


def test_the_policy_import_refuses_a_suggestion_on_a_required_term(configuration):
    document = {"term_lists": [{"name": "Pflicht", "configurations": ["newsroom"], "required": ["ACME => Acme"]}]}
    with pytest.raises(PolicyInvalid) as caught:
        import_policy(document)
    assert "term_lists[0].required[0]" in str(caught.value)


# --- the try box ---
def test_the_try_box_shows_the_suggestion(make_list):
    term_list = make_list()
    admin = User.objects.create_superuser("root", "root@example.org", "pw")
    client = Client()
    client.force_login(admin)
    page = client.post(f"/admin/termlists/termlist/{term_list.pk}/try/", {"text": "Der Kunde zahlt."}).text
    assert "Instead of “Kunde”, write “Kundin oder Kunde”." in page
    assert '<td class="try-suggestion">Kundin oder Kunde</td>' in page
