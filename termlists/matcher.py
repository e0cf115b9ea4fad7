"""Term-list matching (SPEC §5.2): which terms of a list occur in a text, as whole words.
Pure module (stdlib + pyahocorasick, no Django, no I/O): compile a list once, then call find().
"""

# Decisions the contract leaves open, kept here because this module is the contract's executable form:
#
# * Case: text and terms are lower-cased with `str.lower` (never `casefold`: `ß` and `ss` stay
#   different letters; `ẞ` lower-cases to `ß`).  Greek final sigma `ς` is then read as `σ`,
#   because `str.lower` picks between them by position, which would make `ΟΔΟΣ*` miss `ΟΔΟΣΗ`.
#   Matching runs on the lower-cased text.  `İ` lower-cases to `i` plus a combining dot (a mark), so
#   `i` does not match `İ`, but `i*` does.
# * Word characters: `str.isalnum()` (Unicode letters and digits), `_`, and combining marks
#   (Unicode category M).  Marks count because they are part of the letter they sit on: `cafe` must not
#   match a decomposed `café`, and Indic vowel signs are marks.  A match may not touch a word character
#   on either side.
# * Trailing `*`: any run (possibly empty) of letters, digits and marks -- not `_`.  The run is
#   greedy, so the whole-word rule then demands that the next character is not `_`:
#   `Rabatt*` matches `Rabatte` but not `Rabatt_x`.
# * White space: `str.isspace()` characters (what `str.split()` splits on).  White space in a term
#   matches a whole run of white space in the text, never part of one (this matters only for a term
#   like `Kunde *`, which is valid and means "Kunde, white space, then any word or nothing").
# * Tags: `<` followed by an ASCII letter, `/`, `!` or `?`, up to the next `>`.  A `<`
#   without a later `>` is text.  `a < b` and `<3` are text.
# * The two forms searched: *as delivered* is the text exactly as given (only lower-cased); a format
#   character (Cf) there is an ordinary non-word character, like a space.  The *reader's form* is the
#   text with tags removed, then HTML entities decoded (`html.unescape`), then invisible characters
#   dropped -- in that order, so an entity-encoded `&lt;b&gt;` stays visible text and `&shy;` disappears.
#   Invisible is termlists/invisible.py's table, the one secret redaction reads too: every Cf and every
#   default-ignorable character (a variation selector, the combining grapheme joiner, a Hangul filler).
#   A term found in either form counts.
# * Terms: surrounding white space is ignored, inner white-space runs count as one space, and
#   invisible characters in a term are ignored (a pasted soft hyphen is not part of a term).
#   Two terms that end up with the same key (differ only in case, inner white space or invisible
#   characters) count once, in their first spelling.  A line holding only white space and invisible
#   characters is an empty line.

from __future__ import annotations

import html
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator

import ahocorasick

from termlists.invisible import INVISIBLE, PRINTABLE_CLASS, char_class

__all__ = [
    "MSG_ONLY_STAR_OR_SPACE",
    "MSG_STAR_NOT_AT_END",
    "Prepared",
    "TAG_RE",
    "TermMatcher",
    "TermMatcherError",
    "all_matches",
    "entry_line",
    "first_match",
    "matches_outside",
    "parse_entries",
    "parse_terms",
    "prepare",
    "split_suggestion",
    "validate_entry",
    "validate_term",
]

# Plain English so the caller (model validation, policy import) can translate by identity.
MSG_ONLY_STAR_OR_SPACE = "A term must hold more than '*' and white space."
MSG_STAR_NOT_AT_END = "'*' is only allowed at the end of a term."
MSG_EMPTY_SUGGESTION = "Write the suggestion after '=>', or remove '=>'."
MSG_SUGGESTION_NOT_HERE = "Only forbidden terms carry a suggestion ('=>')."

# A list line may carry a replacement: `Kunde => Kundin oder Kunde`. What follows the first `=>` is
# the suggestion, never part of the term; the list splits it off, and the matcher sees the term only.
SUGGESTION_MARK = "=>"


def _marks() -> list[int]:
    """Code points of the combining marks (category M)."""
    # They live only in planes 0, 1 and 14 (planes 2-3 hold CJK ideographs only, 15-16 are private
    # use); scanning just those keeps the one-off cost at import to some 25 ms.
    return [cp for plane in (range(0x0, 0x20000), range(0xE0000, 0xE1000)) for cp in plane
            if unicodedata.category(chr(cp))[0] == "M"]


_MARKS = _marks()

# Word characters besides str.isalnum(); a membership test per candidate is cheap.
_EXTRA_WORD_CHARS = frozenset("_" + "".join(map(chr, _MARKS)))
# Characters the reader's form must deal with: invisible characters (termlists/invisible.py) and white
# space other than ' '. re compiles a class into a fast lookup table only while it stays in the BMP (a
# class holding the few astral ranges costs three times as much per character), so this one takes any
# astral character, and astral hits are sorted out one by one.
_ODD_BMP_CHARS = sorted(
    {ord(char) for char in INVISIBLE if char <= "\uffff"}
    | {cp for cp in range(0x10000) if chr(cp).isspace() and cp != 0x20}
)
_ODD_CHAR_RE = re.compile(f"[{char_class(_ODD_BMP_CHARS)}\\U00010000-\\U0010ffff]")
# The invisible characters str.isprintable() lets through (marks and fillers), for its fast path below.
_PRINTABLE_INVISIBLE_RE = re.compile(f"[{PRINTABLE_CLASS}]")
# What a tag is (see above).  governance/screening/text.py counts words with it, so finished text (SPEC §3) and
# matching read the same text: in `<b <i>x` the tag is `<b <i>`.
TAG_RE = re.compile(r"<[A-Za-z/!?][^>]*>")
# What a trailing '*' consumes: letters, digits ([^\W_] is exactly str.isalnum()) and marks.
_STAR_RUN_RE = re.compile(f"(?:[^\\W_]|[{char_class(_MARKS)}])*")
# Pads a scanned string so the characters before and after a hit always exist.  It is a format
# character: non-word, not white space, and never part of a key (keys drop format characters).
_SENTINEL = "\u2060"


def _lower(text: str) -> str:
    return text.lower().replace("ς", "σ")


def _collapse_ws(text: str) -> str:
    """Every white-space run as one space."""
    # Most texts hold no white space but ' ', '\n', '\r' and '\t'.  Turning those into spaces and
    # halving double spaces is a few C-speed passes; str.isprintable() (False for every white-space
    # character but ' ' and for every format character) proves nothing else is there.
    flat = text.replace("\n", " ").replace("\r", " ").replace("\t", " ")
    if flat.isprintable():
        while "  " in flat:
            flat = flat.replace("  ", " ")
        return flat
    # Otherwise str.split() knows every white-space character and still runs at C speed (re.sub is
    # 4x slower).
    words = text.split()
    if not words:
        return " " if text else ""
    # split() also drops leading and trailing runs; keep them, "Kunde *" needs the trailing one.
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return f"{lead}{' '.join(words)}{trail}"


def _without_format_chars(text: str) -> tuple[str, bool]:
    """`text` with invisible characters dropped, and whether it holds white space other than ' '."""
    # Neither format characters nor white space other than ' ' -- and, unless the text is ASCII, none of
    # the few marks and fillers that print as nothing.
    if text.isprintable() and (text.isascii() or _PRINTABLE_INVISIBLE_RE.search(text) is None):
        return text, False
    odd_space = False
    # Texts hold few distinct odd characters: one C-speed search finds them, then str.replace per
    # distinct character (re.sub would pay per occurrence).
    for char in set(_ODD_CHAR_RE.findall(text)):
        if char.isspace():
            odd_space = True
        elif char in INVISIBLE:
            text = text.replace(char, "")
    return text, odd_space


def _reader_form(collapsed: str) -> str:
    """What a reader sees of a white-space-collapsed text: tags removed without a trace, then
    entities decoded, then invisible characters dropped -- white space collapsed again."""
    text = collapsed
    last_close = text.rfind(">")
    if last_close > 0:
        # No tag starts after the last '>'.  Leaving that tail out of the search keeps it linear:
        # otherwise every '<a' of a text like '<a<a<a...' would scan to the end looking for '>'.
        text = TAG_RE.sub("", text[: last_close + 1]) + text[last_close + 1 :]
    if "&" in text:
        text = html.unescape(text)
    text, odd_space = _without_format_chars(text)
    if odd_space:  # an entity such as &nbsp; or &#10;
        return _collapse_ws(text)
    # Otherwise white space only met white space where something between was removed.
    while "  " in text:
        text = text.replace("  ", " ")
    return text


def _padded(collapsed: str) -> str:
    """The string the automaton runs over: lower-cased, with a sentinel at either end."""
    return f"{_SENTINEL}{_lower(collapsed)}{_SENTINEL}"


def _analyse(term: str) -> tuple[str | None, str, bool]:
    """(error message or None, automaton key, has trailing star) for one stripped term."""
    visible = _without_format_chars(term)[0].strip()
    if not visible.replace("*", "").strip():
        return MSG_ONLY_STAR_OR_SPACE, "", False
    star = visible.endswith("*")
    body = visible[:-1] if star else visible
    if "*" in body:
        return MSG_STAR_NOT_AT_END, "", False
    # White space before a trailing star is kept: "Kunde *" needs white space after "Kunde".
    return None, _collapse_ws(_lower(body)), star


def validate_term(term: str) -> str | None:
    """Why `term` would be refused at save, or None when it is a valid term."""
    return _analyse(term.strip())[0]


def split_suggestion(line: str) -> tuple[str, str | None]:
    """(term, suggestion or None) of one list line: the suggestion is what follows the first `=>`."""
    term, mark, suggestion = line.partition(SUGGESTION_MARK)
    if not mark:
        return line.strip(), None
    return term.strip(), suggestion.strip()


def entry_line(term: str, suggestion: str | None) -> str:
    """One list line as stored and exported: `term` or `term => suggestion`."""
    return f"{term} {SUGGESTION_MARK} {suggestion}" if suggestion else term


def validate_entry(line: str, *, suggestion_allowed: bool = True) -> str | None:
    """Why a list line would be refused at save (its term, or a suggestion that is empty or not allowed)."""
    term, suggestion = split_suggestion(line)
    if suggestion is not None:
        if not suggestion_allowed:
            return MSG_SUGGESTION_NOT_HERE
        if not suggestion:
            return MSG_EMPTY_SUGGESTION
    return validate_term(term)


def parse_entries(text_or_lines: str | Iterable[str]) -> list[tuple[str, str | None]]:
    """A list's lines as (term, suggestion or None), normalised like parse_terms: the term decides what
    counts as a repeat, and the first spelling (with its suggestion) is kept."""
    if isinstance(text_or_lines, str):
        lines: Iterable[str] = text_or_lines.splitlines()
    else:
        lines = (line for item in text_or_lines for line in item.splitlines())
    seen: set[str] = set()
    entries = []
    for line in lines:
        term, suggestion = split_suggestion(line)
        key = dedupe_key(term)
        if key and key not in seen:
            seen.add(key)
            entries.append((term, suggestion or None))
    return entries


def dedupe_key(term: str) -> str:
    """Two spellings of one term (case, spaces, format characters): the same key. What a list compares by."""
    return _collapse_ws(_lower(_without_format_chars(term)[0].strip()))


def parse_terms(text_or_lines: str | Iterable[str]) -> list[str]:
    """Normalise a list: one term per line, stripped, empty lines dropped, first spelling kept.

    Accepts the list's text or an iterable of lines (an item holding newlines is split too).
    Invalid terms are kept -- check them with validate_term().
    """
    if isinstance(text_or_lines, str):
        lines: Iterable[str] = text_or_lines.splitlines()
    else:
        lines = (line for item in text_or_lines for line in item.splitlines())
    seen: set[str] = set()
    terms = []
    for line in lines:
        term = line.strip()
        key = dedupe_key(term)
        if key and key not in seen:
            seen.add(key)
            terms.append(term)
    return terms


_UNBUILT = object()


class Prepared:
    """A text in the forms find() scans, made once for every list that searches it: as delivered at
    once, the reader's form when a list first needs it (one whose terms were not all found as
    delivered).  Meant for one thread: the lazy form is built without a lock."""

    __slots__ = ("text", "delivered", "_collapsed", "_reader")

    def __init__(self, text: str):
        self.text = text
        # Collapsing white space first serves both forms: markup stripped from a collapsed text
        # reads the same as markup stripped from the text, up to white space, collapsed again.
        self._collapsed = _collapse_ws(text)
        self.delivered = _padded(self._collapsed)
        self._reader: object = _UNBUILT

    @property
    def reader(self) -> str | None:
        """The padded reader's form, or None when it reads as delivered."""
        if self._reader is _UNBUILT:
            reader = _reader_form(self._collapsed)
            # Most texts carry no markup; then the second form is the first and needs no scan.
            self._reader = _padded(reader) if reader != self._collapsed else None
        return self._reader


def prepare(text: str) -> Prepared:
    """`text` made ready for any number of TermMatcher.find calls."""
    return Prepared(text)


def first_match(term: str, text: str) -> tuple[int, int] | None:
    """Where `term` first occurs in `text` read as delivered, by find()'s rules: (start, end) offsets
    into `text`, or None (also for a term the contract refuses).

    For quoting a hit (one term, one text): it compiles a pattern, so lists are matched with find().
    """
    return next(all_matches(term, text), None)


def all_matches(term: str, text: str) -> Iterator[tuple[int, int]]:
    """Every place `term` occurs in `text` read as delivered, by find()'s rules, left to right and
    not overlapping: (start, end) offsets into `text`. For marking hits (the review page), not for
    matching lists."""
    error, key, star = _analyse(term.strip())
    if error:
        return
    # A space in a key stands for a whole white-space run of the text (find() scans a collapsed
    # text); greedy, \s+ never stops inside a run where a non-space must follow.
    search = re.compile(r"\s+".join(map(re.escape, key.split(" ")))).search
    lowered = _lower(text)
    padded = f"{_SENTINEL}{lowered}{_SENTINEL}"
    extra = _EXTRA_WORD_CHARS
    match = search(padded)
    while match is not None:
        start, end = match.span()
        # The boundaries exactly as TermMatcher._scan checks them.
        before = padded[start - 1]
        stop = None
        if not (before.isalnum() or before in extra):
            if star:
                stop = _STAR_RUN_RE.match(padded, end).end()
                if padded[stop] == "_":
                    stop = None
            elif not (padded[end].isalnum() or padded[end] in extra):
                stop = end
        if stop is not None:
            yield _origin(text, lowered, start - 1, stop - 1)
            match = search(padded, max(stop, start + 1))
        else:
            match = search(padded, start + 1)


def matches_outside(term: str, suggestion: str | None, text: str) -> list[tuple[int, int]]:
    """Every place `term` occurs in `text` (as all_matches) except inside an occurrence of its own
    suggestion: a list that says `Kunde => Kundin oder Kunde` accepts the text its suggestion makes."""
    spans = list(all_matches(term, text))
    if not suggestion or not spans:
        return spans
    covers = list(all_matches(suggestion, text))
    return [(start, end) for start, end in spans
            if not any(left <= start and end <= right for left, right in covers)]


def _origin(text: str, lowered: str, start: int, end: int) -> tuple[int, int]:
    """Offsets into the lower-cased text as offsets into `text`."""
    if len(lowered) == len(text):
        return start, end
    # Only `İ` lower-cases to more than one code point (`i` and a combining dot); a hit never
    # splits the pair, since the dot is a word character.
    origin = [index for index, char in enumerate(text) for _ in char.lower()]
    origin.append(len(text))
    return origin[start], origin[end]


class TermMatcherError(ValueError):
    """A list holds terms that the contract refuses; `errors` pairs each with its message."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{term!r}: {message}" for term, message in errors))


class TermMatcher:
    """A term list compiled once into an Aho-Corasick automaton; `find` may be called from any thread."""

    def __init__(self, terms: str | Iterable[str]):
        # A bare string is the list's text, not an iterable of one-character terms.
        self.terms: tuple[str, ...] = tuple(parse_terms(terms))
        self._position = {term: index for index, term in enumerate(self.terms)}
        # key -> [plain term index, starred term index]; "Kunde" and "Kunde*" share a key.
        slots: dict[str, list[int | None]] = {}
        errors = []
        for index, term in enumerate(self.terms):
            error, key, star = _analyse(term)
            if error:
                errors.append((term, error))
                continue
            slots.setdefault(key, [None, None])[1 if star else 0] = index
        if errors:
            raise TermMatcherError(errors)
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
        for key, (plain, starred) in slots.items():
            self._automaton.add_word(key, (len(key), plain, starred))
        if slots:
            self._automaton.make_automaton()

    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        return f"<TermMatcher of {len(self.terms)} terms>"

    def find(self, text: str | Prepared) -> list[str]:
        """The list's terms that occur in `text`: as written in the list, in list order, each once.

        `text` may be prepare()d, when several lists search the same text.
        """
        if not self.terms:
            return []
        if not isinstance(text, Prepared):
            if not text:
                return []
            text = Prepared(text)
        found: set[int] = set()
        self._scan(text.delivered, found)
        if len(found) < len(self.terms):
            reader = text.reader
            if reader is not None:
                self._scan(reader, found)
        return [self.terms[index] for index in sorted(found)]

    def in_list_order(self, terms) -> list[str]:
        """The given terms of this list in list order: as cheap for a list of 100,000 terms as of 10."""
        position = self._position
        return sorted(terms, key=position.__getitem__)

    def _scan(self, padded: str, found: set[int]) -> None:
        # This loop runs once per automaton hit, most of them inside longer words, so it does the
        # least work first (the left boundary) and touches nothing else for a rejected hit.
        extra = _EXTRA_WORD_CHARS
        star_run = _STAR_RUN_RE.match
        for end, (length, plain, starred) in self._automaton.iter(padded):
            before = padded[end - length]
            if before.isalnum() or before in extra:
                continue
            if plain is not None and plain not in found:
                after = padded[end + 1]
                if not (after.isalnum() or after in extra):
                    found.add(plain)
            if starred is not None and starred not in found:
                # The run is greedy, so what follows it is no letter, digit or mark; only '_'
                # can still break the whole-word rule.
                if padded[star_run(padded, end + 1).end()] != "_":
                    found.add(starred)


class TermMatchers:
    """Several lists' matchers as one automaton: one scan of a text finds, for each list, what its own
    `find` finds. A call with many lists in scope reads its text once, not once per list (issue 30:
    each list's own scan cost a screening about 8 µs). Made by `together`, once per set of lists;
    with combine=False (or one list) each list searches on its own, with the same answers."""

    def __init__(self, matchers: Iterable[TermMatcher], *, combine: bool = True):
        self.matchers = tuple(matchers)
        # One list, or lists searched one by one (combine=False), need no automaton of their own.
        self.combined = combine and len(self.matchers) > 1
        # key -> ((list index, plain term index, starred term index), ...): lists may share a key.
        entries: dict[str, list[tuple[int, int | None, int | None]]] = {}
        for index, matcher in enumerate(self.matchers if self.combined else ()):
            if matcher.terms:
                for key, (_length, plain, starred) in matcher._automaton.items():
                    entries.setdefault(key, []).append((index, plain, starred))
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
        for key, found in entries.items():
            self._automaton.add_word(key, (len(key), tuple(found)))
        self.keys = len(entries)
        if entries:
            self._automaton.make_automaton()

    def find(self, text: str | Prepared) -> list[list[str]]:
        """For each matcher, in order, what its `find(text)` returns."""
        if not isinstance(text, Prepared):
            text = Prepared(text)
        if not self.combined:
            return [matcher.find(text) for matcher in self.matchers]
        found: list[set[int]] = [set() for _ in self.matchers]
        if self.keys and text.text:
            self._scan(text.delivered, found)
            if any(len(hits) < len(matcher.terms) for hits, matcher in zip(found, self.matchers)):
                reader = text.reader
                if reader is not None:
                    self._scan(reader, found)
        return [[matcher.terms[index] for index in sorted(hits)] for matcher, hits in zip(self.matchers, found)]

    def _scan(self, padded: str, found: list[set[int]]) -> None:
        # TermMatcher._scan's rules, the boundaries read once per hit for all the lists holding its key.
        extra = _EXTRA_WORD_CHARS
        star_run = _STAR_RUN_RE.match
        for end, (length, entries) in self._automaton.iter(padded):
            before = padded[end - length]
            if before.isalnum() or before in extra:
                continue
            plain_ends = star_ends = None
            for index, plain, starred in entries:
                hits = found[index]
                if plain is not None and plain not in hits:
                    if plain_ends is None:
                        after = padded[end + 1]
                        plain_ends = not (after.isalnum() or after in extra)
                    if plain_ends:
                        hits.add(plain)
                if starred is not None and starred not in hits:
                    if star_ends is None:
                        star_ends = padded[star_run(padded, end + 1).end()] != "_"
                    if star_ends:
                        hits.add(starred)


# The combined automata of a process hold at most TOGETHER_KEYS keys (about 0.3 KB each, so ~80 MB);
# past it the oldest sets go. Lists holding more than COMBINED_TERMS terms together are searched one by
# one instead: for them the scan per list is small beside the list, and no second copy of a large list
# is made.
TOGETHER_KEYS = 250_000
COMBINED_TERMS = 10_000
_together: dict[tuple[TermMatcher, ...], TermMatchers] = {}
_together_held = [0]  # keys in _together
_together_lock = threading.Lock()


def together(matchers: Iterable[TermMatcher]) -> TermMatchers:
    """The TermMatchers of these matchers, made once per process for each set of them. A matcher is
    compiled once per list version, so an edited list makes a new set; the old sets go with their
    policy version (forget_together), or the oldest first past TOGETHER_KEYS."""
    key = tuple(matchers)
    combined = _together.get(key)
    if combined is None:
        combined = TermMatchers(key, combine=sum(len(matcher) for matcher in key) <= COMBINED_TERMS)
        with _together_lock:
            while _together and _together_held[0] + combined.keys > TOGETHER_KEYS:
                _together_held[0] -= _together.pop(next(iter(_together))).keys
            if key not in _together:
                _together[key] = combined
                _together_held[0] += combined.keys
    return combined


def forget_together() -> None:
    """Drop every combined automaton and the matchers it holds (termlists.services, when a new policy
    version drops the matchers compiled under the old one: every set is made anew from the new ones)."""
    with _together_lock:
        _together.clear()
        _together_held[0] = 0
