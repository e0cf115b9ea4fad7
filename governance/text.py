"""What counts as finished text (SPEC §3): markup removal, word counts, JSON strings.

Pure: no Django, no I/O.
"""
import html
import json
import re

import regex

FINISHED_TEXT_MIN_WORDS = 30

# A tag starts with `<` followed by a letter, `/`, `!` or `?` and runs to the next `>`.
_TAG = re.compile(r"<[A-Za-z/!?][^<>]*>")
# A word is a maximal run of letters and digits.
_WORD = re.compile(r"[^\W_]+")
# Invisible format characters (Unicode category Cf: zero-width space, soft hyphen, ...).
_FORMAT_CHARS = regex.compile(r"\p{Cf}+")


def strip_markup(text: str) -> str:
    """Text with tags removed without a trace, entities decoded, invisible format characters dropped."""
    stripped = _TAG.sub("", text)
    if "&" in stripped:
        stripped = html.unescape(stripped)
    return _FORMAT_CHARS.sub("", stripped)


def count_words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(strip_markup(text)))


class NotJSON(ValueError):
    """The text of a `json` output does not parse."""


def json_strings(text: str) -> list[str]:
    """String values of a JSON document in document order (keys are not values)."""
    try:
        document = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise NotJSON(str(exc)) from exc
    found: list[str] = []

    def walk(node):
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(document)
    return found


def json_text(text: str) -> str:
    """The text a page receives from a JSON answer: its strings, one per line."""
    return "\n".join(json_strings(text))


def is_finished_text(text: str, *, kind: str, answer_of_tool_run: bool) -> bool:
    """At least 30 words after markup removal, not an image description, not a tool run's answer."""
    if kind == "image_description" or answer_of_tool_run:
        return False
    return count_words(text) >= FINISHED_TEXT_MIN_WORDS


def argument_strings(arguments, path: str = "") -> list[tuple[str, str]]:
    """(path, value) for every string inside a tool call's arguments (dict, list or JSON string)."""
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except ValueError:
            return [(path or "$", arguments)]
        if isinstance(decoded, str):
            return [(path or "$", decoded)]
        arguments = decoded
    found: list[tuple[str, str]] = []
    if isinstance(arguments, dict):
        for key, value in arguments.items():
            found.extend(argument_strings(value, f"{path}.{key}" if path else str(key)) if not isinstance(value, str)
                         else [(f"{path}.{key}" if path else str(key), value)])
    elif isinstance(arguments, list):
        for index, value in enumerate(arguments):
            sub = f"{path}[{index}]"
            found.extend(argument_strings(value, sub) if not isinstance(value, str) else [(sub, value)])
    return found
