"""Pipeline steps that live in the core: secret redaction. (Pattern rules and citations: snippets/guardrail.py.)"""
from governance import messages
from governance.screening.masking import mask_json as _scrub_json
from governance.screening.masking import mask_node as _scrub
from governance.screening.redaction import redact
from governance.screening.text import decode_unicode_escapes


def redact_secrets(screening) -> None:
    """Mask key- and token-shaped strings in the answer and every tool argument (SPEC §9). Always on.

    A JSON answer is masked in its decoded strings first (escapes hide nothing), then as delivered. An
    answer that was to be JSON and does not parse is masked as text; when its `\\u` escapes hide a key,
    it is delivered with them decoded, the key masked. A tool call's name and id are masked like its
    arguments (SPEC §11.8).
    """
    kinds: list[str] = []
    text = screening.output.text
    if screening.output.format == "json":
        scrubbed = _scrub_json(text, kinds)
        if scrubbed is not None:
            text = scrubbed
        else:
            text = _escapes_hiding_a_key(text)
    result = redact(text)
    kinds.extend(f.kind for f in result.findings)
    screening.output.text = result.text
    for call in screening.output.tool_calls:
        call.name = _scrub(call.name, kinds)
        if call.id:
            call.id = _scrub(call.id, kinds)
        call.arguments = _scrub(call.arguments, kinds)
    if not kinds:
        screening.check("secret_redaction", "passed")
        return
    screening.check("secret_redaction", "redacted")
    # Which shapes were masked and how many: facts, never the values.
    counts = {kind: kinds.count(kind) for kind in sorted(set(kinds))}
    screening.record("redacted", "secret_redaction", {"kinds": counts, "count": len(kinds)})


def _escapes_hiding_a_key(text: str) -> str:
    """`text` with its `\\u` escapes decoded when that shows a key redaction would not find otherwise
    (a lenient JSON parser decodes them); else `text` as it is."""
    decoded = decode_unicode_escapes(text)
    if decoded != text and len(redact(decoded).findings) > len(redact(text).findings):
        return decoded
    return text
