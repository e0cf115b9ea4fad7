"""The characters a reader never sees, as one table: the term matcher drops them from the reader's form of a
text (SPEC §5.2) and secret redaction from its normalised text (§9), so no such character hides a term or a
key from one and not the other (issue 41). Pure: the standard library only.
"""
from __future__ import annotations

import unicodedata

__all__ = ["CLASS", "INVISIBLE", "PRINTABLE_CLASS", "char_class"]

# What is invisible is Unicode's own answer, not a list of our finds: every format character (category
# Cf: zero-width space, soft hyphen, bidirectional controls, tag characters, ...) and every
# Default_Ignorable_Code_Point (DerivedCoreProperties.txt), which adds the characters below that are
# no Cf -- marks and fillers that render as nothing -- and the code points reserved to be ignorable
# when they are assigned (a renderer that knows them shows nothing either).
DEFAULT_IGNORABLE_NOT_FORMAT = (
    (0x034F, 0x034F),  # combining grapheme joiner (Mn)
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers (Lo)
    (0x17B4, 0x17B5),  # Khmer inherent vowels (Mn)
    (0x180B, 0x180D),  # Mongolian free variation selectors one to three (Mn)
    (0x180F, 0x180F),  # Mongolian free variation selector four (Mn)
    (0x2065, 0x2065),  # reserved (Cn)
    (0x3164, 0x3164),  # Hangul filler (Lo)
    (0xFE00, 0xFE0F),  # variation selectors 1-16 (Mn)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler (Lo)
    (0xFFF0, 0xFFF8),  # reserved (Cn)
    (0xE0000, 0xE0FFF),  # tags (Cf), variation selectors 17-256 (Mn), the rest of the plane's block reserved (Cn)
)


def _table() -> frozenset[str]:
    # Format characters live only in planes 0, 1 and 14 (planes 2-3 hold CJK ideographs, 15-16 are private use).
    found = {chr(cp) for plane in (range(0x0, 0x20000), range(0xE0000, 0xE1000)) for cp in plane
             if unicodedata.category(chr(cp)) == "Cf"}
    found.update(chr(cp) for first, last in DEFAULT_IGNORABLE_NOT_FORMAT for cp in range(first, last + 1))
    return frozenset(found)


def char_class(codepoints) -> str:
    """A regex character class body for the given code points, written as ranges."""
    parts, start, prev = [], None, None
    for cp in sorted(codepoints) + [-2]:  # -2 never continues a range, so it flushes the last one
        if start is not None and cp == prev + 1:
            prev = cp
            continue
        if start is not None:
            parts.append(f"\\U{start:08x}" if start == prev else f"\\U{start:08x}-\\U{prev:08x}")
        start = prev = cp
    return "".join(parts)


INVISIBLE: frozenset[str] = _table()
# A regex class body of the whole table, and of the part that str.isprintable() calls printable (marks and
# fillers: a text can be "printable" and still hold them).
CLASS = char_class(map(ord, INVISIBLE))
PRINTABLE_CLASS = char_class(ord(char) for char in INVISIBLE if char.isprintable())
