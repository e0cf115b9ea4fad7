"""Pipeline steps that live in the core: secret redaction, pattern rules, citations."""
import json

from governance import messages
from governance.redaction import redact


def _redact_arguments(arguments, kinds: list[str]):
    """Redact every string inside tool-call arguments, keeping their shape."""
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except ValueError:
            result = redact(arguments)
            kinds.extend(f.kind for f in result.findings)
            return result.text
        if isinstance(decoded, (dict, list)):
            redacted = _redact_arguments(decoded, kinds)
            return json.dumps(redacted, ensure_ascii=False) if redacted != decoded else arguments
        result = redact(arguments)
        kinds.extend(f.kind for f in result.findings)
        return result.text
    if isinstance(arguments, dict):
        return {key: _redact_arguments(value, kinds) for key, value in arguments.items()}
    if isinstance(arguments, list):
        return [_redact_arguments(value, kinds) for value in arguments]
    return arguments


def redact_secrets(screening) -> None:
    """Mask key- and token-shaped strings in the answer and every tool argument (SPEC §9). Always on."""
    kinds: list[str] = []
    result = redact(screening.output.text)
    if result.findings:
        screening.output.text = result.text
        kinds.extend(f.kind for f in result.findings)
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
