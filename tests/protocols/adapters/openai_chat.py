"""OpenAI Chat Completions (SPEC §11.5) as a conformance adapter: `POST /openai/v1/chat/completions`."""
from __future__ import annotations

import json

from tests.protocols.adapters import Ask, Outcome, sse_events


def _arguments(text: str) -> dict:
    return json.loads(text) if text else {}


def _error(body: dict) -> dict:
    error = body["error"]
    return {key: error.get(key) for key in ("type", "code", "param", "message")}


class OpenAIChat:
    name = "openai_chat"
    unsupported = ("n", 2)

    def build(self, ask: Ask, *, stream: bool, token: str) -> tuple[str, dict, dict]:
        messages = [{"role": "system", "content": ask.system}] if ask.system else []
        messages.append({"role": "user", "content": ask.prompt})
        body = {"model": ask.model, "messages": messages, "stream": stream}
        if ask.tools:
            body["tools"] = [{"type": "function", "function": {
                "name": tool.name, "description": tool.description, "parameters": tool.parameters}}
                for tool in ask.tools]
        if ask.tool_choice:
            body["tool_choice"] = ask.tool_choice
        if ask.json_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer",
                                                                              "schema": ask.json_schema}}
        if ask.unsupported:
            body[self.unsupported[0]] = self.unsupported[1]
        return "/openai/v1/chat/completions", {"Authorization": f"Bearer {token}"}, body

    def read(self, status: int, content: bytes, *, stream: bool) -> Outcome:
        result = Outcome(status=status, raw=content)
        if status != 200 or not stream:
            body = json.loads(content)
            if "error" in body:
                result.error = _error(body)
                result.message = result.error["message"]
                return result
            message = body["choices"][0]["message"]
            result.text = message.get("content") or ""
            result.tool_calls = [{"name": c["function"]["name"], "arguments": _arguments(c["function"]["arguments"])}
                                 for c in message.get("tool_calls") or []]
            result.message = message.get("refusal")
            result.gavel = body.get("gavel")
        else:
            calls: dict[int, dict] = {}
            for _name, data in sse_events(content):
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    result.error = _error(chunk)
                    continue
                delta = chunk["choices"][0]["delta"]
                if delta.get("content"):
                    result.text += delta["content"]
                    result.text_chunks += 1
                if delta.get("refusal"):
                    result.message = delta["refusal"]
                for call in delta.get("tool_calls") or []:
                    entry = calls.setdefault(call["index"], {"name": "", "arguments": ""})
                    entry["name"] += call.get("function", {}).get("name") or ""
                    entry["arguments"] += call.get("function", {}).get("arguments") or ""
                if "gavel" in chunk:
                    result.gavel = chunk["gavel"]
            result.tool_calls = [{"name": c["name"], "arguments": _arguments(c["arguments"])}
                                 for _i, c in sorted(calls.items())]
        if result.gavel:
            result.outcome = result.gavel["outcome"]
            result.hints = result.gavel.get("hints") or []
        return result


ADAPTER = OpenAIChat()
