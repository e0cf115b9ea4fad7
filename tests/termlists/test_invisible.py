"""No character switches a term off (issue 41): the characters a reader never sees are one table
(termlists/invisible.py), dropped by the matcher's reader's form (SPEC §5.2) and by secret redaction's
normalised text (§9) alike. Plain pytest and hypothesis, no Django: both are pure engines."""
import re
import unicodedata

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.screening import redaction
from governance.screening.redaction import redact
from governance.screening.text import strip_markup
from termlists import invisible
from termlists.matcher import TermMatcher

# The probe's eight (issue 41): each inside a forbidden term left the text `allowed`.
PROBED = {"\u034f": "combining grapheme joiner", "\ufe0f": "variation selector 16", "\ufe00": "variation selector 1",
          "\U000e0100": "variation selector 17", "\u180b": "Mongolian free variation selector",
          "\u17b4": "Khmer inherent vowel", "\u115f": "Hangul choseong filler", "\u3164": "Hangul filler"}
KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
PLANES = [*range(0x0, 0x20000), *range(0xE0000, 0xE1000)]  # where Cf and the default ignorables live


@pytest.mark.parametrize("char", PROBED, ids=PROBED.values())
def test_a_probed_character_inside_a_term_no_longer_hides_it(char):
    matcher = TermMatcher(["Kunde", "Rabatt*"])
    assert matcher.find(f"Dear Ku{char}nde, our Ra{char}battaktion starts.") == ["Kunde", "Rabatt*"]
    assert matcher.find(f"Dear Kunde{char}, hello") == ["Kunde"]  # after the word as well as inside it
    assert TermMatcher([f"Ku{char}nde"]).find("Dear Kunde, hello") == [f"Ku{char}nde"]  # pasted into a list


@pytest.mark.parametrize("char", PROBED, ids=PROBED.values())
def test_a_probed_character_inside_a_key_does_not_hide_it_from_redaction(char):
    text = f"The key is {KEY[:10]}{char}{KEY[10:]} for the archive."
    assert KEY[10:] not in redact(text).text


def test_the_table_is_every_format_character_and_every_default_ignorable():
    """Unicode's own answer to "what is not seen": Cf, and Default_Ignorable_Code_Point (assigned or not)."""
    ignorable = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    wanted = {chr(cp) for cp in PLANES
              if unicodedata.category(chr(cp)) == "Cf" or ignorable.match(chr(cp))}
    assert wanted - invisible.INVISIBLE == set()
    assert invisible.INVISIBLE - wanted == set()
    assert set(PROBED) <= invisible.INVISIBLE
    # Nothing a reader sees as a letter, digit, space or punctuation mark is in it.
    seen = {char for char in invisible.INVISIBLE if unicodedata.category(char)[0] in "NPSZ"}
    assert seen == set()


def test_matcher_and_redaction_read_the_same_table():
    """Redaction's hiders are the table plus what starts a tag or an entity; nothing else, nothing less."""
    hiders = {chr(cp) for cp in PLANES if redaction._MAY_HIDE.match(chr(cp))}
    assert hiders == invisible.INVISIBLE | {"<", "&"}
    assert all(strip_markup(f"a{char}b") == "ab" for char in invisible.INVISIBLE)


WORD = st.text(alphabet=st.characters(categories=("Lu", "Ll")), min_size=2, max_size=8).filter(
    lambda word: word.lower().isalpha() and len(word.lower()) == len(word))


@settings(max_examples=300, deadline=None)
@given(WORD, st.sampled_from(sorted(invisible.INVISIBLE)), st.data())
def test_any_invisible_character_anywhere_in_a_term_leaves_it_found(term, char, data):
    at = data.draw(st.integers(0, len(term)))
    text = f"Look: {term[:at]}{char}{term[at:]} here."
    assert TermMatcher([term]).find(text) == [term]
    assert TermMatcher([term + "*"]).find(text) == [term + "*"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(invisible.INVISIBLE)), st.integers(1, len(KEY) - 1))
def test_any_invisible_character_anywhere_in_a_key_leaves_it_masked(char, at):
    redacted = redact(f"The key is {KEY[:at]}{char}{KEY[at:]} for the archive.")
    assert redacted.findings and max(KEY[:at], KEY[at:], key=len) not in redacted.text


# Every category but the surrogates (no str holds one alone) and the unassigned (Cn: only the
# default-ignorable ones are in the table; others may be assigned visible characters tomorrow).
CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
              "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co")


@settings(max_examples=1500, deadline=None)
@given(st.characters(categories=CATEGORIES))
def test_inside_a_word_a_character_is_dropped_exactly_when_it_is_in_the_table(char):
    """Any other character -- a letter, a visible mark, a space, a symbol -- is not silently dropped."""
    found = TermMatcher(["Kunde"]).find(f"Dear Ku{char}nde, hello")
    assert (found == ["Kunde"]) == (char in invisible.INVISIBLE), (hex(ord(char)), unicodedata.category(char))


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_category_is_decided_by_the_table(category):
    """The property above, over every code point of a category (planes 0, 1 and 14): exhaustive, not sampled."""
    chars = [chr(cp) for cp in PLANES if unicodedata.category(chr(cp)) == category]
    matcher = TermMatcher(["Kunde"])
    wrong = [hex(ord(c)) for c in chars
             if (matcher.find(f"Dear Ku{c}nde, hello") == ["Kunde"]) != (c in invisible.INVISIBLE)]
    assert wrong == []


def test_the_matcher_redaction_and_markup_removal_import_the_one_table():
    # (That it is pure: tests/test_architecture.py lists it among the pure engines.)
    for module in ("termlists/matcher.py", "governance/screening/redaction.py", "governance/screening/text.py"):
        source = open(module, encoding="utf-8").read()
        assert re.search(r"^from termlists(\.invisible| import invisible)", source, re.M), module
