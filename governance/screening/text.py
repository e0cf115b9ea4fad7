"""What counts as finished text (SPEC §3): markup removal, word counts, JSON strings.

Pure: no Django, no I/O.
"""
import html
import json
import re
from itertools import accumulate, islice

# The matcher's own tag rule and invisible characters, so word counts and matching read the same text.
from termlists import invisible
from termlists.matcher import TAG_RE

FINISHED_TEXT_MIN_WORDS = 30

# A word is a maximal run of letters and digits.
_WORD = re.compile(r"[^\W_]+")
# Invisible characters (zero-width space, soft hyphen, variation selectors, ...): the matcher's own table.
_FORMAT_CHARS = re.compile(f"[{invisible.CLASS}]+")


def strip_markup(text: str) -> str:
    """Text with tags removed without a trace, entities decoded, invisible characters dropped."""
    stripped = TAG_RE.sub("", text)
    if "&" in stripped:
        stripped = html.unescape(stripped)
    return _FORMAT_CHARS.sub("", stripped)


def count_words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(strip_markup(text)))


def is_finished_text(text: str) -> bool:
    """At least FINISHED_TEXT_MIN_WORDS words (SPEC §3); stops counting there, since every check of
    a screening asks this of the same, often long, text."""
    words = _WORD.finditer(strip_markup(text))
    return next(islice(words, FINISHED_TEXT_MIN_WORDS - 1, None), None) is not None


class NotJSON(ValueError):
    """The text of a `json` output does not parse."""


def _decoded_strings(node, *, keys: bool, found: list[str]) -> list[str]:
    """Every string of a decoded JSON document in document order; object keys too when `keys`."""
    if isinstance(node, str):
        found.append(node)
    elif isinstance(node, (dict, JSONObject)):
        for key, value in (node.items() if isinstance(node, dict) else node):
            if keys:
                found.append(key)
            _decoded_strings(value, keys=keys, found=found)
    elif isinstance(node, list):
        for item in node:
            _decoded_strings(item, keys=keys, found=found)
    return found


def json_strings(text: str) -> list[str]:
    """String values of a JSON document in document order (keys are not values)."""
    try:
        return _decoded_strings(json.loads(text), keys=False, found=[])
    except (TypeError, ValueError, RecursionError) as exc:
        # Nested too deep to walk is no document either: it is read as text.
        raise NotJSON(str(exc)) from exc


def json_text(text: str) -> str:
    """The text a page receives from a JSON answer: its strings, one per line."""
    return "\n".join(json_strings(text))


class JSONObject(list):
    """A decoded JSON object as its (key, value) members in document order, duplicate keys kept."""


def load_json_members(text: str):
    """`json.loads`, objects read as JSONObject so no key and no duplicate key's value is lost."""
    return json.loads(text, object_pairs_hook=JSONObject)


def dump_json_members(node) -> str:
    """Serialise what load_json_members read (json.dumps layout, ensure_ascii=False), duplicates kept."""
    if isinstance(node, JSONObject):
        return "{" + ", ".join(f"{dump_json_members(k)}: {dump_json_members(v)}" for k, v in node) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(dump_json_members(item) for item in node) + "]"
    return json.dumps(node, ensure_ascii=False)


def json_search_text(text: str) -> str:
    """A JSON answer as forbidden terms are searched in it (SPEC §5.3): every decoded string, object
    keys and each duplicate key's value included, in document order, one per line."""
    try:
        return "\n".join(_decoded_strings(load_json_members(text), keys=True, found=[]))
    except (TypeError, ValueError, RecursionError) as exc:
        raise NotJSON(str(exc)) from exc


# A JSON `\uXXXX` escape, a surrogate pair as one.
_UNICODE_ESCAPE = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})")


def _unescaped(match: re.Match) -> str:
    if match.group(3) is None:
        high, low = int(match.group(1), 16), int(match.group(2), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    point = int(match.group(3), 16)
    # A lone surrogate stays written as it was (no text holds it); so does an escape that must stay one
    # in a JSON string (quote, backslash, control characters), so the text reads the same to a parser.
    if 0xD800 <= point <= 0xDFFF or point < 0x20 or point in (0x22, 0x5C):
        return match.group(0)
    return chr(point)


def decode_unicode_escapes(text: str) -> str:
    """`text` with its JSON `\\u` escapes written as the characters they stand for: what a lenient parser
    (a partial-JSON or repairing one) reads out of an answer that was to be JSON and does not parse."""
    return _UNICODE_ESCAPE.sub(_unescaped, text) if "\\u" in text else text


def argument_strings(arguments, path: str = "", *, keys: bool = False) -> list[tuple[str, str]]:
    """(path, value) for every string inside a tool call's arguments (dict, list or JSON string).

    With `keys` (the forbidden-term search, SPEC §5.3) every object key is a string found too, as
    (path of its member, key), and each duplicate key of a JSON string keeps its value. Without it
    (judged text) only values, as a tool receives them.
    """
    if isinstance(arguments, str):
        try:
            decoded = load_json_members(arguments) if keys else json.loads(arguments)
        except ValueError:
            return [(path or "$", arguments)]
        if isinstance(decoded, str):
            return [(path or "$", decoded)]
        arguments = decoded
    found: list[tuple[str, str]] = []
    if isinstance(arguments, (dict, JSONObject)):
        for key, value in arguments.items() if isinstance(arguments, dict) else arguments:
            sub = f"{path}.{key}" if path else str(key)
            if keys:
                found.append((sub, str(key)))
            found.extend(argument_strings(value, sub, keys=keys) if not isinstance(value, str) else [(sub, value)])
    elif isinstance(arguments, list):
        for index, value in enumerate(arguments):
            sub = f"{path}[{index}]"
            found.extend(argument_strings(value, sub, keys=keys) if not isinstance(value, str) else [(sub, value)])
    return found


# Deeper JSON is refused at the API (400) and read as plain text by redaction: every walker here
# recurses once per level, and 100 levels is far beyond any answer or tool call a model writes.
MAX_JSON_DEPTH = 100


def nested_deeper_than(node, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether decoded JSON nests objects and arrays more than `limit` levels (checked without recursion)."""
    stack = [(node, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, JSONObject):
            children = [value for _, value in item]
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


# A JSON string (skipped whole, escapes included) or a bracket: what nesting is read from without parsing.
_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_NESTING_BYTES = re.compile(_NESTING.pattern.encode())
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1, ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_beyond(raw: str | bytes, limit: int) -> str | None:
    """Read without parsing (so before anything recurses): None when the JSON text `raw` nests objects and
    arrays at most `limit` levels, else where it goes deeper -- the outermost object's member whose value
    does, or "" when the outermost value is not an object. Linear; malformed JSON is left to the parser."""
    opening = "[{" if isinstance(raw, str) else b"[{"
    if raw.count(opening[:1]) + raw.count(opening[1:]) <= limit:
        return None  # fewer brackets than levels: nothing to read
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    # Every step at C speed but the last: escaped backslashes and quotes out, so that every quote left opens
    # or closes a string; the strings out (every other piece between quotes); then all but the brackets.
    # A Python loop over the tokens would cost ten times what parsing the body does.
    outside = b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    if max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= limit:
        return None
    return _member_too_deep(raw, limit)


def _member_too_deep(raw: str | bytes, limit: int) -> str:
    """Where `raw` first nests deeper than `limit` (see nesting_beyond): read token by token, once refused."""
    if isinstance(raw, bytes):
        pattern, quote, opener = _NESTING_BYTES, 34, 123  # '"' and '{' as bytes read
    else:
        pattern, quote, opener = _NESTING, '"', "{"
    depth = 0
    outermost = member = None
    for match in pattern.finditer(raw):
        token = match.group()
        first = token[0]
        if first == quote:
            if depth == 1:
                member = token  # at the outermost level, a container's member name comes right before it
        elif _STEP[first] > 0:
            depth += 1
            if outermost is None:
                outermost = first
            if depth > limit:
                if outermost != opener or member is None:
                    return ""
                name = member.decode("utf-8", "replace") if isinstance(member, bytes) else member
                try:
                    return json.loads(name)
                except ValueError:
                    return name[1:-1]
        else:
            depth -= 1
    return ""  # unbalanced: deeper than the bound all the same
