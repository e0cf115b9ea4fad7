"""Anthropic's Messages API (SPEC §11.7) as a conformance adapter: `POST /anthropic/v1/messages`.

A block is `stop_reason: "refusal"` whose last text block carries the block message (the place an
Anthropic client reads a refusal's words): the adapter reports that block as `message`, not as text.
"""
from __future__ import annotations

import json

from tests.protocols.adapters import Ask, Outcome, sse_events


def _error(body: dict) -> dict:
    error = body["error"]
    return {"type": error.get("type"), "code": error.get("code"), "param": error.get("param"),
            "message": error.get("message")}


class Anthropic:
    name = "anthropic"
    # Passed on to the provider, whose OpenAI route (the suite's provider) does not take it: refused, named.
    unsupported = ("top_k", 5)

    def build(self, ask: Ask, *, stream: bool, token: str) -> tuple[str, dict, dict]:
        body = {"model": ask.model, "max_tokens": 512, "stream": stream,
                "messages": [{"role": "user", "content": [{"type": "text", "text": ask.prompt}]}]}
        if ask.system:
            body["system"] = ask.system
        if ask.tools:
            body["tools"] = [{"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
                             for tool in ask.tools]
        if ask.tool_choice:
            body["tool_choice"] = {"type": ask.tool_choice}
        if ask.json_schema:
            body["output_config"] = {"format": {"type": "json_schema", "schema": ask.json_schema}}
        if ask.unsupported:
            body[self.unsupported[0]] = self.unsupported[1]
        return "/anthropic/v1/messages", {"x-api-key": token, "anthropic-version": "2023-06-01"}, body

    def read(self, status: int, content: bytes, *, stream: bool) -> Outcome:
        result = Outcome(status=status, raw=content)
        blocks: list[dict] = []
        chunks: list[int] = []  # non-empty text deltas per block
        stop_reason = None
        if status != 200 or not stream:
            body = json.loads(content)
            if body.get("type") == "error":
                result.error = _error(body)
                result.message = result.error["message"]
                return result
            blocks = body["content"]
            chunks = [0] * len(blocks)
            stop_reason = body["stop_reason"]
            result.gavel = body.get("gavel")
        else:
            for name, data in sse_events(content):
                event = json.loads(data)
                if name == "error":
                    result.error = _error(event)
                elif name == "content_block_start":
                    blocks.append(dict(event["content_block"], partial_json=""))
                    chunks.append(0)
                elif name == "content_block_delta":
                    delta = event["delta"]
                    if delta["type"] == "text_delta" and delta["text"]:
                        blocks[event["index"]]["text"] += delta["text"]
                        chunks[event["index"]] += 1
                    elif delta["type"] == "input_json_delta":
                        blocks[event["index"]]["partial_json"] += delta["partial_json"]
                elif name == "message_delta":
                    stop_reason = event["delta"]["stop_reason"]
                    result.gavel = event.get("gavel")
            for block in blocks:
                if block["type"] == "tool_use":
                    block["input"] = json.loads(block["partial_json"]) if block["partial_json"] else {}
        texts = [i for i, block in enumerate(blocks) if block["type"] == "text"]
        if stop_reason == "refusal" and texts:
            result.message = blocks[texts[-1]]["text"]
            texts = texts[:-1]
        result.text = "".join(blocks[i]["text"] for i in texts)
        result.text_chunks = sum(chunks[i] for i in texts)
        result.tool_calls = [{"name": b["name"], "arguments": b["input"]} for b in blocks if b["type"] == "tool_use"]
        if result.gavel:
            result.outcome = result.gavel["outcome"]
            result.hints = result.gavel.get("hints") or []
        return result


ADAPTER = Anthropic()
