"""Legacy function calling (`functions`, `function_call`) on the Chat Completions gateway (SPEC §11.5).

Never dropped: a request's `functions` become function tools (so the run offers tools and the
tool-run rules of §8.2 screen the call's arguments), its `function_call` the `tool_choice`, and the
answer's tool call comes back as the legacy `message.function_call` with finish_reason
`function_call`, in a plain answer and in a chunk stream alike. A legacy answer holds one call, so
`parallel_tool_calls` false is asked for unless the client says otherwise.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from django.utils.translation import gettext as _

from governance.errors import BadInput


def as_tools(body) -> tuple[dict, bool]:
    """(the body with `functions` / `function_call` as `tools` / `tool_choice`, whether it was legacy)."""
    if not isinstance(body, dict) or (body.get("functions") is None and body.get("function_call") is None):
        return body, False
    functions, choice = body.get("functions"), body.get("function_call")
    errors: dict = {}
    if body.get("tools") is not None:
        errors["functions"] = [_("Give tools or the legacy functions, not both.")]
    if not isinstance(functions, list) or not functions:
        errors["functions"] = [_("Give a non-empty list of functions (function_call needs them).")]
        functions = []
    for index, function in enumerate(functions):
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) or not function["name"]:
            errors[f"functions[{index}]"] = [_("Give a function: an object with a name.")]
    tool_choice = None
    if choice in ("none", "auto"):
        tool_choice = choice
    elif isinstance(choice, dict) and isinstance(choice.get("name"), str) and choice["name"]:
        tool_choice = {"type": "function", "function": {"name": choice["name"]}}
    elif choice is not None:
        errors["function_call"] = [_("Give none, auto or {\"name\": …}.")]
    if errors:
        raise BadInput(_("The request has invalid fields."), fields=errors)
    rewritten = {key: value for key, value in body.items() if key not in ("functions", "function_call")}
    rewritten["tools"] = [{"type": "function", "function": dict(function)} for function in functions]
    if tool_choice is not None:
        rewritten["tool_choice"] = tool_choice
    if rewritten.get("parallel_tool_calls") is None:
        rewritten["parallel_tool_calls"] = False
    return rewritten, True


def _as_function_call(holder: dict) -> bool:
    calls = holder.pop("tool_calls", None)
    if calls:
        holder["function_call"] = dict(calls[0]["function"])
    return bool(calls)


def completion_as_function_call(completion: dict) -> dict:
    """A `chat.completion` whose tool call is the legacy `function_call`."""
    for choice in completion["choices"]:
        if _as_function_call(choice["message"]):
            choice["finish_reason"] = "function_call"
    return completion


def chunks_as_function_call(lines: Iterable[str]) -> Iterator[str]:
    """The `data:` lines of a chunk stream, each tool-call delta as a `function_call` delta."""
    for line in lines:
        if line.startswith("data: {") and '"tool_calls"' in line:
            payload = json.loads(line[len("data: "):])
            for choice in payload.get("choices") or []:
                _as_function_call(choice.get("delta") or {})
                if choice.get("finish_reason") == "tool_calls":
                    choice["finish_reason"] = "function_call"
            line = f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
        yield line
