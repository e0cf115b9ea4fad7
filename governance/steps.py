"""Pipeline steps that live in the core: secret redaction, pattern rules, citations."""
from governance import messages
from governance import text as textlib
from governance.redaction import redact


def _redact_json(text: str, kinds: list[str]) -> str | None:
    """A JSON document with every decoded string masked, keys included, so a `\\u0073k-…` escape hides
    nothing; None when `text` is not JSON. Re-serialised only when something was masked: a clean
    document comes back byte-identical."""
    try:
        document = textlib.load_json_members(text)
    except ValueError:
        return None
    found: list[str] = []

    def scrub(node):
        if isinstance(node, str):
            result = redact(node)
            found.extend(f.kind for f in result.findings)
            return result.text
        if isinstance(node, textlib.JSONObject):
            return textlib.JSONObject((scrub(key), scrub(value)) for key, value in node)
        if isinstance(node, list):
            return [scrub(item) for item in node]
        return node

    scrubbed = scrub(document)
    if not found:
        return text
    kinds.extend(found)
    return textlib.dump_json_members(scrubbed)


def _redact_arguments(arguments, kinds: list[str]):
    """Redact every string inside tool-call arguments, keeping their shape."""
    if isinstance(arguments, str):
        redacted = _redact_json(arguments, kinds)
        if redacted is not None:
            return redacted
        result = redact(arguments)
        kinds.extend(f.kind for f in result.findings)
        return result.text
    if isinstance(arguments, dict):
        return {key: _redact_arguments(value, kinds) for key, value in arguments.items()}
    if isinstance(arguments, list):
        return [_redact_arguments(value, kinds) for value in arguments]
    return arguments


def redact_secrets(screening) -> None:
    """Mask key- and token-shaped strings in the answer and every tool argument (SPEC §9). Always on.

    A JSON answer is masked in its decoded strings first (escapes hide nothing), then as delivered.
    """
    kinds: list[str] = []
    text = screening.output.text
    if screening.output.format == "json":
        decoded = _redact_json(text, kinds)
        if decoded is not None:
            text = decoded
    result = redact(text)
    kinds.extend(f.kind for f in result.findings)
    screening.output.text = result.text
    for call in screening.output.tool_calls:
        call.arguments = _redact_arguments(call.arguments, kinds)
    if not kinds:
        screening.check("secret_redaction", "passed")
        return
    screening.check("secret_redaction", "redacted")
    # Which shapes were masked and how many: facts, never the values.
    counts = {kind: kinds.count(kind) for kind in sorted(set(kinds))}
    screening.record("redacted", "secret_redaction", {"kinds": counts, "count": len(kinds)})


def check_pattern_rules(screening) -> None:
    """Machine-checkable pattern rules (SPEC §6.5). No pattern-rule records exist in this version."""
    screening.check("pattern_rules", "skipped", "no_rules")


def check_citations(screening) -> None:
    """Citations of pattern rules (SPEC §6.6). Without pattern rules there is nothing to cite."""
    screening.check("citations", "skipped", "no_rules")
