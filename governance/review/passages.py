"""Where each hint's passages sit in an answer: the text cut into plain and marked pieces.

Pure: plain data in, plain data out (no Django). A hint is placed only when its offsets
are whole numbers inside the text and, when it quotes a passage, `text[start:end]` is
exactly that passage; any other hint is listed without a mark. A term-list hint quotes
its first hit only, but names every term it found: once placed, every occurrence of each
of those terms is marked too (the matcher's own rules say where). Any other quoted passage (a judge's)
is marked at every place the same words occur. Overlapping passages are
cut at every boundary, so each piece names every hint that covers it, and the hint it is
credited to is the one whose passage is most specific there (the shortest that covers it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from termlists.matcher import matches_outside


@dataclass(frozen=True)
class Piece:
    text: str
    hints: tuple[int, ...] = ()  # indexes into the hint list; empty for plain text
    first_of: tuple[int, ...] = ()  # hints whose first passage starts in this piece (the mark anchors)
    ends: tuple[int, ...] = ()  # hints one of whose passages ends with this piece (the hint numbers shown)
    credited: int | None = None  # the hint the piece's mark links to


@dataclass
class Placed:
    pieces: list[Piece] = field(default_factory=list)
    placed: set[int] = field(default_factory=set)  # indexes of the hints that have a mark
    occurrences: dict[int, int] = field(default_factory=dict)  # marked passages per placed hint


def span_of(text: str, hint: dict) -> tuple[int, int] | None:
    """The hint's (start, end) in `text`, or None when it cannot be marked there."""
    start, end = hint.get("start"), hint.get("end")
    if type(start) is not int or type(end) is not int:  # bool is not an offset
        return None
    if not 0 <= start < end <= len(text):
        return None
    passage = hint.get("passage")
    if passage is not None and text[start:end] != passage:
        return None  # offsets that do not hold the quoted passage mark nothing rather than the wrong words
    return start, end


def spans_of(text: str, hint: dict) -> list[tuple[int, int]]:
    """Every passage of the hint in `text`, left to right: its own span and, for a term-list hint
    on the answer, every further hit of the terms it names."""
    first = span_of(text, hint)
    if first is None:
        return []
    spans = {first}
    terms = hint.get("terms")
    if (hint.get("check") == "term_list" and hint.get("type") == "forbidden" and hint.get("tool_call") is None
            and isinstance(terms, list)):
        suggestions = suggestions_of(hint)
        for term in terms:
            if isinstance(term, str):
                spans.update(matches_outside(term, suggestions.get(term), text))
    elif hint.get("tool_call") is None and isinstance(hint.get("passage"), str) and hint["passage"]:
        # A judged passage (or any quoted one) that occurs again is marked again (issue 43): the judge
        # quotes it once, but the same words elsewhere break the same rule.
        passage, at = hint["passage"], 0
        while (found := text.find(passage, at)) >= 0:
            spans.add((found, found + len(passage)))
            at = found + len(passage)
    return sorted(spans)


def suggestions_of(hint: dict) -> dict[str, str]:
    """The hint's suggestions, term -> replacement (a term-list hint's `suggestion`)."""
    found = hint.get("suggestion")
    if not isinstance(found, dict):
        return {}
    return {term: value for term, value in found.items() if isinstance(term, str) and isinstance(value, str) and value}


def apply_suggestion(text: str, hint: dict, term: str) -> tuple[str, int]:
    """`text` with every occurrence of `term` that the hint marks replaced by the term's suggestion,
    and how many were replaced. Occurrences already inside the suggestion stay as they are."""
    suggestion = suggestions_of(hint).get(term)
    if not suggestion or term not in (hint.get("terms") or ()) or span_of(text, hint) is None:
        return text, 0
    spans = matches_outside(term, suggestion, text)
    for start, end in reversed(spans):
        text = text[:start] + suggestion + text[end:]
    return text, len(spans)


def place(text: str, hints: list[dict]) -> Placed:
    """Cut `text` into pieces; a piece inside one or more hinted passages names those hints."""
    if not text:
        return Placed([], set())
    spans = {index: found for index, hint in enumerate(hints)
             if isinstance(hint, dict) and (found := spans_of(text, hint))}
    flat = [(index, start, end) for index, found in spans.items() for start, end in found]
    cuts = sorted({0, len(text), *(s for _i, start, end in flat for s in (start, end))})
    pieces: list[Piece] = []
    for left, right in zip(cuts, cuts[1:]):
        covering = [(end - start, index, start, end) for index, start, end in flat if start <= left and right <= end]
        hints_here = tuple(sorted({index for _l, index, _s, _e in covering}))
        starting = tuple(i for i in hints_here if spans[i][0][0] == left)
        ending = tuple(sorted({index for _l, index, _s, end in covering if end == right}))
        credited = min(covering)[1] if covering else None
        pieces.append(Piece(text[left:right], hints_here, starting, ending, credited))
    return Placed(pieces, set(spans), {index: len(found) for index, found in spans.items()})
