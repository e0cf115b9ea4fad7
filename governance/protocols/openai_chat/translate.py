"""Gavel's completion response and stream steps as OpenAI `chat.completion` objects and chunk streams.

Pure: plain data in, plain data out. The governance result rides along in a `gavel` member;
the answer's text, tool calls and usage go where OpenAI clients look for them (SPEC §11.5). For a
consumer whose blocks show as a message (SPEC §11.9), a block is `finish_reason: "stop"` with the block
message as the content; for one that wants hints as a note, the note follows the delivered text
(governance/protocols/presentation.py, asked by the views: this module stays pure). `gavel.block` and
the headers say the outcome either way.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from governance.protocols.openai_chat.errors import openai_error

# What the `gavel` member carries: the §11.1 response without the parts OpenAI's own fields hold.
STREAM_ERROR_STATUS = {"provider_error": 502, "provider_timeout": 504}
GAVEL_KEYS = ("id", "policy_version", "outcome", "hints", "block", "verification", "checks", "completion")


def _no_note(body: dict) -> str:
    return ""


@dataclass(frozen=True)
class Shown:
    """How an answer is shown to the consumer who asked (SPEC §11.9, decided by presentation.py in the
    view): a block as a normal finished answer of Gavel's message, the hint note after the delivered
    text; and, on the Responses API, the names the client declared its namespaced functions under
    (offered name → (namespace, name))."""

    blocks_as_message: bool = False
    note: Callable[[dict], str] = _no_note
    namespaces: dict = field(default_factory=dict)


PLAIN = Shown()


def gavel_member(body: dict) -> dict:
    return {key: body.get(key) for key in GAVEL_KEYS}


def tool_calls_of(calls: Iterable[dict]) -> list[dict]:
    """Gavel's tool calls ({id, name, arguments}) in OpenAI's shape, arguments as a JSON string."""
    result = []
    for index, call in enumerate(calls):
        arguments = call.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        result.append({"id": call.get("id") or f"call_{index + 1}", "type": "function",
                       "function": {"name": call["name"], "arguments": arguments}})
    return result


def usage_of(body: dict) -> dict:
    usage = (body.get("completion") or {}).get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": int(usage.get("total_tokens") or prompt + completion)}


def finish_reason(body: dict, tool_calls: list, shown: Shown = PLAIN) -> str:
    if body.get("outcome") == "blocked":
        return "stop" if shown.blocks_as_message else "content_filter"
    return "tool_calls" if tool_calls else "stop"


def refusal_of(body: dict) -> str | None:
    """The block's message for the person who asked, where OpenAI clients look for a refusal."""
    block = body.get("block")
    return block.get("message") if block else None


def completion_id(correlation_id: str) -> str:
    return f"chatcmpl-{correlation_id}"


def delivered_text(body: dict, shown: Shown = PLAIN) -> str | None:
    """The content a person reads: the answer and the hint note a consumer asked for; when blocked, null
    (a refusal) or Gavel's message (a consumer whose blocks show as a message)."""
    if body.get("outcome") == "blocked":
        return (refusal_of(body) or "") if shown.blocks_as_message else None
    note = shown.note(body)
    return body["text"] + note if body.get("text") else (note.lstrip() or body.get("text", ""))


def chat_completion(body: dict, *, model: str, created: int, shown: Shown = PLAIN) -> dict:
    """A `chat.completion` for one §11.1 completion response; a block is content_filter, content null
    (or stop, content the block message, for a consumer who asked: Shown)."""
    blocked = body.get("outcome") == "blocked"
    calls = [] if blocked else tool_calls_of(body.get("tool_calls") or [])
    as_message = blocked and shown.blocks_as_message
    message = {"role": "assistant", "content": delivered_text(body, shown),
               "refusal": None if as_message else refusal_of(body)}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": completion_id(body["id"]),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish_reason(body, calls, shown)}],
        "usage": usage_of(body),
        "gavel": gavel_member(body),
    }


def chunk_stream(steps: Iterable[tuple[str, dict]], *, correlation_id: str, model: str, created: int,
                 shown: Shown = PLAIN) -> Iterator[str]:
    """The `data:` lines of an OpenAI chunk stream for one run of completions.stream_steps.

    A `delta` step is a content chunk (a held stream has one, after its verdict); `hints` and
    `blocked` are carried by the last chunk, whose `gavel` member is the `done` step; an `error`
    step is an OpenAI error line (the SDK raises it), still followed by that last chunk; then
    `[DONE]`. A block shown as a message is one content chunk of the block message, then `stop`; a hint
    note is one more content chunk before the last.
    """
    ident = completion_id(correlation_id)
    role_sent = False

    def line(payload: dict) -> str:
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def chunk(delta: dict, finish: str | None = None, **extra) -> str:
        nonlocal role_sent
        if not role_sent:
            delta = {"role": "assistant", **delta}
            role_sent = True
        return line({"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                     "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra})

    sent_text = False
    for name, data in steps:
        if name == "delta":
            if data["text"]:
                sent_text = True
                yield chunk({"content": data["text"]})
        elif name == "error":
            # Gavel's stream error carries no HTTP status: the one a response would have had.
            status = STREAM_ERROR_STATUS.get(data["error"]["code"], 500)
            yield line(openai_error(status, data["error"]))
        elif name == "done":
            blocked = data.get("outcome") == "blocked"
            as_message = blocked and shown.blocks_as_message
            calls = [] if blocked else tool_calls_of(data.get("tool_calls") or [])
            if as_message:
                yield chunk({"content": refusal_of(data) or ""})
            note = "" if blocked else shown.note(data)
            if note:
                yield chunk({"content": note if sent_text else note.lstrip()})
            if calls:
                yield chunk({"tool_calls": [{"index": i, **call} for i, call in enumerate(calls)]})
            last = {"content": None, "refusal": refusal_of(data)} if blocked and not as_message else {}
            yield chunk(last, finish_reason(data, calls, shown), usage=usage_of(data), gavel=gavel_member(data))
    yield "data: [DONE]\n\n"
