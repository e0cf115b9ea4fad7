"""Protocol adapters of the conformance suite (SPEC §11.8): one module per protocol Gavel speaks.

Adding a protocol to the suite = adding one module here that defines ``ADAPTER``; it is collected by
``ADAPTERS`` below and every case of tests/protocols/test_conformance.py runs through it, plain and
streamed (held and live). An adapter knows its protocol's wire shapes and nothing of policies: the
suite sets up the policy, scripts the provider (tests/provider_server.py) and checks the governance
events; the adapter only turns a neutral `Ask` into a request and a response into a neutral `Outcome`.

The interface (duck-typed; see `Adapter`)::

    name: str                                   # "openai_chat", "openai_responses", "anthropic", ...
    unsupported: tuple[str, object]             # a parameter this protocol refuses, and its value:
                                                #   sent when ask.unsupported; the 400 must name it
    build(ask, *, stream, token) -> (path, headers, body)
        # path: the URL path on Gavel ("/openai/v1/chat/completions")
        # headers: HTTP headers, auth included (token is a consumer token granted `ask.model`)
        # body: a JSON-able dict; `stream` asks for the protocol's stream
    read(status, content, *, stream) -> Outcome
        # status: the HTTP status; content: every byte of the response body (a stream read to its end)

An adapter module must import nothing of Gavel's (only this package and the standard library / the
protocol's own SDK types if it wants), so it reads the protocol as a client does.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Tool:
    """A function tool offered to the model, protocol-neutral."""

    name: str
    description: str = ""
    parameters: dict = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class Ask:
    """What a case asks, protocol-neutral: one system text, one user turn, maybe tools."""

    prompt: str
    model: str = "newsroom"
    system: str = ""
    tools: tuple[Tool, ...] = ()
    unsupported: bool = False  # also send the adapter's `unsupported` parameter
    # A JSON answer asked for with this JSON schema: the protocol's own member (Chat `response_format`,
    # Responses `text.format`, Messages `output_config.format`), None for a text answer.
    json_schema: dict | None = None
    tool_choice: str | None = None  # "auto" or "none", in the protocol's own shape; None sends none


@dataclass
class Outcome:
    """What a client of the protocol received, protocol-neutral.

    status    the HTTP status
    outcome   Gavel's outcome (`allowed`, `allowed_with_hints`, `blocked`) from the `gavel` member;
              None when the answer is an error body
    hints     Gavel's hints as sent (list of dicts with `check`, `type`, `message`, ...)
    message   the block message where the protocol's client finds it (a refusal part, a refusal
              field, ...), else the error message of an error body, else None
    text      the answer text as a client assembles it (all text deltas of a stream, joined)
    text_chunks  how many non-empty text deltas a stream sent (0 for a plain answer): a held stream
              sends at most one, a live one as many as the provider did
    tool_calls  the function calls delivered: [{"name": str, "arguments": dict}]
    error     an error body read into {"type", "code", "param", "message"} (None when no error);
              `param` is the parameter named (OpenAI's `param`; for protocols without one, the
              adapter reads the name out of the message or leaves None)
    gavel     the `gavel` member as sent (the last one of a stream), or None
    raw       every byte sent to the client: the suite asserts blocked text never appears in it
    """

    status: int
    outcome: str | None = None
    hints: list = field(default_factory=list)
    message: str | None = None
    text: str = ""
    text_chunks: int = 0
    tool_calls: list = field(default_factory=list)
    error: dict | None = None
    gavel: dict | None = None
    raw: bytes = b""


class Adapter(Protocol):
    name: str
    unsupported: tuple[str, object]

    def build(self, ask: Ask, *, stream: bool, token: str) -> tuple[str, dict, dict]: ...

    def read(self, status: int, content: bytes, *, stream: bool) -> Outcome: ...


def sse_events(content: bytes) -> list[tuple[str | None, str]]:
    """The (event name or None, data) of every Server-Sent Event in `content`, in order."""
    events = []
    for block in content.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[len("event:"):].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:"):].lstrip())
        if name is not None or data:
            events.append((name, "\n".join(data)))
    return events


def _collect() -> dict[str, Adapter]:
    found = {}
    for module in pkgutil.iter_modules(__path__):
        adapter = getattr(importlib.import_module(f"{__name__}.{module.name}"), "ADAPTER", None)
        if adapter is not None:
            found[adapter.name] = adapter
    return dict(sorted(found.items()))


ADAPTERS: dict[str, Adapter] = _collect()
