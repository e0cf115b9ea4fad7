"""A scriptable stand-in for model providers, served on 127.0.0.1 for tests.

It speaks the two wire formats Gavel's judges and completions go through
litellm with: OpenAI chat completions (JSON and Server-Sent Events) and the
System One decision format of ``litellm.systemone`` (plus the OpenAI-style
decision format litellm sends to the ``openai`` route). Standard library only.

Endpoints (every request is recorded, whatever its path):

* ``POST /v1/chat/completions`` and ``POST /chat/completions`` — chat.
* ``POST /v1/systemone`` and ``POST /systemone`` — System One decisions
  (what litellm sends for routes such as ``hosted_vllm``, ``ollama``,
  ``typesafe``, ``eu_jev``); ``POST /alpha/decisions`` and
  ``POST /api/alpha/decisions`` — the same shape on OpenRouter's path.
* ``POST /v1/decisions`` and ``POST /decisions`` — the OpenAI-style decision
  format (list of named questions, list of answers) that litellm uses for the
  ``openai`` route.

System One request (as litellm 1.110.2 sends it)::

    {"model": "m", "state": "... or {...}",
     "questions": {"rule_1": {"type": "choice", "instructions": "...",
                              "criteria": {"allow": "...", "deny": "...", "pass": "..."}}}}

System One response::

    {"model": "m",
     "answers": {"rule_1": {"type": "choice", "choice": "allow", "confidence": 0.97,
                            "probabilities": {"allow": 0.97, "deny": 0.02, "pass": 0.01}}},
     "usage": {"input_tokens": 12, "output_tokens": 1}}

Concurrency: ``server.in_flight`` is the number of requests being answered now and
``server.max_in_flight`` the most there ever were at once (for provider limits).

Scripting: ``server.script([...])`` queues responses, consumed in arrival
order. Each is a dict; every key is optional:

``status``         HTTP status (default 200); non-200 sends an OpenAI-style error body
``body``           a dict (sent as JSON) or str sent verbatim, replacing the generated body
``headers``        extra response headers
``delay``          seconds to wait before answering (for client timeouts)
``drop``           close the connection without answering
``text``           the assistant's text (chat)
``tool_calls``     ``[{"id"?, "name", "arguments": str | dict}]`` (chat)
``finish_reason``  defaults to ``stop`` (``tool_calls`` when there are tool calls)
``usage``          chat: ``{"prompt_tokens", "completion_tokens"}``;
                   decisions: ``{"input_tokens", "output_tokens"}``
``omit_usage``     chat: send no usage at all (not even the final stream chunk)
``model``          the model the response reports (default: the requested one)
``stream_chunks``  explicit text deltas for a streamed answer (default: ``text`` split by word)
``chunk_delay``    seconds between streamed chunks
``fail_after``     streamed: drop the connection after this many text chunks; not streamed: send
                   the status, the headers and half the body, then drop (a body that broke off)
``error_after``    streamed: after this many text chunks send an SSE error event and stop; not
                   streamed: the body breaks off as with ``fail_after``
``decision``       decisions: ``{"answers": {key: answer} | [answer, ...]}`` used as given
                   (a list is matched to the questions in order), or a template such as
                   ``{"choice": "deny", "confidence": 0.95, "probabilities": {...}}``
                   applied to every question
``for_model``      consume this entry only for a request naming this model
``for_path``       consume this entry only for a request whose path ends with this

An entry with ``decision`` is only consumed by a decision request, an entry
with ``text``/``tool_calls``/``stream_chunks`` only by a chat request; any
other entry by the next request of either kind. When nothing queued fits, the
``default`` response answers (``{"text": "OK"}`` and an ``allow`` decision).
"""

from __future__ import annotations

import copy
import json
import math
import re
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
SYSTEMONE_PATHS = ("/v1/systemone", "/systemone", "/alpha/decisions", "/api/alpha/decisions")
OPENAI_DECISION_PATHS = ("/v1/decisions", "/decisions")

DEFAULT_RESPONSE: Mapping[str, Any] = {"text": "OK"}
DEFAULT_DECISION: Mapping[str, Any] = {"choice": "allow", "confidence": 0.97}

_CHAT_KEYS = frozenset({"text", "tool_calls", "stream_chunks", "fail_after", "error_after"})
_ERROR_TYPES = {
    400: ("invalid_request_error", "bad_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("not_found_error", "model_not_found"),
    408: ("timeout_error", "timeout"),
    422: ("invalid_request_error", "unprocessable"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw: bytes
    at: float  # time.time() on arrival
    response: Mapping[str, Any] = field(default_factory=dict)  # the script entry that answered

    @property
    def json(self) -> Any:
        return self.body

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))


def unused_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now (for connection-refused tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _kind_of_path(path: str) -> str | None:
    # By suffix, so an api_base with a prefix (``/api/v1`` …) still lands here.
    path = path.rstrip("/")
    if path.endswith(CHAT_PATHS):
        return "chat"
    if path.endswith(SYSTEMONE_PATHS):
        return "systemone"
    if path.endswith(OPENAI_DECISION_PATHS):
        return "openai_decision"
    return None


def _entry_kind(entry: Mapping[str, Any]) -> str:
    if "decision" in entry:
        return "decision"
    if _CHAT_KEYS & entry.keys():
        return "chat"
    return "any"


def _count_words(value: Any) -> int:
    """A deterministic, rough token count of anything JSON-shaped."""
    if isinstance(value, str):
        return len(re.findall(r"\w+|[^\w\s]", value))
    if isinstance(value, Mapping):
        return sum(_count_words(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_count_words(item) for item in value)
    return 0


def _split_text(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text) or ([text] if text else [])


class ProviderServer:
    """A threaded HTTP server on 127.0.0.1 answering from a per-test script."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._queue: list[dict[str, Any]] = []
        self._requests: list[RecordedRequest] = []
        self._default: dict[str, Any] = dict(DEFAULT_RESPONSE)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        # Requests being answered right now, and the most there ever were at once (provider limits).
        self.in_flight = 0
        self.max_in_flight = 0

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> ProviderServer:
        if self._httpd is not None:
            return self
        handler = type("BoundProviderHandler", (_Handler,), {"provider": self})
        httpd = _QuietServer((self._host, self._port), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="provider-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the provider server is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://{self._host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style API base, ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    # -- scripting ---------------------------------------------------------
    def script(self, responses: Iterable[Mapping[str, Any]]) -> None:
        """Queue responses; each request consumes the first one that fits it."""
        with self._lock:
            self._queue.extend(copy.deepcopy(dict(item)) for item in responses)

    def set_default(self, response: Mapping[str, Any] | None) -> None:
        """The answer when nothing queued fits (None restores the built-in default)."""
        with self._lock:
            self._default = dict(DEFAULT_RESPONSE if response is None else response)

    def reset(self) -> None:
        """Forget the script, the default and every recorded request."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._default = dict(DEFAULT_RESPONSE)
            self.max_in_flight = self.in_flight

    @property
    def pending(self) -> int:
        """How many scripted responses are still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, path_suffix: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path.endswith(path_suffix)]

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if _kind_of_path(request.path) == "chat"]

    @property
    def decision_requests(self) -> list[RecordedRequest]:
        return [
            request
            for request in self.requests
            if _kind_of_path(request.path) in ("systemone", "openai_decision")
        ]

    @property
    def last_request(self) -> RecordedRequest | None:
        with self._lock:
            return self._requests[-1] if self._requests else None

    # -- used by the handler -----------------------------------------------
    def _take(self, path: str, model: str | None) -> dict[str, Any]:
        kind = _kind_of_path(path)
        wanted = "decision" if kind in ("systemone", "openai_decision") else "chat"
        with self._lock:
            for index, entry in enumerate(self._queue):
                entry_kind = _entry_kind(entry)
                if entry_kind not in ("any", wanted):
                    continue
                if "for_model" in entry and entry["for_model"] != model:
                    continue
                if "for_path" in entry and not path.endswith(entry["for_path"]):
                    continue
                return self._queue.pop(index)
            return copy.deepcopy(self._default)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}-{self._counter}"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a timeout test) resets its connection: not news.
        return


class _ConnectionDropped(Exception):
    """The script asked to cut the connection."""


class _Handler(BaseHTTPRequestHandler):
    provider: ProviderServer  # set on the bound subclass
    protocol_version = "HTTP/1.1"
    server_version = "GavelTestProvider/1"
    # Headers and body go out as two writes on a kept-alive connection: with Nagle's algorithm on,
    # the body waits for the client's delayed ACK (40 ms on Linux) on some requests, as no real
    # provider's server makes it wait. TCP_NODELAY, so the benchmarks time Gavel, not that stall.
    disable_nagle_algorithm = True
    timeout = 60  # an idle keep-alive connection is closed after this

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return  # keep test output clean

    # -- plumbing ------------------------------------------------------------
    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, payload: Any, extra_headers: Mapping[str, str] | None = None) -> None:
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra_headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _ConnectionDropped

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def _handle(self, method: str) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        model = body.get("model") if isinstance(body, dict) else None
        kind = _kind_of_path(path) if method == "POST" else None
        entry = self.provider._take(path, model) if kind else {}
        self.provider._record(
            RecordedRequest(
                method=method,
                path=path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
                raw=raw,
                at=time.time(),
                response=copy.deepcopy(entry),
            )
        )
        try:
            if kind is None:
                self._send_json(404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}})
                return
            with self.provider._lock:
                self.provider.in_flight += 1
                self.provider.max_in_flight = max(self.provider.max_in_flight, self.provider.in_flight)
            try:
                self._answer(kind, entry, body if isinstance(body, dict) else {})
            finally:
                with self.provider._lock:
                    self.provider.in_flight -= 1
        except (_ConnectionDropped, BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # -- answers ---------------------------------------------------------------
    def _answer(self, kind: str, entry: Mapping[str, Any], body: Mapping[str, Any]) -> None:
        delay = float(entry.get("delay") or 0)
        if delay:
            time.sleep(delay)
        if entry.get("drop"):
            self._drop()
        status = int(entry.get("status", 200))
        headers = entry.get("headers") or {}
        if status != 200:
            self._send_json(status, entry.get("body", _error_body(status)), headers)
            return
        if "body" in entry:
            self._send_json(200, entry["body"], headers)
            return
        if kind == "chat":
            if body.get("stream"):
                self._stream_chat(entry, body, headers)
            else:
                self._answer_whole(entry, body, headers)
        elif kind == "systemone":
            self._send_json(200, self._systemone(entry, body), headers)
        else:
            self._send_json(200, self._openai_decision(entry, body), headers)

    def _answer_whole(self, entry: Mapping[str, Any], body: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        """A chat answer asked for without streaming. An entry scripted as a stream answers the same
        text, after the time its chunks would have taken; one scripted to break off mid-stream breaks
        its body off the same way (what Gavel asks for a stream it holds, governance/runs/completions.py)."""
        if "stream_chunks" in entry and entry.get("text") is None:
            entry = {**entry, "text": "".join(str(piece) for piece in entry["stream_chunks"])}
        pieces = len(entry["stream_chunks"]) if "stream_chunks" in entry else len(_split_text(entry.get("text") or ""))
        chunk_delay = float(entry.get("chunk_delay") or 0)
        if chunk_delay:
            time.sleep(chunk_delay * pieces)
        completion = self._chat_completion(entry, body)
        if entry.get("fail_after") is None and entry.get("error_after") is None:
            self._send_json(200, completion, headers)
            return
        data = json.dumps(completion).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self._drop()

    def _usage(self, entry: Mapping[str, Any], body: Mapping[str, Any], text: str, calls: list) -> dict:
        given = entry.get("usage") or {}
        prompt = given.get("prompt_tokens", max(1, _count_words(body.get("messages"))))
        completion = given.get("completion_tokens", max(1, _count_words(text) + _count_words(calls)))
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _tool_calls(self, entry: Mapping[str, Any]) -> list[dict[str, Any]]:
        calls = []
        for index, call in enumerate(entry.get("tool_calls") or []):
            arguments = call.get("arguments", "{}")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            calls.append(
                {
                    "id": call.get("id") or f"call_{index + 1}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": arguments},
                }
            )
        return calls

    def _chat_completion(self, entry: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
        calls = self._tool_calls(entry)
        text = entry.get("text")
        if text is None and not calls:
            text = DEFAULT_RESPONSE["text"]
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        completion = {
            "id": self.provider._next_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": entry.get("model") or body.get("model") or "test-model",
            "system_fingerprint": None,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": entry.get("finish_reason") or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": self._usage(entry, body, text or "", calls),
        }
        if entry.get("omit_usage"):
            del completion["usage"]
        return completion

    def _stream_chat(self, entry: Mapping[str, Any], body: Mapping[str, Any], headers: Mapping[str, str]) -> None:
        calls = self._tool_calls(entry)
        if "stream_chunks" in entry:
            pieces = [str(piece) for piece in entry["stream_chunks"]]
        else:
            text = entry.get("text")
            if text is None and not calls:
                text = DEFAULT_RESPONSE["text"]
            pieces = _split_text(text or "")
        text = "".join(pieces)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage")) and not entry.get("omit_usage")
        chunk_id = self.provider._next_id("chatcmpl")
        created = int(time.time())
        model = entry.get("model") or body.get("model") or "test-model"
        chunk_delay = float(entry.get("chunk_delay") or 0)
        fail_after = entry.get("fail_after")
        error_after = entry.get("error_after")

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            payload: dict[str, Any] = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            }
            if include_usage:
                payload["usage"] = None
            return payload

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in headers.items():
            self.send_header(name, str(value))
        self.end_headers()

        self._write_event(chunk({"role": "assistant", "content": ""}))
        for sent, piece in enumerate(pieces):
            if fail_after is not None and sent >= int(fail_after):
                self._drop()  # no terminating chunk: the client sees a broken body
            if error_after is not None and sent >= int(error_after):
                self._write_event({"error": {"message": "scripted mid-stream failure", "type": "server_error",
                                             "code": "internal_error"}})
                self._end_chunked()
                return
            if chunk_delay:
                time.sleep(chunk_delay)
            self._write_event(chunk({"content": piece}))
        if fail_after is not None:
            self._drop()  # asked to fail after more chunks than there are: fail before the finish
        for index, call in enumerate(calls):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            first = {"index": index, "id": call["id"], "type": "function",
                     "function": {"name": call["function"]["name"], "arguments": arguments[:half]}}
            self._write_event(chunk({"tool_calls": [first]}))
            self._write_event(chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}))
        finish = entry.get("finish_reason") or ("tool_calls" if calls else "stop")
        self._write_event(chunk({}, finish))
        if include_usage:
            usage_chunk = chunk({})
            usage_chunk["choices"] = []
            usage_chunk["usage"] = self._usage(entry, body, text, calls)
            self._write_event(usage_chunk)
        self._write_raw(b"data: [DONE]\n\n")
        self._end_chunked()

    def _write_event(self, payload: Mapping[str, Any]) -> None:
        self._write_raw(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_raw(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_chunked(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # -- decisions -------------------------------------------------------------
    def _systemone(self, entry: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
        questions = body.get("questions") if isinstance(body.get("questions"), Mapping) else {}
        keyed = [(key, _options_of_systemone(question)) for key, question in questions.items()]
        answers = _decision_answers(entry, keyed)
        return {
            "model": entry.get("model") or body.get("model") or "test-decider",
            "answers": answers,
            "usage": _decision_usage(entry, body),
        }

    def _openai_decision(self, entry: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
        questions = body.get("questions") if isinstance(body.get("questions"), list) else []
        keyed = [
            (question.get("name") or str(index), [str(option.get("value")) for option in question.get("choices") or []])
            for index, question in enumerate(questions)
        ]
        by_key = _decision_answers(entry, keyed)
        answers = []
        for (key, _options), question in zip(keyed, questions):
            answer = by_key.get(key)
            if answer is None:
                answers.append({"type": "refusal", "name": question.get("name")})
                continue
            answers.append(
                {
                    "type": "choice",
                    "name": question.get("name"),
                    "choice": answer.get("choice"),
                    "confidence": answer.get("confidence"),
                    "probabilities": [
                        {"value": value, "probability": probability}
                        for value, probability in (answer.get("probabilities") or {}).items()
                    ],
                }
            )
        usage = _decision_usage(entry, body)
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        return {"model": entry.get("model") or body.get("model") or "test-decider", "answers": answers, "usage": usage}


def _options_of_systemone(question: Any) -> list[str]:
    criteria = question.get("criteria") if isinstance(question, Mapping) else None
    return [str(key) for key in criteria] if isinstance(criteria, Mapping) else []


def _probabilities(options: list[str], choice: str, confidence: float) -> dict[str, float]:
    if not options:
        return {choice: 1.0}
    if choice not in options:
        return {option: round(1.0 / len(options), 6) for option in options}
    rest = [option for option in options if option != choice]
    if not rest:
        return {choice: 1.0}
    share = (1.0 - confidence) / len(rest)
    return {option: (confidence if option == choice else share) for option in options}


def _decision_answers(entry: Mapping[str, Any], keyed: list[tuple[str, list[str]]]) -> dict[str, Any]:
    decision = entry.get("decision")
    if not isinstance(decision, Mapping):
        decision = DEFAULT_DECISION
    given = decision.get("answers")
    if isinstance(given, Mapping):
        return copy.deepcopy(dict(given))
    if isinstance(given, list):
        answers = {}
        for (key, _options), answer in zip(keyed, given):
            if answer is not None:
                answers[key] = {"type": "choice", **answer}
        return answers
    answers = {}
    for key, options in keyed:
        choice = str(decision.get("choice", DEFAULT_DECISION["choice"]))
        confidence = float(decision.get("confidence", DEFAULT_DECISION["confidence"]))
        probabilities = decision.get("probabilities")
        if probabilities is None:
            probabilities = _probabilities(options, choice, confidence if math.isfinite(confidence) else 0.0)
        answers[key] = {"type": "choice", "choice": choice, "confidence": confidence,
                        "probabilities": dict(probabilities)}
    return answers


def _decision_usage(entry: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, int]:
    given = entry.get("usage") or {}
    return {
        "input_tokens": int(given.get("input_tokens", max(1, _count_words(body.get("state") or body.get("input"))
                                                          + _count_words(body.get("questions"))))),
        "output_tokens": int(given.get("output_tokens", max(1, len(body.get("questions") or ())))),
    }


def _error_body(status: int) -> dict[str, Any]:
    error_type, code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error",
                                                 f"http_{status}"))
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    return {"error": {"message": f"scripted {status} {phrase}", "type": error_type, "param": None, "code": code}}
