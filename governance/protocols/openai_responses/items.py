"""A Responses API request's conversation and tools as the Chat Completions messages and tools the
completions run reads (SPEC §11.6).

`input` is a string or a list of items: messages (`input_text` / `output_text` / `refusal` parts, or a
string), `function_call` and `function_call_output` items, `reasoning` items passed back. Every
problem is added to `errors` under the client's own name (`input[2].type`, `tools[0].type`), so the
400 names it; a member an item may carry (`id`, `status`, `annotations`, `logprobs`) is ignored.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

ROLES = ("user", "assistant", "system", "developer")
TEXT_PARTS = ("input_text", "output_text")
# What an item may carry that says nothing to the model: ignored, as the SDKs send their own objects back.
# Reasoning items: the provider behind a configuration is asked in Chat Completions, which takes no
# reasoning items; they are accepted (the SDKs pass them back) and not sent (docs/decisions.md).
PASSED_BACK = ("reasoning",)
REFERENCE_TYPES = ("item_reference",)
NAMESPACE_JOIN = "__"


@dataclass
class RequestNotes:
    """What reading a request learned besides the completions request: what it dropped (each a `checks`
    entry of the answer, SPEC §11.9) and the offered names of namespaced functions (name → (namespace,
    name)), so a call to one goes back under the names the client declared."""

    dropped: list[dict] = field(default_factory=list)
    namespaces: dict[str, tuple[str, str]] = field(default_factory=dict)

    def drop(self, member: str, reason: str, **facts) -> None:
        self.dropped.append({"check": "request", "result": "dropped", "reason": reason, "field": member,
                             **facts})


def _text_of_parts(parts, where: str, errors: dict, role: str) -> tuple[str | None, str | None]:
    """(text, refusal) of a message's content list; any other part is a 400 naming it."""
    texts, refusals = [], []
    for index, part in enumerate(parts):
        name = f"{where}.content[{index}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "refusal" and role == "assistant" and isinstance(part.get("refusal"), str):
            refusals.append(part["refusal"])
        elif kind in TEXT_PARTS or kind == "refusal":
            errors[name] = [_("Give the part's text as a string.")]
        else:
            errors[f"{name}.type"] = [_("Gavel reads text parts only (input_text, output_text, refusal): it cannot "
                                        "screen a %(kind)s part.") % {"kind": kind or "typeless"}]
    return ("".join(texts) if texts else None), ("".join(refusals) if refusals else None)


def _message(item: dict, where: str, errors: dict) -> dict | None:
    role = item.get("role")
    if role not in ROLES:
        errors[f"{where}.role"] = [_("Give one of: %(roles)s.") % {"roles": ", ".join(ROLES)}]
        return None
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        errors[f"{where}.content"] = [_("Give a string or a list of content parts.")]
        return None
    text, refusal = _text_of_parts(content, where, errors, role)
    message = {"role": role, "content": text if text is not None else ("" if refusal is None else None)}
    if refusal is not None:
        message["refusal"] = refusal
    return message


def _output_text(output, where: str, errors: dict) -> str | None:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        text, _refusal = _text_of_parts(output, where, errors, "tool")
        return text or ""
    errors[where] = [_("Give the tool's output as a string or a list of input_text parts.")]
    return None


def _function_call(item: dict, where: str, errors: dict) -> dict | None:
    bad = [key for key in ("call_id", "name", "arguments") if not isinstance(item.get(key), str) or
           (key != "arguments" and not item.get(key))]
    for key in bad:
        errors[f"{where}.{key}"] = [_("Give a string.")]
    namespace = item.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or not namespace):
        errors[f"{where}.namespace"] = [_("Give the namespace's name, or leave it out.")]
        return None
    if bad:
        return None
    name = offered_name(namespace, item["name"]) if namespace else item["name"]
    return {"id": item["call_id"], "type": "function", "function": {"name": name, "arguments": item["arguments"]}}


def messages_of(body: dict, errors: dict, references: dict | None = None) -> tuple[list[dict], list[str]]:
    """(chat messages, where each came from) of `instructions` and `input`. Consecutive function calls
    become one assistant message with tool calls (on the assistant message before them, if any); an
    `item_reference` is the item Gavel kept under that id (`references`: id → item, kept.py)."""
    references = references or {}
    messages: list[dict] = []
    origins: list[str] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
        origins.append("instructions")
    elif instructions not in (None, ""):
        errors["instructions"] = [_("Give a string.")]
    given = body.get("input")
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
        origins.append("input")
        return messages, origins
    if not isinstance(given, list) or not given:
        errors["input"] = [_("Give a string or a list of items.")]
        return messages, origins
    for index, item in enumerate(given):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            errors[where] = [_("Give an item: an object.")]
            continue
        kind = item.get("type", "message")
        if kind in REFERENCE_TYPES:
            reference = item.get("id")
            if not isinstance(reference, str):  # a list or an object is no id (and no key to look up)
                errors[f"{where}.id"] = [_("Give the id of an item as a string.")]
                continue
            kept = references.get(reference)
            if kept is None:
                errors[f"{where}.id"] = [_("Gavel does not have this item for this token (it keeps the items it "
                                           "returned for a while): send the whole conversation as items.")]
                continue
            item, kind = kept, kept["type"]  # read as if the client had sent it whole
        if kind == "message":
            message = _message(item, where, errors)
        elif kind == "function_call":
            call = _function_call(item, where, errors)
            if call is None:
                continue
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if not last.get("content"):
                    last["content"] = None
                continue
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        elif kind == "function_call_output":
            output = _output_text(item.get("output"), f"{where}.output", errors)
            if not isinstance(item.get("call_id"), str) or not item["call_id"]:
                errors[f"{where}.call_id"] = [_("Give the call_id of the function call this answers.")]
                continue
            if output is None:
                continue
            message = {"role": "tool", "tool_call_id": item["call_id"], "content": output}
        elif kind in PASSED_BACK:
            continue
        else:
            errors[f"{where}.type"] = [_("Gavel cannot screen an item of type %(kind)s: send messages, function "
                                         "calls and their outputs.") % {"kind": kind}]
            continue
        if message is not None:
            messages.append(message)
            origins.append(where)
    return messages, origins


def offered_name(namespace: str, name: str) -> str:
    """The one name a namespace's function is offered to the model under (`multi_agent_v1__close_agent`;
    `mcp__docs__` + `search` = `mcp__docs__search`): screened, read-listed and logged under it."""
    return f"{namespace}{name}" if namespace.endswith("__") else f"{namespace}{NAMESPACE_JOIN}{name}"


def _function_tool(tool, where: str, errors: dict, namespace: str = "") -> dict | None:
    if not isinstance(tool, dict) or tool.get("type") != "function":
        kind = tool.get("type") if isinstance(tool, dict) else None
        errors[f"{where}.type"] = [_("A namespace holds function tools only: it cannot hold a %(kind)s "
                                     "tool.") % {"kind": kind or "typeless"}]
        return None
    if not isinstance(tool.get("name"), str) or not tool["name"]:
        errors[f"{where}.name"] = [_("Give the function's name.")]
        return None
    function = {"name": offered_name(namespace, tool["name"]) if namespace else tool["name"]}
    for key in ("description", "parameters", "strict"):
        if tool.get(key) is not None:
            function[key] = tool[key]
    return {"type": "function", "function": function}


def tools_of(tools, errors: dict, request: "RequestNotes | None" = None) -> list[dict]:
    """Responses function tools (`{type, name, description, parameters, strict}`) as Chat Completions
    tools. A `namespace` tool's function tools are offered (and screened) as function tools of their
    own, each under offered_name(); `request.namespaces` maps that name back. A hosted tool the client
    declares (web_search, file_search, code_interpreter, ...) would be run by OpenAI, which Gavel is
    not: it is not offered to the model, and `request.dropped` says so (SPEC §11.9). A tool without a
    type is a 400 naming it."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        errors["tools"] = [_("Give a list of function tools.")]
        return []
    request = request if request is not None else RequestNotes()
    result = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "function":
            function = _function_tool(tool, where, errors)
            if function is not None:
                result.append(function)
        elif kind == "namespace":
            namespace = tool.get("name")
            if not isinstance(namespace, str) or not namespace:
                errors[f"{where}.name"] = [_("Give the namespace's name.")]
                continue
            inner = tool.get("tools")
            if not isinstance(inner, list):
                errors[f"{where}.tools"] = [_("Give the namespace's function tools as a list.")]
                continue
            for position, member in enumerate(inner):
                function = _function_tool(member, f"{where}.tools[{position}]", errors, namespace)
                if function is not None:
                    result.append(function)
                    request.namespaces[function["function"]["name"]] = (namespace, member["name"])
        elif isinstance(kind, str) and kind:
            request.drop(where, "hosted_tool", tool=kind)
        else:
            errors[f"{where}.type"] = [_("Give the tool's type: Gavel offers function tools (and the function "
                                         "tools of a namespace).")]
    return result


def tool_choice_of(choice, errors: dict):
    """`auto` / `none` / `required` / `{"type": "function", "name"}` in Chat Completions' shape."""
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}
    errors["tool_choice"] = [_("Give auto, none, required or {\"type\": \"function\", \"name\": …}: Gavel "
                               "offers function tools only.")]
    return None


def response_format_of(text, errors: dict) -> dict | None:
    """`text.format` as Chat Completions' `response_format` (None for plain text)."""
    if not isinstance(text, dict):
        errors["text"] = [_("Give an object.")]
        return None
    fmt = text.get("format")
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "json_schema":
        if not isinstance(fmt.get("name"), str) or not isinstance(fmt.get("schema"), dict):
            errors["text.format"] = [_("A json_schema format has a name and a schema.")]
            return None
        schema = {key: fmt[key] for key in ("name", "schema", "strict", "description") if fmt.get(key) is not None}
        return {"type": "json_schema", "json_schema": schema}
    errors["text.format.type"] = [_("Give text, json_object or json_schema.")]
    return None
