"""Gavel's completion response and stream steps as Responses API `response` objects and typed events.

Pure: plain data in, plain data out. The answer's text becomes a `message` item with an `output_text`
part, its tool calls `function_call` items (a namespaced function's under the names the client
declared); a block is `status: "incomplete"`, `incomplete_details: {"reason": "content_filter"}` and
one message whose only part is a `refusal` carrying the block message — no text and no function call
of the blocked answer (SPEC §11.6). For a consumer whose blocks show as a message (SPEC §11.9) a block
is a `completed` response whose one message's `output_text` is the block message; for one that wants
hints as a note, the note follows the delivered text (openai_chat.translate.Shown). The governance result rides
along in a `gavel` member, the same as on Chat Completions (§11.5).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from governance.protocols.openai_chat.errors import openai_error
from governance.protocols.openai_chat.translate import PLAIN, STREAM_ERROR_STATUS, Shown, gavel_member, refusal_of

# What a response echoes of its request when the client did not say (OpenAI's defaults).
DEFAULTS = {
    "instructions": None, "max_output_tokens": None, "metadata": {}, "parallel_tool_calls": True,
    "reasoning": {"effort": None, "summary": None}, "temperature": None, "text": {"format": {"type": "text"}},
    "tool_choice": "auto", "tools": [], "top_p": None, "truncation": "disabled", "user": None,
}


def response_id(correlation_id: str) -> str:
    return f"resp_{correlation_id}"


def message_id(correlation_id: str) -> str:
    return f"msg_{correlation_id}"


def usage_of(body: dict) -> dict:
    usage = (body.get("completion") or {}).get("usage") or {}
    given = int(usage.get("prompt_tokens") or 0)
    written = int(usage.get("completion_tokens") or 0)
    return {"input_tokens": given, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": written, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": int(usage.get("total_tokens") or given + written)}


def function_calls_of(body: dict, correlation_id: str, namespaces: dict | None = None) -> list[dict]:
    """The answer's tool calls as `function_call` items (none when blocked), arguments as JSON text; a
    call to a namespaced function (`namespaces`: offered name → (namespace, name)) carries the names the
    client declared, `name` and `namespace`."""
    if body.get("outcome") == "blocked":
        return []
    namespaces = namespaces or {}
    items = []
    for index, call in enumerate(body.get("tool_calls") or []):
        arguments = call.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        item = {"type": "function_call", "id": f"fc_{correlation_id}_{index + 1}",
                "call_id": call.get("id") or f"call_{index + 1}", "name": call["name"],
                "arguments": arguments, "status": "completed"}
        if call["name"] in namespaces:
            item["namespace"], item["name"] = namespaces[call["name"]]
        items.append(item)
    return items


def text_part(text: str) -> dict:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(correlation_id: str, parts: list[dict], status: str = "completed") -> dict:
    return {"type": "message", "id": message_id(correlation_id), "status": status, "role": "assistant",
            "content": parts}


def delivered_text(body: dict, shown: Shown) -> str:
    """The text a person reads of an answer that was not blocked: the answer, then the hint note if asked."""
    text = (body.get("text") or "") + shown.note(body)
    return text if body.get("text") else text.lstrip()


def output_of(body: dict, correlation_id: str, shown: Shown = PLAIN) -> list[dict]:
    """The output items of a finished run: a refusal message when blocked (or a message of Gavel's block
    message, for a consumer who asked), else the text (if any) and the function calls."""
    if body.get("outcome") == "blocked":
        if shown.blocks_as_message:
            return [message_item(correlation_id, [text_part(refusal_of(body) or "")])]
        return [message_item(correlation_id, [{"type": "refusal", "refusal": refusal_of(body) or ""}],
                             "incomplete")]
    text = delivered_text(body, shown)
    output = [message_item(correlation_id, [text_part(text)])] if text else []
    return output + function_calls_of(body, correlation_id, shown.namespaces)


def envelope(correlation_id: str, *, model: str, created_at: int, echo: dict, status: str) -> dict:
    """The members every response object carries, whatever its state."""
    return {"id": response_id(correlation_id), "object": "response", "created_at": created_at, "status": status,
            "error": None, "incomplete_details": None, "model": model, "output": [],
            **{key: echo.get(key, default) if echo.get(key) is not None else default
               for key, default in DEFAULTS.items()},
            "previous_response_id": None, "store": False, "usage": None}


def finished(body: dict, correlation_id: str, *, model: str, created_at: int, echo: dict, output=None,
             shown: Shown = PLAIN) -> dict:
    """The response object of a finished run (`completed`, or `incomplete` with content_filter; a block
    shown as a message is `completed`)."""
    blocked = body.get("outcome") == "blocked" and not shown.blocks_as_message
    response = envelope(correlation_id, model=model, created_at=created_at, echo=echo,
                        status="incomplete" if blocked else "completed")
    if blocked:
        # `message` is Gavel's: clients that raise on an incomplete response (the Agents SDK) print
        # incomplete_details, so the block message reaches the app in the exception's text.
        response["incomplete_details"] = {"reason": "content_filter", "message": refusal_of(body) or ""}
    response["output"] = output if output is not None else output_of(body, correlation_id, shown)
    response["usage"] = usage_of(body)
    response["gavel"] = gavel_member(body)
    return response


def response_object(body: dict, *, model: str, created_at: int, echo: dict, shown: Shown = PLAIN) -> dict:
    """A `response` for one §11.1 completion response."""
    return finished(body, body["id"], model=model, created_at=created_at, echo=echo, shown=shown)


class _Events:
    """Typed events with their sequence numbers, in OpenAI's SSE framing (`event:` then one `data:`)."""

    def __init__(self):
        self.sequence = 0

    def __call__(self, kind: str, **data) -> str:
        payload = {"type": kind, "sequence_number": self.sequence, **data}
        self.sequence += 1
        return f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"


def event_stream(steps: Iterable[tuple[str, dict]], *, correlation_id: str, model: str, created_at: int,
                 echo: dict, on_output=None, shown: Shown = PLAIN) -> Iterator[str]:
    """The typed events of a streamed response for one run of completions.stream_steps.

    A held stream's steps are its verdict: one `delta` (or `blocked`) then `done`; a live stream's
    deltas flow as `response.output_text.delta` as they come. At `done` the message is closed, the
    function calls are sent as items, and the last event — `response.completed`, or
    `response.incomplete` for a block — carries the response with `gavel`. A stream `error` is an
    `error` event followed by `response.failed` (still with `gavel`). `on_output` is handed the
    output items before the last event. A block shown as a message is the block message as text and
    `response.completed`; a hint note is one more text delta before the text is done.
    """
    event = _Events()
    head = envelope(correlation_id, model=model, created_at=created_at, echo=echo, status="in_progress")
    yield event("response.created", response=head)
    yield event("response.in_progress", response=head)
    item_id = message_id(correlation_id)
    opened = False
    text: list[str] = []
    output: list[dict] = []
    failure = None

    def open_message() -> Iterator[str]:
        yield event("response.output_item.added", output_index=0,
                    item=message_item(correlation_id, [], "in_progress"))
        yield event("response.content_part.added", item_id=item_id, output_index=0, content_index=0,
                    part=text_part(""))

    for name, data in steps:
        if name == "delta" and data["text"]:
            if not opened:
                yield from open_message()
                opened = True
            text.append(data["text"])
            yield event("response.output_text.delta", item_id=item_id, output_index=0, content_index=0,
                        delta=data["text"], logprobs=[])
        elif name == "error":
            failure = data["error"]
            error = openai_error(STREAM_ERROR_STATUS.get(failure["code"], 500), failure)["error"]
            yield event("error", code=error["code"], message=error["message"], param=error["param"])
        elif name == "done":
            blocked = data.get("outcome") == "blocked"
            if blocked and shown.blocks_as_message:
                # Gavel's message as the answer's text (a part of its own after what a live stream sent).
                message, index = refusal_of(data) or "", 1 if opened else 0
                if not opened:
                    yield event("response.output_item.added", output_index=0,
                                item=message_item(correlation_id, [], "in_progress"))
                yield event("response.content_part.added", item_id=item_id, output_index=0, content_index=index,
                            part=text_part(""))
                yield event("response.output_text.delta", item_id=item_id, output_index=0, content_index=index,
                            delta=message, logprobs=[])
                yield event("response.output_text.done", item_id=item_id, output_index=0, content_index=index,
                            text=message, logprobs=[])
                yield event("response.content_part.done", item_id=item_id, output_index=0, content_index=index,
                            part=text_part(message))
                item = message_item(correlation_id, [text_part(message)])
                yield event("response.output_item.done", output_index=0, item=item)
                output.append(item)
            elif blocked:
                # The refusal replaces whatever a live stream sent: the part is a refusal, not text.
                refusal = refusal_of(data) or ""
                part = {"type": "refusal", "refusal": ""}
                if not opened:
                    yield event("response.output_item.added", output_index=0,
                                item=message_item(correlation_id, [], "in_progress"))
                yield event("response.content_part.added", item_id=item_id, output_index=0,
                            content_index=1 if opened else 0, part=part)
                index = 1 if opened else 0
                yield event("response.refusal.delta", item_id=item_id, output_index=0, content_index=index,
                            delta=refusal)
                yield event("response.refusal.done", item_id=item_id, output_index=0, content_index=index,
                            refusal=refusal)
                done_part = {"type": "refusal", "refusal": refusal}
                yield event("response.content_part.done", item_id=item_id, output_index=0, content_index=index,
                            part=done_part)
                item = message_item(correlation_id, [done_part], "incomplete")
                yield event("response.output_item.done", output_index=0, item=item)
                output.append(item)
            else:
                note = shown.note(data)
                if note:
                    if not opened:
                        yield from open_message()
                        opened, note = True, note.lstrip()
                    text.append(note)
                    yield event("response.output_text.delta", item_id=item_id, output_index=0, content_index=0,
                                delta=note, logprobs=[])
                if opened:
                    whole = "".join(text)
                    yield event("response.output_text.done", item_id=item_id, output_index=0, content_index=0,
                                text=whole, logprobs=[])
                    yield event("response.content_part.done", item_id=item_id, output_index=0, content_index=0,
                                part=text_part(whole))
                    item = message_item(correlation_id, [text_part(whole)])
                    yield event("response.output_item.done", output_index=0, item=item)
                    output.append(item)
                for call in function_calls_of(data, correlation_id, shown.namespaces):
                    index = len(output)
                    yield event("response.output_item.added", output_index=index,
                                item={**call, "arguments": "", "status": "in_progress"})
                    yield event("response.function_call_arguments.delta", item_id=call["id"], output_index=index,
                                delta=call["arguments"])
                    yield event("response.function_call_arguments.done", item_id=call["id"], output_index=index,
                                name=call["name"], arguments=call["arguments"])
                    yield event("response.output_item.done", output_index=index, item=call)
                    output.append(call)
            response = finished(data, correlation_id, model=model, created_at=created_at, echo=echo, output=output,
                                shown=shown)
            if on_output is not None:
                on_output(output)
            if failure is not None:
                response["status"] = "failed"
                response["error"] = {"code": failure["code"], "message": failure["message"]}
                response["incomplete_details"] = None
                yield event("response.failed", response=response)
            elif blocked and not shown.blocks_as_message:
                yield event("response.incomplete", response=response)
            else:
                yield event("response.completed", response=response)
