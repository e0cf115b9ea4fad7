"""One German term each (issue 29), as the glossary in docs/review.md chooses them: the editorial review is
"Prüfung", a screening "Überprüfung", a block "stoppen"/"gestoppt". These read the catalogue entry by entry,
so a new or edited msgstr that goes back to the old mixed words fails here, naming the entry."""
import re

from tests.governance.test_german import catalogue

# "prüf…" not preceded by "über"/"Über": the review's word (Prüfer and Prüfschritt are their own terms)
REVIEW_WORD = re.compile(r"(?<![Üü]ber)(?<![Üü]ber-)[Pp]rüf(?!er|schritt)")
SCREEN_WORD = re.compile(r"[Üü]berprüf")


def entries() -> list[tuple[str, str]]:
    """(English, German) for every singular and plural form of the catalogue."""
    pairs = []
    for msgid, plural, strs, _fuzzy in catalogue():
        for index, german in enumerate(strs):
            pairs.append((plural if plural and index else msgid, german))
    return pairs


def test_the_catalogue_parses_into_many_entries():
    assert len(entries()) > 1000


def test_a_screening_is_never_called_a_review_in_german():
    wrong = [(english, german) for english, german in entries()
             if re.search(r"\bscreen", english, re.I) and not SCREEN_WORD.search(german)]
    assert wrong == []


def test_a_review_is_never_called_a_screening_in_german():
    reviews = [(english, german) for english, german in entries()
               if re.search(r"\breview", english, re.I) and not re.search(r"\bscreen", english, re.I)]
    assert len(reviews) > 20
    assert [pair for pair in reviews if SCREEN_WORD.search(pair[1])] == []
    assert [pair for pair in reviews if not REVIEW_WORD.search(pair[1]) and "Redaktion" not in pair[1]] == []


def test_prufung_alone_means_only_the_review():
    """Wherever German says "Prüfung", the English says review (never screening or check)."""
    wrong = [(english, german) for english, german in entries()
             if re.search(r"(?<![Üü]ber)Prüfung", german) and not re.search(r"\breview", english, re.I)]
    assert wrong == []


def test_a_block_is_stopped_never_locked():
    """"gesperrt"/"Sperre" is left for a locked sign-in; a block, its mode and its message say "stopp"."""
    locked = [(english, german) for english, german in entries() if re.search(r"[Ss]perr", german)]
    assert locked, "the sign-in lock still says gesperrt"
    assert [pair for pair in locked if not re.search(r"\block", pair[0])] == []
    blocks = [(english, german) for english, german in entries() if re.search(r"\bblock", english, re.I)]
    assert [pair for pair in blocks if re.search(r"[Ss]perr|angehalten", pair[1])] == []
    assert all(english != "block" or german == "stoppen" for english, german in entries())
    assert [german for _english, german in entries() if "angehalten" in german or "Prüfmodell" in german] == []
