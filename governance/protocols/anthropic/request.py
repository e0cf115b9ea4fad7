"""The Messages API request (SPEC §11.7) read into a completions request: Anthropic's system, content
blocks, tools and parameters become the Chat Completions messages, tools and model-call options that
POST /api/v1/completions reads, and the completions serializer itself checks them.

Nothing is dropped that changes the answer: a parameter reaches the provider (the call service refuses
one the configuration's route does not take, naming it) or is refused here with 400 naming it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from governance.api.errors import field_messages
from governance.api.serializers import CompletionRequestSerializer
from governance.errors import BadInput
from governance.protocols.anthropic.errors import client_name
from governance.protocols.openai_chat.serializers import EXTENSION_KEYS

# Members that would let the model act where Gavel cannot screen what it does (servers, containers).
UNSCREENABLE = ("mcp_servers", "container")
TOOL_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
EFFORTS = ("low", "medium", "high", "xhigh", "max")
# The members read (and sent on, or refused); any other is dropped, said in the response's `checks` (SPEC §11.9):
# Claude Code's `context_management` (it clears thinking Gavel never returns), `service_tier`, `speed`, ….
READ = frozenset({"model", "system", "messages", "max_tokens", "temperature", "top_p", "top_k", "stop_sequences",
                  "metadata", "output_config", "thinking", "tools", "tool_choice", "stream", "gavel", *UNSCREENABLE})
TOOL_CHANGES = {"tool_addition": "add", "tool_removal": "remove",
                "request_tool_addition": "add", "request_tool_removal": "remove"}
# What the model reads in a tool search's result for each tool it loaded (a tool_reference block).
TOOL_LOADED = "Tool loaded: %(name)s"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Reader:
    """Collects a request's field errors (400 `invalid`) and what Gavel cannot honour (400
    `unsupported_parameter`), each under the field's name as the client sent it."""

    def __init__(self):
        self.errors: dict = {}
        self.unsupported: dict = {}
        # Members read but not sent on (SPEC §11.9: metadata that never reaches the model as text), each with
        # its reason: the response's `checks` say so.
        self.dropped: dict = {}
        # The tool changes of the conversation, in order: ("add" | "remove", name) and inline definitions.
        self.tool_events: list[tuple[str, str]] = []
        self.inline_tools: dict = {}

    def drop(self, name: str, reason: str) -> None:
        self.dropped.setdefault(name, reason)

    def cache_hint(self, block) -> None:
        """Prompt-caching marks (`cache_control` on a block or a tool) say nothing the model reads: dropped."""
        if isinstance(block, dict) and block.get("cache_control") is not None:
            self.drop("cache_control", "not_sent")

    def bad(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(str(message))

    def refuse(self, name: str, message: str) -> None:
        self.unsupported.setdefault(name, []).append(str(message))

    # --- system and messages ---
    def system(self, value) -> list[dict]:
        if value is None or value == "" or value == []:
            return []
        if isinstance(value, str):
            return [{"role": "system", "content": value}]
        if not isinstance(value, list):
            self.bad("system", _("Give a string or a list of text blocks."))
            return []
        texts = []
        for index, block in enumerate(value):
            self.cache_hint(block)
            if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
                self.bad(f"system[{index}]", _("Give a text block: {\"type\": \"text\", \"text\": \"…\"}."))
            else:
                texts.append(block["text"])
        return [{"role": "system", "content": "\n\n".join(texts)}] if texts else []

    def messages(self, value) -> tuple[list[dict], list[int]]:
        """The Chat Completions messages, and for each the index of the Anthropic message it came from."""
        if not isinstance(value, list) or not value:
            self.bad("messages", _("Give a non-empty list of messages."))
            return [], []
        result, origins = [], []
        for index, message in enumerate(value):
            name = f"messages[{index}]"
            if not isinstance(message, dict):
                self.bad(name, _("Give a message: an object with a role and content."))
                continue
            role, content = message.get("role"), message.get("content")
            if role == "system":
                # A system turn (Claude Code's environment, its tool changes; first or mid-conversation): its text
                # goes to the model as system text where it stands; its tool changes decide the tools offered.
                translated = self.system_turn(name, content)
                result += translated
                origins += [index] * len(translated)
                continue
            if role not in ("user", "assistant"):
                self.bad(f"{name}.role", _("Give user, assistant or system."))
                continue
            if isinstance(content, str):
                translated = [{"role": role, "content": content}]
            elif isinstance(content, list):
                translated = self.user_turn(name, content) if role == "user" else self.assistant_turn(name, content)
            else:
                self.bad(f"{name}.content", _("Give a string or a list of content blocks."))
                continue
            result += translated
            origins += [index] * len(translated)
        return result, origins

    def system_turn(self, name: str, content) -> list[dict]:
        if isinstance(content, str):
            return [{"role": "system", "content": content}] if content else []
        if not isinstance(content, list):
            self.bad(f"{name}.content", _("Give a string or a list of content blocks."))
            return []
        texts = []
        for path, block in self._blocks(name, content):
            kind = block["type"]
            if kind == "text":
                text = self._text(path, block)
                if text is not None:
                    texts.append(text)
            elif kind in TOOL_CHANGES:
                self.tool_change(path, TOOL_CHANGES[kind], block.get("tool"))
            else:
                self.refuse(f"{path}.type", _("Gavel does not take %(type)s blocks in a system turn.") % {"type": kind})
        return [{"role": "system", "content": "\n\n".join(texts)}] if texts else []

    def tool_change(self, path: str, change: str, tool) -> None:
        """A tool added or removed mid-conversation: by reference to a tool of `tools`, or (added) by definition."""
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "tool_reference" and isinstance(tool.get("name") or tool.get("tool_name"), str):
            self.tool_events.append((change, tool.get("name") or tool.get("tool_name")))
        elif kind == "tool_definition" and change == "add" and isinstance(tool.get("definition"), dict):
            found = self.tools([tool["definition"]], at=f"{path}.tool.definition")
            if found:
                name = found[0]["function"]["name"]
                self.inline_tools[name] = {**found[0], "deferred": True}  # offered by its addition
                self.tool_events.append(("add", name))
        else:
            self.bad(f"{path}.tool", _("Give a tool_reference with a name (or, to add one, a tool_definition)."))

    def _blocks(self, name: str, content: list):
        for index, block in enumerate(content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                self.bad(f"{name}.content[{index}]", _("Give a content block: an object with a type."))
                continue
            self.cache_hint(block)
            yield f"{name}.content[{index}]", block

    def _text(self, name: str, block: dict) -> str | None:
        if not isinstance(block.get("text"), str):
            self.bad(f"{name}.text", _("A text block holds its text as a string."))
            return None
        return block["text"]

    def user_turn(self, name: str, content: list) -> list[dict]:
        """Tool results first, each a `tool` message (Chat Completions wants them right after the
        assistant's calls), then the rest of the turn as one user message of parts."""
        tools, parts = [], []
        for path, block in self._blocks(name, content):
            kind = block["type"]
            if kind == "text":
                text = self._text(path, block)
                if text is not None:
                    parts.append({"type": "text", "text": text})
            elif kind == "tool_result":
                tool = self.tool_result(path, block)
                if tool:
                    tools.append(tool)
            elif kind in ("image", "document"):
                part = self.media(path, block)
                if part:
                    parts.append(part)
            else:
                self.refuse(f"{path}.type", _("Gavel does not take %(type)s blocks in a user turn.") % {"type": kind})
        if parts:
            text_only = all(part["type"] == "text" for part in parts)
            tools.append({"role": "user", "content": "".join(p["text"] for p in parts) if text_only else parts})
        elif not content:
            self.bad(f"{name}.content", _("Give at least one content block."))
        return tools

    def tool_result(self, path: str, block: dict) -> dict | None:
        tool_use_id, content = block.get("tool_use_id"), block.get("content", "")
        if not isinstance(tool_use_id, str) or not tool_use_id:
            self.bad(f"{path}.tool_use_id", _("Name the tool_use_id this result answers."))
            return None
        if isinstance(content, list):
            texts = []
            for index, part in enumerate(content):
                if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif isinstance(part, dict) and part.get("type") == "tool_reference" \
                        and isinstance(part.get("tool_name"), str) and part["tool_name"]:
                    # A tool search's result: the deferred tool it names is offered from here on (`tools`), and
                    # the model reads that it is.
                    self.tool_events.append(("add", part["tool_name"]))
                    texts.append(TOOL_LOADED % {"name": part["tool_name"]})
                else:
                    self.refuse(f"{path}.content[{index}]",
                                _("A tool result passes text to the model through Gavel: give text blocks."))
            content = "\n".join(texts)
        elif content is None:
            content = ""
        elif not isinstance(content, str):
            self.bad(f"{path}.content", _("Give a string or a list of text blocks."))
            return None
        if block.get("is_error") not in (None, True, False):
            self.bad(f"{path}.is_error", _("Give true or false."))
            return None
        if block.get("is_error") is True:
            # Chat Completions has no error flag: the model is told in the text.
            content = _("Error: %(result)s") % {"result": content}
        return {"role": "tool", "tool_call_id": tool_use_id, "content": content}

    def media(self, path: str, block: dict) -> dict | None:
        """An image or a PDF as the Chat Completions part the provider is sent; a plain-text document
        is text. Any other source is refused, naming it."""
        source = block.get("source")
        kind = source.get("type") if isinstance(source, dict) else None
        if block["type"] == "document" and kind == "text" and isinstance(source.get("data"), str):
            return {"type": "text", "text": source["data"]}
        if kind == "base64" and isinstance(source.get("data"), str) and isinstance(source.get("media_type"), str):
            url = f"data:{source['media_type']};base64,{source['data']}"
            if block["type"] == "image":
                return {"type": "image_url", "image_url": {"url": url}}
            return {"type": "file", "file": {"file_data": url, "filename": str(block.get("title") or "document.pdf")}}
        if kind == "url" and block["type"] == "image" and isinstance(source.get("url"), str):
            return {"type": "image_url", "image_url": {"url": source["url"]}}
        self.refuse(f"{path}.source", _("Give the %(type)s as base64 data (or an image by its url).") % {
            "type": block["type"]})
        return None

    def assistant_turn(self, name: str, content: list) -> list[dict]:
        """Text blocks are the turn's text, tool_use blocks its tool calls; thinking blocks passed back
        are left out (Gavel's answers carry none, and no provider needs them from Gavel)."""
        texts, calls = [], []
        for path, block in self._blocks(name, content):
            kind = block["type"]
            if kind == "text":
                text = self._text(path, block)
                if text is not None:
                    texts.append(text)
            elif kind == "tool_use":
                call = self.tool_use(path, block)
                if call:
                    calls.append(call)
            elif kind in ("thinking", "redacted_thinking"):
                continue
            else:
                self.refuse(f"{path}.type", _("Gavel does not take %(type)s blocks in an assistant turn.") % {
                    "type": kind})
        message = {"role": "assistant", "content": "".join(texts) if texts or not calls else None}
        if calls:
            message["tool_calls"] = calls
        return [message]

    def tool_use(self, path: str, block: dict) -> dict | None:
        ident, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
        ok = True
        for key, value in (("id", ident), ("name", name)):
            if not isinstance(value, str) or not value:
                self.bad(f"{path}.{key}", _("Give a string."))
                ok = False
        if not isinstance(arguments, dict):
            self.bad(f"{path}.input", _("Give an object."))
            ok = False
        if not ok:
            return None
        return {"id": ident, "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}

    # --- tools ---
    def tools(self, value, at: str | None = None) -> list[dict]:
        """Client tools as function tools. A tool with `defer_loading: true` is offered once the conversation
        loads it (a tool_reference, a tool_addition), as Anthropic's API does (`offered`)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.bad("tools", _("Give a list of tools."))
            return []
        result = []
        for index, tool in enumerate(value):
            path = at or f"tools[{index}]"
            if not isinstance(tool, dict):
                self.bad(path, _("Give a tool: an object with a name and an input_schema."))
                continue
            self.cache_hint(tool)
            if tool.get("type") not in (None, "custom"):
                self.refuse(f"{path}.type", _("Gavel cannot screen what the built-in tool %(type)s does: offer "
                                              "client tools (name, input_schema) only.") % {"type": tool.get("type")})
                continue
            name, schema = tool.get("name"), tool.get("input_schema")
            if not isinstance(name, str) or not name:
                self.bad(f"{path}.name", _("Give the tool's name."))
                continue
            if not isinstance(schema, dict):
                self.bad(f"{path}.input_schema", _("Give the tool's input_schema (a JSON schema object)."))
                continue
            function = {"name": name, "parameters": schema}
            description = tool.get("description")
            if description is not None and not isinstance(description, str):
                self.bad(f"{path}.description", _("Give a string."))
                continue
            if description:
                function["description"] = description
            deferred = tool.get("defer_loading")
            if deferred not in (None, True, False):
                self.bad(f"{path}.defer_loading", _("Give true or false."))
                continue
            result.append({"type": "function", "function": function, **({"deferred": True} if deferred else {})})
        return result

    def offered(self, tools: list[dict]) -> list[dict]:
        """The tools the model is offered when it answers: those not deferred, then the conversation's
        changes in order (a deferred tool loaded, a tool added by definition, a tool removed)."""
        by_name = {tool["function"]["name"]: tool for tool in tools}
        by_name.update({name: tool for name, tool in self.inline_tools.items() if name not in by_name})
        available = {name for name, tool in by_name.items() if not tool.get("deferred")}
        for change, name in self.tool_events:
            if change == "add" and name in by_name:
                available.add(name)
            elif change == "remove":
                available.discard(name)
        return [{"type": "function", "function": tool["function"]} for name, tool in by_name.items()
                if name in available]

    def tool_choice(self, value, options: dict, passed: dict) -> None:
        if value is None:
            return
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(kind, str):  # a list or an object is no choice (and no key of TOOL_CHOICES)
            kind = None
        if kind in TOOL_CHOICES:
            options["tool_choice"] = TOOL_CHOICES[kind]
        elif kind == "tool" and isinstance(value.get("name"), str) and value["name"]:
            options["tool_choice"] = {"type": "function", "function": {"name": value["name"]}}
        else:
            self.bad("tool_choice", _("Give {\"type\": auto, any, none, or tool with a name}."))
            return
        parallel = value.get("disable_parallel_tool_use")
        if parallel is not None:
            if not isinstance(parallel, bool):
                self.bad("tool_choice.disable_parallel_tool_use", _("Give true or false."))
            elif parallel:
                passed["parallel_tool_calls"] = False

    # --- the sampling parameters ---
    def sampling(self, body: dict, options: dict, passed: dict, optional: dict) -> None:
        limit = body.get("max_tokens")
        if not _is_integer(limit) or limit < 1:
            self.bad("max_tokens", _("Give max_tokens: a whole number of at least 1."))
        else:
            options["client_max_tokens"] = limit
        for name, high in (("temperature", 1), ("top_p", 1)):
            value = body.get(name)
            if value is None:
                continue
            if not _is_number(value) or not 0 <= value <= high:
                self.bad(name, _("Give a number from 0 to %(high)s.") % {"high": high})
            elif name == "temperature":
                options["client_temperature"] = float(value)
            else:
                passed[name] = value
        top_k = body.get("top_k")
        if top_k is not None:
            if not _is_integer(top_k) or top_k < 0:
                self.bad("top_k", _("Give a whole number of at least 0."))
            else:
                passed["top_k"] = top_k
        stops = body.get("stop_sequences")
        if stops is not None:
            if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
                self.bad("stop_sequences", _("Give a list of non-empty strings."))
            elif stops:
                passed["stop"] = stops
        metadata = body.get("metadata")
        if metadata is not None:
            user = metadata.get("user_id") if isinstance(metadata, dict) else None
            if not isinstance(metadata, dict) or (user is not None and not isinstance(user, str)):
                self.bad("metadata", _("Give an object whose user_id is a string."))
            elif user:
                options["user"] = user[:256]
        self.output_config(body.get("output_config"), options, optional)
        thinking = body.get("thinking")
        if thinking is not None:
            kind = thinking.get("type") if isinstance(thinking, dict) else None
            if kind not in ("enabled", "disabled", "adaptive"):
                self.bad("thinking", _("Give {\"type\": enabled, adaptive or disabled}."))
            elif kind != "disabled":
                # Reaches the provider where its route takes it; else dropped, said in `checks` (Gavel's answers
                # carry no thinking: it never reaches the client as text). Claude Code sends it by default.
                optional["thinking"] = dict(thinking)

    def output_config(self, value, options: dict, optional: dict) -> None:
        """`format` (a JSON schema) is the provider's response_format; `effort` its reasoning_effort
        (passed on where the route takes it, else dropped and said in `checks`: Claude Code sends it by
        default, and it changes how long a model thinks, not what reaches the client unscreened)."""
        if value is None:
            return
        if not isinstance(value, dict):
            self.bad("output_config", _("Give an object."))
            return
        effort, output = value.get("effort"), value.get("format")
        if effort is not None:
            if effort not in EFFORTS:
                self.bad("output_config.effort", _("Give one of %(values)s.") % {"values": ", ".join(EFFORTS)})
            else:
                optional["reasoning_effort"] = effort
        if output is not None:
            if not isinstance(output, dict) or output.get("type") != "json_schema" \
                    or not isinstance(output.get("schema"), dict):
                self.bad("output_config.format", _("Give {\"type\": \"json_schema\", \"schema\": {…}}."))
            else:
                options["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": "output", "schema": output["schema"]}}


@dataclass
class MessagesRequest:
    """A Messages API request read: the completions request `data`, the model-call `options`, `stream`, the
    parameters sent where the route takes them (`optional`, else dropped) and the members `dropped`."""

    data: dict
    options: dict
    stream: bool
    optional: dict = field(default_factory=dict)
    dropped: dict = field(default_factory=dict)


def parse_messages_request(body, *, count_only: bool = False) -> MessagesRequest:
    """The body of POST messages (or, `count_only`, of POST messages/count_tokens, which has no max_tokens
    and no stream) → a MessagesRequest.

    Raises BadInput naming every bad field in the client's own names (`model`, `messages[2].content`,
    `gavel.also`); what Gavel cannot honour (a built-in tool, an image in a tool result) is
    `unsupported_parameter`.
    """
    if not isinstance(body, dict):
        raise BadInput(_("The body must be a JSON object."), code="malformed")
    reader = Reader()
    options: dict = {}
    passed: dict = {}
    optional: dict = {}
    messages = reader.system(body.get("system"))
    offset = len(messages)
    turns, origins = reader.messages(body.get("messages"))
    messages += turns
    tools = reader.offered(reader.tools(body.get("tools")))
    if count_only:
        body = {"max_tokens": 1, **{key: value for key, value in body.items() if key not in ("max_tokens", "stream")}}
    reader.sampling(body, options, passed, optional)
    # Read whether or not tools are offered (a bad one is a 400 either way); it travels with tools only.
    choice: dict = {}
    reader.tool_choice(body.get("tool_choice"), choice, choice)
    if tools:
        options.update({k: v for k, v in choice.items() if k == "tool_choice"})
        passed.update({k: v for k, v in choice.items() if k != "tool_choice"})
    stream = body.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        reader.bad("stream", _("Give true or false."))
    for name in UNSCREENABLE:
        if body.get(name):
            reader.refuse(name, _("Gavel cannot screen what runs there: leave %(name)s out.") % {"name": name})
    for name in sorted(set(body) - READ):
        reader.drop(name, "not_sent")
    extension = body.get("gavel")
    if extension is None:
        extension = {}
    elif not isinstance(extension, dict):
        reader.bad("gavel", _("Give an object."))
        extension = {}
    for key in sorted(set(extension) - set(EXTENSION_KEYS)):
        reader.bad(f"gavel.{key}", _("Unknown field."))
    data = {key: extension[key] for key in EXTENSION_KEYS if key in extension}
    if "model" in body:
        data["configuration"] = body["model"]
    else:
        reader.bad("model", _("Give the configuration identifier as model."))
    if messages and not reader.errors:
        data["messages"] = messages
        if tools:
            data["tools"] = tools
        serializer = CompletionRequestSerializer(data=data)
        if not serializer.is_valid():
            for name, found in field_messages(serializer.errors).items():
                reader.errors[_original_name(client_name(name), offset, origins)] = found
        else:
            data = serializer.validated_data
    if reader.errors:
        raise BadInput(_("The request has invalid fields."), fields={**reader.errors, **reader.unsupported})
    if reader.unsupported:
        raise BadInput(_("The request asks for what Gavel does not support."), code="unsupported_parameter",
                       fields=reader.unsupported)
    if passed:
        options["client_parameters"] = passed
    return MessagesRequest(data=data, options=options, stream=stream, optional=optional, dropped=reader.dropped)


def _original_name(name: str, offset: int, origins: list[int]) -> str:
    """`messages[k]…` of the translated messages → the client's `messages[i]` (or `system`)."""
    if not name.startswith("messages["):
        return name
    index, _sep, _rest = name[len("messages["):].partition("]")
    if not index.isdigit():
        return name
    k = int(index) - offset
    if k < 0:
        return "system"
    return f"messages[{origins[k]}]" if k < len(origins) else name
