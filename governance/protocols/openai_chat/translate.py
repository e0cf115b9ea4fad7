"""Gavel's completion response and stream steps as OpenAI `chat.completion` objects and chunk streams.

Pure: plain data in, plain data out. The governance result rides along in a `gavel` member;
the answer's text, tool calls and usage go where OpenAI clients look for them (SPEC §11.5).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from governance.protocols.openai_chat.errors import openai_error

# What the `gavel` member carries: the §11.1 response without the parts OpenAI's own fields hold.
STREAM_ERROR_STATUS = {"provider_error": 502, "provider_timeout": 504}
GAVEL_KEYS = ("id", "policy_version", "outcome", "hints", "block", "verification", "checks", "completion")


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


def finish_reason(body: dict, tool_calls: list) -> str:
    if body.get("outcome") == "blocked":
        return "content_filter"
    return "tool_calls" if tool_calls else "stop"


def refusal_of(body: dict) -> str | None:
    """The block's message for the person who asked, where OpenAI clients look for a refusal."""
    block = body.get("block")
    return block.get("message") if block else None


def completion_id(correlation_id: str) -> str:
    return f"chatcmpl-{correlation_id}"


def chat_completion(body: dict, *, model: str, created: int) -> dict:
    """A `chat.completion` for one §11.1 completion response; a block is content_filter, content null."""
    blocked = body.get("outcome") == "blocked"
    calls = [] if blocked else tool_calls_of(body.get("tool_calls") or [])
    message = {"role": "assistant", "content": None if blocked else body.get("text", ""),
               "refusal": refusal_of(body)}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": completion_id(body["id"]),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason(body, calls)}],
        "usage": usage_of(body),
        "gavel": gavel_member(body),
    }


def chunk_stream(steps: Iterable[tuple[str, dict]], *, correlation_id: str, model: str, created: int) -> Iterator[str]:
    """The `data:` lines of an OpenAI chunk stream for one run of completions.stream_steps.

    A `delta` step is a content chunk (a held stream has one, after its verdict); `hints` and
    `blocked` are carried by the last chunk, whose `gavel` member is the `done` step; an `error`
    step is an OpenAI error line (the SDK raises it), still followed by that last chunk; then
    `[DONE]`.
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

    for name, data in steps:
        if name == "delta":
            if data["text"]:
                yield chunk({"content": data["text"]})
        elif name == "error":
            # Gavel's stream error carries no HTTP status: the one a response would have had.
            status = STREAM_ERROR_STATUS.get(data["error"]["code"], 500)
            yield line(openai_error(status, data["error"]))
        elif name == "done":
            blocked = data.get("outcome") == "blocked"
            calls = [] if blocked else tool_calls_of(data.get("tool_calls") or [])
            if calls:
                yield chunk({"tool_calls": [{"index": i, **call} for i, call in enumerate(calls)]})
            last = {"content": None, "refusal": refusal_of(data)} if blocked else {}
            yield chunk(last, finish_reason(data, calls), usage=usage_of(data), gavel=gavel_member(data))
    yield "data: [DONE]\n\n"
