"""Gavel's error body (SPEC §11.1) in OpenAI's shape (§11.5), so the OpenAI SDK raises its usual classes.

Pure: plain data in and out. The status stays Gavel's; `code` stays Gavel's code; `type` is
OpenAI's category for the status; `param` is the first field named, in the client's own names.
"""
from __future__ import annotations

# OpenAI's error category of each status Gavel answers with (anything else ≥ 500 is api_error).
TYPE_OF_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    406: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}

# Gavel's request fields as the client named them: `configuration` is the OpenAI `model`, the
# other call facts travel in the `gavel` extension object.
CLIENT_NAMES = {
    "configuration": "model",
    "also": "gavel.also",
    "kind": "gavel.kind",
    "read_tools": "gavel.read_tools",
    "site": "gavel.site",
    "language": "gavel.language",
}


def error_type(status: int) -> str:
    if status >= 500:
        return "api_error"
    return TYPE_OF_STATUS.get(status, "invalid_request_error")


def client_name(field: str) -> str:
    """`also[1]` → `gavel.also[1]`, `configuration` → `model`; other paths (`messages[0].role`) stay."""
    head, sep, rest = field.partition("[")
    dotted_head, dot, dotted_rest = head.partition(".")
    if dotted_head in CLIENT_NAMES:
        return CLIENT_NAMES[dotted_head] + dot + dotted_rest + sep + rest
    return field


def openai_error(status: int, error: dict) -> dict:
    """{"error": {code, message, fields}} → {"error": {message, type, param, code}}.

    The field messages are appended to the message: OpenAI clients show `message` and nothing else,
    and bad input must name its field.
    """
    fields = {client_name(name): [str(m) for m in messages] for name, messages in (error.get("fields") or {}).items()}
    message = str(error.get("message") or "")
    details = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in fields.items())
    if details:
        message = f"{message} ({details})"
    param = next((name for name in fields if name != "non_field_errors"), None)
    return {"error": {"message": message, "type": error_type(status), "param": param,
                      "code": error.get("code") or "error"}}
