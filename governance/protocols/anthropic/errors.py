"""Gavel's error body (SPEC §11.1) in Anthropic's shape (§11.7), so the anthropic SDK raises its usual classes.

Pure: plain data in and out. The status stays Gavel's; `error.type` is Anthropic's category for the
status; Gavel's `code` and the first field named (`param`, in the client's own names) ride along in
the error object, which Anthropic's clients read only `type` and `message` of.
"""
from __future__ import annotations

# Anthropic's error category of each status Gavel answers with (anything else ≥ 500 is api_error).
TYPE_OF_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    406: "invalid_request_error",
    409: "invalid_request_error",
    413: "request_too_large",
    415: "invalid_request_error",
    429: "rate_limit_error",
    503: "overloaded_error",
}

# Gavel's request fields as an Anthropic client names them: `configuration` is the `model`, the call
# facts travel in the `gavel` extension object, and the model-call options have Anthropic's names.
CLIENT_NAMES = {
    "configuration": "model",
    "also": "gavel.also",
    "kind": "gavel.kind",
    "read_tools": "gavel.read_tools",
    "site": "gavel.site",
    "language": "gavel.language",
    "stop": "stop_sequences",
    "user": "metadata.user_id",
    "parallel_tool_calls": "tool_choice.disable_parallel_tool_use",
    "reasoning_effort": "output_config.effort",
    "response_format": "output_config.format",
}


def error_type(status: int) -> str:
    if status in TYPE_OF_STATUS:
        return TYPE_OF_STATUS[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def client_name(field: str) -> str:
    """`also[1]` → `gavel.also[1]`, `configuration` → `model`, `stop` → `stop_sequences`; others stay."""
    head, sep, rest = field.partition("[")
    dotted_head, dot, dotted_rest = head.partition(".")
    if dotted_head in CLIENT_NAMES:
        return CLIENT_NAMES[dotted_head] + dot + dotted_rest + sep + rest
    return field


def anthropic_error(status: int, error: dict) -> dict:
    """{"error": {code, message, fields}} → {"type": "error", "error": {type, message, code, param}}.

    The field messages are appended to the message: Anthropic's clients show `message` only, and bad
    input must name its field.
    """
    fields = {client_name(name): [str(m) for m in messages] for name, messages in (error.get("fields") or {}).items()}
    message = str(error.get("message") or "")
    details = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items())
    if details:
        message = f"{message} ({details})"
    param = next((name for name in fields if name != "non_field_errors"), None)
    return {"type": "error", "error": {"type": error_type(status), "message": message,
                                       "code": error.get("code") or "error", "param": param}}
