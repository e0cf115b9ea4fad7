"""Where each hint's passage sits in an answer: the text cut into plain and marked pieces.

Pure: plain data in, plain data out (no Django). A hint is placed only when its offsets
are whole numbers inside the text and, when it quotes a passage, `text[start:end]` is
exactly that passage; any other hint is listed without a mark. Overlapping passages are
cut at every boundary, so each piece names every hint that covers it.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Piece:
    text: str
    hints: tuple[int, ...] = ()  # indexes into the hint list; empty for plain text
    first_of: tuple[int, ...] = ()  # hints whose passage starts in this piece (the mark anchors)


@dataclass
class Placed:
    pieces: list[Piece] = field(default_factory=list)
    placed: set[int] = field(default_factory=set)  # indexes of the hints that have a mark


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


def place(text: str, hints: list[dict]) -> Placed:
    """Cut `text` into pieces; a piece inside one or more hinted passages names those hints."""
    spans = {index: span for index, hint in enumerate(hints) if (span := span_of(text, hint)) is not None}
    if not text:
        return Placed([], set())
    cuts = sorted({0, len(text), *(s for span in spans.values() for s in span)})
    pieces: list[Piece] = []
    for left, right in zip(cuts, cuts[1:]):
        covering = tuple(i for i, (s, e) in spans.items() if s <= left and right <= e)
        starting = tuple(i for i in covering if spans[i][0] == left)
        pieces.append(Piece(text[left:right], covering, starting))
    return Placed(pieces, set(spans))
