"""Tests for the term matcher against SPEC §5.2, sentence by sentence, plus a slow reference model.
Plain pytest, no Django: the matcher is a pure module.
"""

import html
import pickle
import time
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from termlists.matcher import (
    MSG_ONLY_STAR_OR_SPACE,
    MSG_STAR_NOT_AT_END,
    TermMatcher,
    TermMatcherError,
    TermMatchers,
    first_match,
    parse_terms,
    prepare,
    together,
    validate_term,
)
from termlists.matcher import _collapse_ws  # its two paths are tested directly

ZWSP = "\u200b"
SHY = "\u00ad"


# --- the contract, one row per claim: (terms, text, expected) ---------------------------------

CASES = {
    # Case is ignored ...
    "case: upper text": (["Kunde"], "KUNDE zahlt", ["Kunde"]),
    "case: lower term": (["kunde"], "Der Kunde", ["kunde"]),
    "case: near-miss other word": (["Kunde"], "KUNDIN", []),
    # ... ß and ss remain different letters (lower-casing, not case-folding).
    "sharp s: ß term, ss text": (["Straße"], "Strasse", []),
    "sharp s: ss term, ß text": (["Strasse"], "Straße", []),
    "sharp s: ß term, upper SS text": (["Straße"], "STRASSE", []),
    "sharp s: capital ẞ lowers to ß": (["Straße"], "STRAẞE", ["Straße"]),
    "sharp s: SS term, ss text": (["STRASSE"], "strasse", ["STRASSE"]),
    # A term matches whole words: not next to a letter, digit or _.
    "word: Kunde in Kundenkonto": (["Kunde"], "Ihr Kundenkonto", []),
    "word: Kunde at end of compound": (["Kunde"], "Stammkunde", []),
    "word: punctuation around": (["Kunde"], "(Kunde), bitte", ["Kunde"]),
    "word: hyphen is a boundary": (["Kunde"], "Kunde-Konto", ["Kunde"]),
    "word: underscore after": (["Kunde"], "Kunde_id", []),
    "word: underscore before": (["Kunde"], "_Kunde", []),
    "word: digit after": (["Kunde"], "Kunde1", []),
    "word: digit before": (["Kunde"], "1Kunde", []),
    "word: digits term": (["2024"], "im Jahr 2024.", ["2024"]),
    "word: digits term inside number": (["2024"], "120245", []),
    "word: non-ASCII letter after": (["Kunde"], "Kundeé", []),
    "word: combining mark after": (["cafe"], "cafe\u0301", []),
    "word: term with punctuation": (["C++"], "C++ ist alt", ["C++"]),
    "word: term with punctuation, letter after": (["C++"], "C++x", []),
    # A space inside a term matches any run of white space (newlines included).
    "space: newline and tab run": (["Guten Tag"], "Guten\n\t  Tag", ["Guten Tag"]),
    "space: no-break space": (["Guten Tag"], "Guten\u00a0Tag", ["Guten Tag"]),
    "space: term with double space": (["Guten  Tag"], "Guten Tag", ["Guten  Tag"]),
    "space: near-miss without space": (["Guten Tag"], "GutenTag", []),
    "space: near-miss hyphen": (["Guten Tag"], "Guten-Tag", []),
    "space: white space before trailing star": (["Guten *"], "Guten\n\nMorgen", ["Guten *"]),
    "space: white space before star needs white space": (["Guten *"], "Guten.", []),
    "space: white space before star, no white space": (["Guten *"], "GutenMorgen", []),
    "space: white space before star, empty run": (["Guten *"], "Guten \n.", ["Guten *"]),
    # No stemming, no inflection.
    "stem: Rabatt not Rabatte": (["Rabatt"], "viele Rabatte", []),
    "stem: Rabatt exact": (["Rabatt"], "ein Rabatt.", ["Rabatt"]),
    # A trailing * stands for any run of letters and digits (possibly empty).
    "star: empty run": (["Rabatt*"], "ein Rabatt.", ["Rabatt*"]),
    "star: Rabatte": (["Rabatt*"], "viele Rabatte", ["Rabatt*"]),
    "star: Rabattaktion": (["Rabatt*"], "die Rabattaktion!", ["Rabatt*"]),
    "star: digits": (["Rabatt*"], "Rabatt2024", ["Rabatt*"]),
    "star: not underscore": (["Rabatt*"], "Rabatt_x", []),
    "star: left boundary still applies": (["Rabatt*"], "Sonderrabatt", []),
    "star: prefix must be complete": (["Rabatt*"], "Rabat", []),
    "star: run stops at hyphen": (["Rabatt*"], "Rabattaktion-Ende", ["Rabatt*"]),
    "star: run takes marks": (["Cafe*"], "Cafe\u0301s", ["Cafe*"]),
    "star: plain and starred twin": (["Rabatt", "Rabatt*"], "Rabatte", ["Rabatt*"]),
    # Markup does not hide a term: tags removed without a trace ...
    "markup: Kun<b>de</b>": (["Kunde"], "Kun<b>de</b>", ["Kunde"]),
    "markup: closing and comment tags": (["Kunde"], "Ku<!-- x -->n</i>de", ["Kunde"]),
    "markup: tag across lines": (["Kunde"], 'Kun<span\nclass="x">de', ["Kunde"]),
    "markup: near-miss Kunden": (["Kunde"], "Kun<b>den</b>", []),
    # ... words that tags separate are still found in the as-delivered form ...
    "markup: words separated by a tag": (["Kunde", "Rabatt"], "Kunde<br>Rabatt", ["Kunde", "Rabatt"]),
    "markup: term across tag and space": (["Kunde Rabatt"], "<p>Kunde</p> <p>Rabatt</p>", ["Kunde Rabatt"]),
    "markup: spaces either side of a tag": (["Kunde Rabatt"], "Kunde <br> Rabatt", ["Kunde Rabatt"]),
    "markup: spaces either side of tags, near-miss": (["Kunde Rabatt"], "Kunde <br> - <br> Rabatt", []),
    "markup: less-than before a digit is no tag": (["a b"], "a <3 > b", []),
    "markup: less-than before a space is no tag": (["a b"], "a < b > b", []),
    "markup: unclosed tag is text": (["Kunde"], "Kun<de", []),
    # ... HTML entities decoded ...
    "entity: soft hyphen": (["Kunde"], "Kun&shy;de", ["Kunde"]),
    "entity: decimal": (["Kunde"], "&#75;unde", ["Kunde"]),
    "entity: hex": (["Kunde"], "&#x4B;unde", ["Kunde"]),
    "entity: nbsp is white space": (["Guten Tag"], "Guten&nbsp;Tag", ["Guten Tag"]),
    "entity: newline next to a space": (["Guten Tag"], "Guten&#10; Tag", ["Guten Tag"]),
    "entity: amp inside a term": (["AT&T"], "bei AT&amp;T", ["AT&T"]),
    "entity: near-miss Kunden": (["Kunde"], "&#75;unden", []),
    "entity: escaped tag stays text": (["Kunde"], "Kun&lt;b&gt;de", []),
    # ... and invisible format characters (Cf) dropped.
    "format: zero-width space": (["Kunde"], f"Kun{ZWSP}de", ["Kunde"]),
    "format: soft hyphen": (["Kunde"], f"Kun{SHY}de", ["Kunde"]),
    "format: word joiner in upper case": (["Kunde"], "KUN\u2060DE", ["Kunde"]),
    "format: near-miss Kunden": (["Kunde"], f"Kun{ZWSP}den", []),
    "format: spaces either side": (["Guten Tag"], f"Guten {ZWSP} Tag", ["Guten Tag"]),
    "format: format char in the term is ignored": ([f"Kun{SHY}de"], "Kunde", [f"Kun{SHY}de"]),
    # Synonyms, misspellings and paraphrases are not found.
    "no synonyms": (["Kunde"], "Der Klient zahlt", []),
    "no misspellings": (["Kunde"], "Der Kunnde zahlt", []),
    # Empty lines and surrounding white space in a list are ignored.
    "list: empty lines and padding": (["", "  Kunde  ", "\t", "Rabatt"], "Kunde Rabatt", ["Kunde", "Rabatt"]),
    # Terms that differ only in case count once, reported in their first spelling.
    "list: first spelling wins": (["kunde", "KUNDE", "Kunde"], "KuNdE", ["kunde"]),
    "list: list order, not text order": (["Rabatt", "Kunde"], "Kunde vor Rabatt", ["Rabatt", "Kunde"]),
    "list: each once": (["Kunde"], "Kunde, Kunde, KUNDE", ["Kunde"]),
    # Greek and dotted I: lower-casing stays consistent.
    "greek: final sigma in any position": (["ΟΔΟΣ*"], "οδοσηγος", ["ΟΔΟΣ*"]),
    "greek: upper text lower term": (["οδος"], "ΟΔΟΣ", ["οδος"]),
    "dotted I: same lower-casing": (["İstanbul"], "i\u0307stanbul", ["İstanbul"]),
    "dotted I: is not a plain i": (["istanbul"], "İstanbul", []),
    "dotted I: no partial hit": (["i"], "İ", []),
    "dotted I: a star takes the dot": (["i*"], "İ", ["i*"]),
    "empty text": (["Kunde"], "", []),
    "empty list": ([], "Kunde", []),
}


@pytest.mark.parametrize(("terms", "text", "expected"), CASES.values(), ids=CASES.keys())
def test_contract(terms, text, expected):
    assert TermMatcher(terms).find(text) == expected


def test_list_text_is_split_into_lines():
    # A bare string is the list's text, never an iterable of one-character terms.
    assert TermMatcher("Kunde\n\n  Rabatt*  \r\nkunde\n").terms == ("Kunde", "Rabatt*")


def test_accepts_a_generator_and_reports_list_spelling():
    matcher = TermMatcher(term for term in ["  Kunde ", "Rabatt*"])
    assert matcher.find("RABATTE für den KUNDEN und die kunde") == ["Kunde", "Rabatt*"]


def test_same_key_different_inner_space_counts_once():
    assert TermMatcher(["Guten Tag", "guten   TAG"]).terms == ("Guten Tag",)


def test_matcher_is_reusable_and_picklable():
    matcher = TermMatcher(["Kunde", "Rabatt*"])
    assert matcher.find("Kunde") == ["Kunde"]
    assert matcher.find("Rabatte") == ["Rabatt*"]
    clone = pickle.loads(pickle.dumps(matcher))
    assert clone.find("Kunde und Rabatte") == ["Kunde", "Rabatt*"]


def test_many_terms_and_lone_surrogate():
    terms = [f"wort{n}" for n in range(2000)] + ["Kunde"]
    assert TermMatcher(terms).find("\ud800 wort1999 Kunde wort20x") == ["wort1999", "Kunde"]


def test_unclosed_tags_stay_linear():
    text = "<a" * 50_000 + " Kunde"
    started = time.perf_counter()
    assert TermMatcher(["Kunde"]).find(text) == ["Kunde"]
    assert time.perf_counter() - started < 1.0


# --- validate_term / parse_terms / TermMatcherError -----------------------------------------

@pytest.mark.parametrize(
    ("term", "message"),
    [
        ("Kunde", None),
        ("Rabatt*", None),
        ("  Rabatt*  ", None),
        ("Guten Tag", None),
        ("Guten *", None),
        ("C++", None),
        ("*", MSG_ONLY_STAR_OR_SPACE),
        ("**", MSG_ONLY_STAR_OR_SPACE),
        (" * * ", MSG_ONLY_STAR_OR_SPACE),
        ("", MSG_ONLY_STAR_OR_SPACE),
        (" \t ", MSG_ONLY_STAR_OR_SPACE),
        (f"{ZWSP}*", MSG_ONLY_STAR_OR_SPACE),
        ("*Kunde", MSG_STAR_NOT_AT_END),
        ("Ku*nde", MSG_STAR_NOT_AT_END),
        ("Kunde**", MSG_STAR_NOT_AT_END),
        ("Kunde* Rabatt", MSG_STAR_NOT_AT_END),
    ],
)
def test_validate_term(term, message):
    assert validate_term(term) == message


def test_invalid_terms_raise_with_every_offender():
    with pytest.raises(TermMatcherError) as excinfo:
        TermMatcher(["Kunde", "Ku*nde", "*", "Rabatt*"])
    assert excinfo.value.errors == [("Ku*nde", MSG_STAR_NOT_AT_END), ("*", MSG_ONLY_STAR_OR_SPACE)]
    assert "Ku*nde" in str(excinfo.value)


def test_parse_terms():
    text = "  Kunde \n\nkunde\n\tRabatt*\nKUNDE\n \u200b \nStraße\nStrasse\nGuten  Tag\nguten tag\n"
    assert parse_terms(text) == ["Kunde", "Rabatt*", "Straße", "Strasse", "Guten  Tag"]
    assert parse_terms(["Kunde\nRabatt", "kunde", "", "Ku*nde"]) == ["Kunde", "Rabatt", "Ku*nde"]
    assert parse_terms("") == []


# --- property: the matcher agrees with a slow, obviously correct reference -------------------

def ref_is_word(ch):
    return ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")


def ref_is_star_char(ch):
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def ref_lower(ch):
    # One character at a time, so Greek final sigma can only come from a written ς.
    lowered = ch.lower()
    return "σ" if lowered == "ς" else lowered


def ref_without_format_chars(text):
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def ref_strip_tags(text):
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch == "<" and (nxt in "/!?" and nxt or ("a" <= nxt.lower() <= "z" and nxt.isascii())):
            close = text.find(">", i + 1)
            if close != -1:
                i = close + 1
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def ref_reader_form(text):
    return ref_without_format_chars(html.unescape(ref_strip_tags(text)))


WS = object()


def ref_compile(term):
    """(pieces, star): pieces alternate runs of lowered term characters and WS markers."""
    visible = ref_without_format_chars(term.strip()).strip()
    star = visible.endswith("*")
    body = visible[:-1] if star else visible
    pieces = []
    for ch in body:
        if ch.isspace():
            if not pieces or pieces[-1] is not WS:
                pieces.append(WS)
        elif pieces and pieces[-1] is not WS:
            pieces[-1] += ref_lower(ch)
        else:
            pieces.append(ref_lower(ch))
    return pieces, star


def ref_consume(text, pos, pieces):
    """Where a match of pieces starting at pos ends, or None; checked one character at a time."""
    for piece in pieces:
        if piece is WS:
            if pos >= len(text) or not text[pos].isspace():
                return None
            while pos < len(text) and text[pos].isspace():
                pos += 1
            continue
        for ch in piece:
            if pos >= len(text) or text[pos] != ch:
                return None
            pos += 1
    return pos


def ref_occurs(pieces, star, text):
    return ref_first_span(pieces, star, text) is not None


def ref_first_span(pieces, star, text):
    """(start, end) of the first match in `text`, as offsets into `text`, or None."""
    # The contract compares lower-cased text; lowering never changes whether a character is a word
    # character or white space, so the boundary rules read the same on the lowered text.
    lowered = [ref_lower(ch) for ch in text]
    origin = [index for index, low in enumerate(lowered) for _ in low] + [len(text)]
    text = "".join(lowered)
    for start in range(len(text) + 1):
        if start > 0 and ref_is_word(text[start - 1]):
            continue
        end = ref_consume(text, start, pieces)
        if end is None:
            continue
        # Without a star the match ends here; with one, try every possible run length.
        last = len(text) if star else end
        for stop in range(end, last + 1):
            if all(ref_is_star_char(ch) for ch in text[end:stop]) and (
                stop == len(text) or not ref_is_word(text[stop])
            ):
                return origin[start], origin[stop]
    return None


def reference_find(terms, text):
    found, seen = [], set()
    forms = (text, ref_reader_form(text))
    for term in terms:
        pieces, star = ref_compile(term)
        identity = (tuple("\0" if p is WS else p for p in pieces), star)
        if not pieces or identity in seen:
            continue
        seen.add(identity)
        if any(ref_occurs(pieces, star, form) for form in forms):
            found.append(term.strip())
    return found


def ref_is_valid(term):
    visible = ref_without_format_chars(term).strip()
    if not visible.replace("*", "").strip():
        return False
    return "*" not in visible[:-1]


# Two kinds of text: free noise over a wide alphabet, and words between separators, where words
# are the spans a term is likely to hit (whole or cut, with markup or invisible characters inside).
NOISE_ATOMS = list(
    "abkKuUndeEsSßẞİiIΣσς\u0307\u0301 _190-.#!/<>&;\n\r\t\u00a0\u200b\u00ad\u2060"
) + ["<b>", "</b>", "<br/>", "<!-- x -->", "&shy;", "&amp;", "&#75;", "&#x4b;", "&lt;", "&nbsp;", "&#8203;"]
WORD_CHARS = "abKßsSΣσςİi1\u0301"
# Markup or an invisible character inside a word, and what a reader sees in its place.
INSIDE_WORD = {
    "<b>": "", "</b>": "", "&shy;": "", "&#75;": "K", "\u200b": "", "\u00ad": "",
    "&lt;": "<", "< >": "< >", "_": "_",
}
# Between words; underscores, plain spaces and a non-tag '< >' are the near misses that matter
# most, so they are drawn more often.  The last four leave white space that needs collapsing again.
SEPARATORS = [
    " ", " ", " ", "  ", "\n", " \n\t", "\u00a0", "_", "_", "_", "-", ".", ">", "<", "< ", "< >", "<3",
    "&", ";", "<b>", "</b>", "<br/>", "<!--x-->", "&shy;", "&amp;", "\u200b", "\u00ad", "&lt;b&gt;",
    "&nbsp;", " &#10;", " <br> ", " \u200b ",
]
TERM_CHARS = "abkKdeEsSßẞİiΣσς\u0307 _1-.&;<>\u200b"

# A word as delivered (maybe with markup or an invisible character inside) and as a reader sees it.
words = st.tuples(
    st.text(WORD_CHARS, min_size=1, max_size=3),
    st.sampled_from([""] * 4 + list(INSIDE_WORD)),
    st.text(WORD_CHARS, max_size=3),
).map(lambda parts: (parts[0] + parts[1] + parts[2], parts[0] + INSIDE_WORD.get(parts[1], "") + parts[2]))


@st.composite
def texts_with_words(draw):
    """(text, the words it was built from: as delivered and as read)."""
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(NOISE_ATOMS), max_size=30))), []
    parts = draw(st.lists(st.tuples(words, st.sampled_from(SEPARATORS)), max_size=8))
    text = draw(st.sampled_from(["", " ", "<p>", "_"])) + "".join(raw + sep for (raw, _), sep in parts)
    return text, [word for word, _ in parts]


@st.composite
def term_lists(draw, text, text_words):
    terms = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["slice", "words", "words", "free"] if text_words else ["slice", "free"]))
        if kind == "words":
            # One or two consecutive words of the text, as delivered or as read, maybe cut short.
            first = draw(st.integers(0, len(text_words) - 1))
            chosen = text_words[first : first + draw(st.integers(1, 2))]
            term = " ".join(pair[draw(st.integers(0, 1))] for pair in chosen)
            term = term[: draw(st.integers(1, len(term)))] if draw(st.booleans()) else term
        elif kind == "slice" and text:
            start = draw(st.integers(0, len(text) - 1))
            term = text[start : draw(st.integers(start + 1, min(len(text), start + 8)))]
        else:
            term = draw(st.text(TERM_CHARS, min_size=1, max_size=5))
        term = draw(st.sampled_from([term, term.upper(), term.lower()]))
        # A line break would split the term in two list lines; the contract reads it as white space.
        term = " ".join(term.splitlines()) + draw(st.sampled_from(["", "", "*", "*", " *"]))
        term = draw(st.sampled_from(["", " ", "\t"])) + term + draw(st.sampled_from(["", " "]))
        if ref_is_valid(term):
            terms.append(term)
    return terms


PROPERTY_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(st.data())
def test_matches_reference(data):
    text, text_words = data.draw(texts_with_words(), label="text")
    terms = data.draw(term_lists(text, text_words), label="terms")
    assert TermMatcher(terms).find(text) == reference_find(terms, text)


@PROPERTY_SETTINGS
@given(st.data())
def test_lists_sharing_a_prepared_text_find_what_each_finds_alone(data):
    text, text_words = data.draw(texts_with_words(), label="text")
    first = data.draw(term_lists(text, text_words), label="first list")
    second = data.draw(term_lists(text, text_words), label="second list")
    prepared = prepare(text)
    # The second list meets the forms the first one built (or left unbuilt).
    assert TermMatcher(first).find(prepared) == TermMatcher(first).find(text)
    assert TermMatcher(second).find(prepared) == TermMatcher(second).find(text)


@PROPERTY_SETTINGS
@given(st.data())
def test_first_match_points_where_the_reference_matches(data):
    # What a hint quotes must be a hit find() counts: in the text as delivered, and in its reader's
    # form (where the hint quotes a passage without offsets).
    text, text_words = data.draw(texts_with_words(), label="text")
    for term in data.draw(term_lists(text, text_words), label="terms"):
        pieces, star = ref_compile(term)
        for form in (text, ref_reader_form(text)):
            assert first_match(term, form) == ref_first_span(pieces, star, form), (term, form)


@PROPERTY_SETTINGS
@given(st.text("ab *\u200b\t", max_size=6))
def test_validate_term_matches_reference(term):
    assert (validate_term(term) is None) == ref_is_valid(term)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text("aAbß s*\n", max_size=6), max_size=6))
def test_parse_terms_is_idempotent(lines):
    once = parse_terms(lines)
    assert parse_terms(once) == once
    assert all(term == term.strip() and term for term in once)


@settings(max_examples=1000, deadline=None)
@given(st.text(st.sampled_from(list("ab \n\r\t\u00a0\u2028\u3000\x0b\x1c\u200b\u00ad")), max_size=12))
def test_white_space_runs_collapse_alike_on_fast_and_slow_path(text):
    # _collapse_ws takes a shortcut for texts whose only white space is ' ', '\n', '\r' and '\t';
    # both paths must give what a plain reading of "every run becomes one space" gives.
    expected, previous_space = [], False
    for char in text:
        space = char.isspace()
        if not (space and previous_space):
            expected.append(" " if space else char)
        previous_space = space
    assert _collapse_ws(text) == "".join(expected)


@PROPERTY_SETTINGS
@given(st.data())
def test_found_terms_come_back_in_list_order(data):
    # The guardrail orders what several places found by the list, without walking the whole list.
    text, text_words = data.draw(texts_with_words(), label="text")
    matcher = TermMatcher(data.draw(term_lists(text, text_words), label="terms"))
    found = data.draw(st.sets(st.sampled_from(matcher.terms)) if matcher.terms else st.just(set()), label="found")
    assert matcher.in_list_order(found) == [term for term in matcher.terms if term in found]


@PROPERTY_SETTINGS
@given(st.data())
def test_lists_searched_together_find_what_each_finds_alone(data):
    # One automaton for every list in scope of a call: the same terms, per list, as each list's own find.
    text, text_words = data.draw(texts_with_words(), label="text")
    lists = data.draw(st.lists(term_lists(text, text_words), min_size=1, max_size=4), label="lists")
    if data.draw(st.booleans(), label="a list shares another's keys"):
        toggled = [term[:-1] if term.endswith("*") else term + "*" for term in TermMatcher(lists[0]).terms]
        lists.append([term for term in toggled if validate_term(term) is None] + list(lists[0]))
    matchers = [TermMatcher(terms) for terms in lists]
    alone = [matcher.find(text) for matcher in matchers]
    assert together(matchers).find(prepare(text)) == alone
    assert together(matchers) is together(matchers)  # made once per set of lists
    assert TermMatchers(matchers, combine=False).find(text) == alone


def test_lists_searched_together_with_empty_lists_and_texts():
    matchers = [TermMatcher([]), TermMatcher(["Kunde*", "Preis"]), TermMatcher(["kunde"]), TermMatcher([])]
    text = "Die Kunden und der <b>Pre</b>is, ein kunde"  # "Preis" only in the reader's form
    assert TermMatchers(matchers).find(text) == [[], ["Kunde*", "Preis"], ["kunde"], []]
    assert TermMatchers(matchers).find(text) == [matcher.find(text) for matcher in matchers]
    assert TermMatchers(matchers).find("") == [[], [], [], []]
    assert TermMatchers([TermMatcher([])]).find("Kunde") == [[]]


def test_the_combined_automata_keep_to_their_budget(monkeypatch):
    from termlists import matcher as module

    monkeypatch.setattr(module, "_together", {})
    monkeypatch.setattr(module, "_together_held", [0])
    monkeypatch.setattr(module, "TOGETHER_KEYS", 25)
    monkeypatch.setattr(module, "COMBINED_TERMS", 12)
    sets = [(TermMatcher([f"a{i}x{j}" for j in range(5)]), TermMatcher([f"b{i}x{j}" for j in range(5)]))
            for i in range(4)]
    for pair in sets:
        assert together(pair).combined and together(pair).keys == 10
        assert module._together_held[0] == sum(each.keys for each in module._together.values()) <= 25
    assert list(module._together) == sets[2:]  # the oldest went first
    big = (TermMatcher([f"c{j}" for j in range(10)]), TermMatcher([f"d{j}" for j in range(10)]))
    assert not together(big).combined and together(big).keys == 0  # 20 terms together: one by one
    assert together(big).find("c3 and d9") == [["c3"], ["d9"]]
