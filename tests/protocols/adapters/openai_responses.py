"""The OpenAI Responses API (SPEC §11.6) as a conformance adapter: `POST /openai/v1/responses`."""
from __future__ import annotations

import json

from tests.protocols.adapters import Ask, Outcome, sse_events

FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def _error(error: dict) -> dict:
    return {key: error.get(key) for key in ("type", "code", "param", "message")}


def _read_output(result: Outcome, output: list) -> None:
    for item in output:
        if item["type"] == "message":
            for part in item["content"]:
                if part["type"] == "output_text":
                    result.text += part["text"]
                elif part["type"] == "refusal":
                    result.message = part["refusal"]
        elif item["type"] == "function_call":
            result.tool_calls.append({"name": item["name"], "arguments": json.loads(item["arguments"] or "{}")})


class OpenAIResponses:
    name = "openai_responses"
    unsupported = ("previous_response_id", "resp_earlier")

    def build(self, ask: Ask, *, stream: bool, token: str) -> tuple[str, dict, dict]:
        body = {"model": ask.model, "input": [{"role": "user", "content": [{"type": "input_text",
                                                                            "text": ask.prompt}]}],
                "stream": stream}
        if ask.system:
            body["instructions"] = ask.system
        if ask.tools:
            body["tools"] = [{"type": "function", "name": tool.name, "description": tool.description,
                              "parameters": tool.parameters} for tool in ask.tools]
        if ask.tool_choice:
            body["tool_choice"] = ask.tool_choice
        if ask.json_schema:
            body["text"] = {"format": {"type": "json_schema", "name": "answer", "schema": ask.json_schema}}
        if ask.unsupported:
            body[self.unsupported[0]] = self.unsupported[1]
        return "/openai/v1/responses", {"Authorization": f"Bearer {token}"}, body

    def read(self, status: int, content: bytes, *, stream: bool) -> Outcome:
        result = Outcome(status=status, raw=content)
        if status != 200 or not stream:
            body = json.loads(content)
            if "error" in body and body["error"] is not None and "output" not in body:
                result.error = _error(body["error"])
                result.message = result.error["message"]
                return result
            _read_output(result, body["output"])
            result.gavel = body.get("gavel")
        else:
            deltas = []
            for name, data in sse_events(content):
                event = json.loads(data)
                assert event["type"] == name, (name, event["type"])
                if name == "response.output_text.delta":
                    deltas.append(event["delta"])
                elif name == "error":
                    result.error = _error({**event, "type": "stream_error"})
                elif name in FINAL_EVENTS:
                    _read_output(result, event["response"]["output"])
                    result.gavel = event["response"].get("gavel")
            # The final response's items say what the deltas said.
            blocked = (result.gavel or {}).get("outcome") == "blocked"
            assert result.text == ("" if blocked else "".join(deltas)), (result.text, deltas)
            result.text, result.text_chunks = "".join(deltas), len(deltas)
        if result.gavel:
            result.outcome = result.gavel["outcome"]
            result.hints = result.gavel.get("hints") or []
        return result


ADAPTER = OpenAIResponses()
