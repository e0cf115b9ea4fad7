"""Pipeline steps that live in the core: secret redaction. (Pattern rules and citations: snippets/guardrail.py.)"""
from governance import messages
from governance.screening.masking import mask_json as _scrub_json
from governance.screening.masking import mask_node as _scrub
from governance.screening.redaction import redact


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

