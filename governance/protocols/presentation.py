"""How a finished answer is shown to a consumer's client, by the consumer's own properties (SPEC §11.9).

Pure: a §11.1 completion body and the consumer's choices in, the text a protocol renders out. Every
protocol's render module asks here, so a block or a hint reads the same on all of them, and no request
member can change it (the run never knows which client called).
"""
from __future__ import annotations

# Set apart from the answer so a person (and a diff) sees where the model's text ends.
NOTE_RULE = "\n\n---\n"
NOTE_PREFIX = "Gavel: "


def blocks_as_message(consumer) -> bool:
    """Whether a block reaches this consumer as a normal finished answer whose text is Gavel's message."""
    return getattr(consumer, "blocks_as", "refusal") == "message"


def hints_as_note(consumer) -> bool:
    """Whether report-mode hints also reach this consumer as a note after the answer text."""
    return getattr(consumer, "hints_as", "member") == "note"


def hint_note(body: dict, consumer) -> str:
    """The note appended to a delivered answer for a consumer that asked for one: one line per hint, in the
    reader's language (each hint's own message); empty when there is nothing to say or the consumer did not
    ask. The note is Gavel's, not the model's: evidence and the screened text never include it."""
    if not hints_as_note(consumer) or body.get("outcome") == "blocked":
        return ""
    lines = [" ".join(str(hint.get("message") or "").split()) for hint in body.get("hints") or ()]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    return NOTE_RULE + "\n".join(NOTE_PREFIX + line for line in lines)


def block_text(body: dict) -> str:
    """Gavel's block message, the text a person reads in place of a blocked answer."""
    return str((body.get("block") or {}).get("message") or "")
