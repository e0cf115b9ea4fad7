"""Gavel's completion response and stream steps as Anthropic `message` objects and event streams.

Pure: plain data in, plain data out. The answer's text, tool uses and usage go where Anthropic's
clients look for them; the governance result rides along in a `gavel` member (SPEC §11.7). A block
is one text block carrying Gavel's message for the person who asked, with `stop_reason: "refusal"` —
or, for a consumer whose blocks read as a message (SPEC §11.9, governance/protocols/presentation.py),
`end_turn`, a normal finished answer an agent client prints once and does not retry: no blocked text
and no tool use of a blocked answer appears either way. A consumer that takes hints as a note gets it
after the answer's text.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from governance.protocols.anthropic.errors import anthropic_error
from governance.protocols.presentation import block_text, blocks_as_message, hint_note

STREAM_ERROR_STATUS = {"provider_error": 502, "provider_timeout": 504}
GAVEL_KEYS = ("id", "policy_version", "outcome", "hints", "block", "verification", "checks", "completion")


def gavel_member(body: dict) -> dict:
    return {key: body.get(key) for key in GAVEL_KEYS}


def message_id(correlation_id: str) -> str:
    return f"msg_{correlation_id}"


def usage_of(body: dict) -> dict:
    usage = (body.get("completion") or {}).get("usage") or {}
    return {"input_tokens": int(usage.get("prompt_tokens") or 0),
            "output_tokens": int(usage.get("completion_tokens") or 0)}


def blocked(body: dict) -> bool:
    return body.get("outcome") == "blocked"


def block_message(body: dict) -> str:
    return block_text(body)


def tool_uses(body: dict) -> list[dict]:
    """Gavel's tool calls ({id, name, arguments}) as `tool_use` blocks, input an object; none when blocked."""
    if blocked(body):
        return []
    result = []
    for index, call in enumerate(body.get("tool_calls") or []):
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = {"arguments": arguments}
        if not isinstance(arguments, dict):
            arguments = {"arguments": arguments}
        result.append({"type": "tool_use", "id": call.get("id") or f"toolu_{index + 1}", "name": call["name"],
                       "input": arguments})
    return result


def stop_reason(body: dict, uses: list, consumer=None) -> str:
    if blocked(body):
        return "end_turn" if blocks_as_message(consumer) else "refusal"
    return "tool_use" if uses else "end_turn"


def message(body: dict, *, model: str, consumer=None) -> dict:
    """A `message` for one §11.1 completion response, as `consumer` asked blocks and hints to be shown."""
    uses = tool_uses(body)
    if blocked(body):
        content = [{"type": "text", "text": block_message(body)}]
    else:
        text = (body.get("text") or "") + hint_note(body, consumer)
        content = [{"type": "text", "text": text}] if text or not uses else []
        content += uses
    return {"id": message_id(body["id"]), "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason(body, uses, consumer), "stop_sequence": None,
            "usage": usage_of(body), "gavel": gavel_member(body)}


def event(name: str, payload: dict) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **payload}, ensure_ascii=False)}\n\n"


def event_stream(steps: Iterable[tuple[str, dict]], *, correlation_id: str, model: str,
                 consumer=None) -> Iterator[str]:
    """The Server-Sent Events of an Anthropic message stream for one run of completions.stream_steps.

    `message_start` first; each `delta` step is a text_delta of the first text block (a held stream has
    one, after its verdict); at `done`, the tool uses follow as blocks of their own (input as one
    input_json_delta), a block as one text block with its message; `message_delta` carries the
    stop_reason, usage and `gavel`; `message_stop` last. An `error` step is Anthropic's `error` event
    (the SDK raises it). A hint note (a consumer's `hints_as: note`) is the text block's last delta.
    """
    start = {"id": message_id(correlation_id), "type": "message", "role": "assistant", "model": model,
             "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 0, "output_tokens": 0}}
    yield event("message_start", {"message": start})
    index = 0
    text_open = False
    for name, data in steps:
        if name == "delta":
            if not data["text"]:
                continue
            if not text_open:
                yield event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
                text_open = True
            yield event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": data["text"]}})
        elif name == "error":
            status = STREAM_ERROR_STATUS.get(data["error"]["code"], 500)
            body = anthropic_error(status, data["error"])
            yield f"event: error\ndata: {json.dumps(body, ensure_ascii=False)}\n\n"
        elif name == "done":
            note = hint_note(data, consumer)
            if note and not text_open:
                yield event("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
                text_open = True
            if note:
                yield event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": note}})
            if text_open:
                yield event("content_block_stop", {"index": index})
                index += 1
            blocks: list[tuple[dict, dict]] = []
            if blocked(data):
                blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": block_message(data)}))
            for use in tool_uses(data):
                partial = json.dumps(use["input"], ensure_ascii=False)
                blocks.append(({**use, "input": {}}, {"type": "input_json_delta", "partial_json": partial}))
            for start_block, delta in blocks:
                yield event("content_block_start", {"index": index, "content_block": start_block})
                yield event("content_block_delta", {"index": index, "delta": delta})
                yield event("content_block_stop", {"index": index})
                index += 1
            uses = tool_uses(data)
            yield event("message_delta", {"delta": {"stop_reason": stop_reason(data, uses, consumer),
                                                    "stop_sequence": None},
                                          "usage": usage_of(data), "gavel": gavel_member(data)})
    yield event("message_stop", {})
