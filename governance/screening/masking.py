"""Secret masking of any JSON-shaped value (SPEC §9): every string, object keys included, a string that is
itself a JSON document masked in its decoded strings. Pure: no Django, plain data in and out."""
from governance.screening import text as textlib
from governance.screening.redaction import redact


def mask_node(node, kinds: list[str] | None = None):
    """`node` in the same shape (str, dict, JSONObject, list) with every string masked; the kinds of
    what was masked are appended to `kinds` (never the values)."""
    kinds = [] if kinds is None else kinds
    if isinstance(node, str):
        # A string that is itself a JSON document is masked in its decoded strings: escapes hide nothing.
        scrubbed = mask_json(node, kinds)
        if scrubbed is not None:
            return scrubbed
        result = redact(node)
        kinds.extend(f.kind for f in result.findings)
        return result.text
    if isinstance(node, dict):
        # Two keys that mask alike keep the last value, as a JSON object with a repeated key read into a dict.
        return {mask_node(key, kinds): mask_node(value, kinds) for key, value in node.items()}
    if isinstance(node, textlib.JSONObject):
        return textlib.JSONObject((mask_node(key, kinds), mask_node(value, kinds)) for key, value in node)
    if isinstance(node, (list, tuple)):
        return [mask_node(item, kinds) for item in node]
    return node


def mask_json(text: str, kinds: list[str]) -> str | None:
    """A JSON document with every decoded string masked; None when `text` is not JSON. Re-serialised
    only when something was masked: a clean document comes back byte-identical."""
    try:
        document = textlib.load_json_members(text)
    except (ValueError, RecursionError):
        # Too deeply nested to decode is no document either: it is masked as plain text.
        return None
    if textlib.nested_deeper_than(document):
        return None  # decodable, yet too deep to walk: plain text too
    found: list[str] = []
    scrubbed = mask_node(document, found)
    if not found:
        return text
    kinds.extend(found)
    return textlib.dump_json_members(scrubbed)


def masked(node):
    """`node` with every secret masked (what a record stores and a model is sent)."""
    return mask_node(node)
