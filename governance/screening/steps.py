"""Pipeline steps that live in the core: secret redaction. (Pattern rules and citations: snippets/guardrail.py.)"""
from governance import messages
from governance.screening import text as textlib
from governance.screening.redaction import redact


def _scrub(node, kinds: list[str]):
    """`node` in the same shape (str, dict, JSONObject, list) with every string masked, object keys
    included: the one walker for JSON answers and tool arguments alike (SPEC §9)."""
    if isinstance(node, str):
        # A string that is itself a JSON document is masked in its decoded strings: escapes hide nothing.
        scrubbed = _scrub_json(node, kinds)
        if scrubbed is not None:
            return scrubbed
        result = redact(node)
        kinds.extend(f.kind for f in result.findings)
        return result.text
    if isinstance(node, dict):
        # Two keys that mask alike keep the last value, as a JSON object with a repeated key read into a dict.
        return {_scrub(key, kinds): _scrub(value, kinds) for key, value in node.items()}
    if isinstance(node, textlib.JSONObject):
        return textlib.JSONObject((_scrub(key, kinds), _scrub(value, kinds)) for key, value in node)
    if isinstance(node, list):
        return [_scrub(item, kinds) for item in node]
    return node


def _scrub_json(text: str, kinds: list[str]) -> str | None:
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
    scrubbed = _scrub(document, found)
    if not found:
        return text
    kinds.extend(found)
    return textlib.dump_json_members(scrubbed)


def redact_secrets(screening) -> None:
    """Mask key- and token-shaped strings in the answer and every tool argument (SPEC §9). Always on.

    A JSON answer is masked in its decoded strings first (escapes hide nothing), then as delivered.
    """
    kinds: list[str] = []
    text = screening.output.text
    if screening.output.format == "json":
        decoded = _scrub_json(text, kinds)
        if decoded is not None:
            text = decoded
    result = redact(text)
    kinds.extend(f.kind for f in result.findings)
    screening.output.text = result.text
    for call in screening.output.tool_calls:
        call.arguments = _scrub(call.arguments, kinds)
    if not kinds:
        screening.check("secret_redaction", "passed")
        return
    screening.check("secret_redaction", "redacted")
    # Which shapes were masked and how many: facts, never the values.
    counts = {kind: kinds.count(kind) for kind in sorted(set(kinds))}
    screening.record("redacted", "secret_redaction", {"kinds": counts, "count": len(kinds)})

