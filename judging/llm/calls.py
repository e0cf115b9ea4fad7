"""The one door to language models: single litellm calls, plain data in and out.

Only this module imports litellm, and only inside functions (SPEC §11.4), with
the local price map and offline mode set first, so importing it costs nothing
and nothing but a target's own ``api_base`` is ever contacted. No Django here:
fallback chains, budgets and records belong to the service layer, which gets a
``ProviderError`` saying whether another provider is worth asking.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DecisionReply",
    "ModelReply",
    "ModelTarget",
    "ProviderError",
    "StreamHandle",
    "classify_error",
    "complete",
    "decide",
    "model_string",
    "stream",
    "token_count",
]

# Decision questions are answered with these capabilities declared, so litellm
# never asks a provider (or its default host) what the model can do.
_DECISION_MODEL_INFO = {
    "mode": "decisions",
    "supports_box_questions": False,
    "supports_audio_input": False,
    "supports_video_input": False,
}
_DETAIL_LIMIT = 300

# Lone surrogates (U+D800..U+DFFF) cannot be encoded as UTF-8 and NUL cannot be stored by PostgreSQL:
# either would make a response 500, cut a stream or fail a database write downstream.
_UNSAFE_CHARS = re.compile("[\ud800-\udfff]|\x00")


def clean_text(text: Any) -> Any:
    """Provider text made safe before anything else reads it: lone surrogates become U+FFFD, NUL is removed."""
    if not isinstance(text, str) or not _UNSAFE_CHARS.search(text):
        return text
    return _UNSAFE_CHARS.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


# --------------------------------------------------------------------------
# Data in, data out
# --------------------------------------------------------------------------
@dataclass
class ModelTarget:
    """Where one call goes. ``route`` is litellm's provider prefix (``openai``,
    ``hosted_vllm``, ``ollama``, ``typesafe`` …); prices are per million tokens."""

    route: str
    model: str
    api_base: str | None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 30.0
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    # The name of the environment variable the key comes from (never the key): a target that names
    # one it cannot read fails before anything is sent, saying which.
    key_env: str | None = None

    @property
    def model_string(self) -> str:
        return model_string(self)


@dataclass
class ModelReply:
    """A finished chat answer."""

    text: str
    tool_calls: list[dict[str, str]]  # [{"id", "name", "arguments" (JSON string)}]
    usage: dict[str, int]  # prompt_tokens, completion_tokens, total_tokens
    cost: float
    model: str | None  # as the provider reported it
    raw_finish_reason: str | None
    usage_estimated: bool = False  # True when the provider sent no usage and it was counted here
    latency_ms: float = 0.0


@dataclass
class DecisionReply:
    """A System One answer: ``answers`` maps each question key to the provider's
    answer as plain JSON (``type``, ``choice``, ``confidence``, ``probabilities``).
    A question the provider did not answer has no key. Nothing is validated
    here beyond what litellm parses; the judge checks the verdict."""

    answers: dict[str, dict[str, Any]]
    usage: dict[str, int]
    cost: float
    model: str | None
    latency_ms: float = 0.0


class UnsupportedParameters(ValueError):
    """The provider's route does not take these client parameters (litellm's list for the route):
    the caller is told, never left to a silent drop or a provider's refusal."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(", ".join(names))
        self.names = list(names)


class ProviderError(Exception):
    """A call that did not produce an answer.

    ``retryable`` says whether another provider is worth asking (connection
    errors, timeouts, HTTP 429 and 5xx); ``timeout`` marks timeouts; ``status``
    is the provider's HTTP status when one arrived; ``reason`` is short and
    holds no provider text; ``kind`` is a stable code for records;
    ``after_first_chunk`` is True when a stream had already delivered text.
    ``detail`` is the provider's message, shortened and with credentials
    masked, for logs only.
    """

    def __init__(
        self,
        reason: str,
        *,
        kind: str = "error",
        retryable: bool = False,
        timeout: bool = False,
        status: int | None = None,
        after_first_chunk: bool = False,
        detail: str = "",
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.retryable = retryable
        self.timeout = timeout
        self.status = status
        self.after_first_chunk = after_first_chunk
        self.detail = detail
        # Where the call went, for the person who can fix it (set by the call that failed): the
        # address asked, the seconds allowed, the key variable's name. Never a key.
        self.api_base: str | None = None
        self.timeout_seconds: float | None = None
        self.key_env: str | None = None
        self.refused = False  # a connection error because nothing listens at the address

    def __reduce__(self):  # keep it picklable (Celery results, multiprocessing)
        return (
            _rebuild_provider_error,
            (self.reason, self.kind, self.retryable, self.timeout, self.status, self.after_first_chunk, self.detail),
        )

    def __repr__(self) -> str:
        return (
            f"ProviderError({self.reason!r}, kind={self.kind!r}, retryable={self.retryable}, "
            f"timeout={self.timeout}, status={self.status}, after_first_chunk={self.after_first_chunk})"
        )


def _rebuild_provider_error(reason, kind, retryable, timeout, status, after_first_chunk, detail) -> ProviderError:
    return ProviderError(
        reason,
        kind=kind,
        retryable=retryable,
        timeout=timeout,
        status=status,
        after_first_chunk=after_first_chunk,
        detail=detail,
    )


def model_string(target: ModelTarget) -> str:
    """The model name litellm routes by: ``route/model``."""
    return f"{target.route}/{target.model}"


# Sent as the key of a target that names no key variable (a local server needs none): litellm must
# not reach for a key of its own in the environment (OPENAI_API_KEY …) and hand it to that address.
NO_KEY = "no-key"


def _require_key(target: ModelTarget) -> None:
    """A target whose key variable is not set fails here, before anything is sent."""
    if target.key_env and not target.api_key:
        error = ProviderError(f"the key variable {target.key_env} is not set", kind="missing_key", retryable=True)
        raise _located(error, target)


def _located(error: ProviderError, target: ModelTarget) -> ProviderError:
    error.api_base = target.api_base
    error.timeout_seconds = float(target.timeout)
    error.key_env = target.key_env
    return error


def _failure(error: BaseException, target: ModelTarget, *, after_first_chunk: bool = False) -> ProviderError:
    return _located(classify_error(error, api_key=target.api_key, after_first_chunk=after_first_chunk), target)


# --------------------------------------------------------------------------
# litellm, loaded on first use
# --------------------------------------------------------------------------
logger = logging.getLogger("gavel.llm")
_load_lock = threading.Lock()
_loaded: Any = None
_known_models: set[str] = set()


def _litellm() -> Any:
    """Import and configure litellm once; never reached at Django start-up."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _load_lock:
        if _loaded is None:
            # Both before the import, and set rather than defaulted (an environment saying False
            # would make the import fetch over the network): the price map is read from the
            # package, and tokenizers/catalogs litellm would fetch on its own are not.
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            os.environ["LITELLM_OFFLINE_MODE"] = "true"
            import litellm

            litellm.suppress_debug_info = True  # no banners on stdout
            litellm.turn_off_message_logging = True  # callbacks, if anyone adds one, get no text
            # Gavel installs no litellm callbacks: the per-chunk success logging of a stream (a thread-pool
            # job for every chunk) would cost CPU for nobody. Measured: a 13-chunk stream 48 -> 29 ms.
            litellm.disable_streaming_logging = True
            if "telemetry" in vars(litellm):
                litellm.telemetry = False
            _loaded = litellm
    return _loaded


def preload() -> None:
    """Import and configure litellm now (Celery workers, before their first task), and let it build
    what it builds on its first call (request models, provider tables: about 0.2 s of CPU) with one
    answer from its own mock_response, which sends nothing anywhere. Otherwise the first tasks of a
    worker's threads would all build it at once, while the queue waits."""
    litellm = _litellm()
    try:
        litellm.completion(model="openai/gavel-warm-up", messages=[{"role": "user", "content": "warm up"}],
                           mock_response="ok", api_key="gavel-warm-up", timeout=1.0, max_retries=0,
                           num_retries=0)
    except Exception:  # noqa: BLE001 - a warm-up that fails costs the first call its time, nothing more
        logger.debug("litellm warm-up call failed", exc_info=True)


def _ensure_model_known(litellm: Any, target: ModelTarget, mode: str) -> None:
    """Put an unknown model into litellm's price map (without prices).

    For some routes (ollama, for one) litellm asks the provider's *default*
    host what an unmapped model is, while registering or pricing it; an entry
    in the map makes it skip that. Prices stay ours: see ``_cost``.
    """
    key = model_string(target)
    if key in _known_models:
        return
    with _load_lock:
        cost_map = litellm.model_cost
        if key not in cost_map and target.model not in cost_map:
            cost_map[key] = {"litellm_provider": target.route, "mode": mode}
        _known_models.add(key)


# --------------------------------------------------------------------------
# Chat completions
# --------------------------------------------------------------------------
def _client_timeout(seconds: float) -> float:
    """The timeout handed to litellm: from two seconds up, the time allowed rounded down to a whole
    second; below that, exactly the time allowed.

    litellm keeps one SDK client, with its own connection pool, per distinct timeout (the value is
    part of its client cache key). A judge's timeout is the time its chain has left, a different
    float on every call, so every call built a new client and a new connection, and up to 200 of
    them stayed open per process (measured: 200 clients and ~200 open sockets after 200 judge
    calls, 1–2 ms more CPU per call). Rounded down, a call still ends within the time allowed. A
    short remainder is left exact: rounded, it would end an attempt early and hand a fallback the
    sliver left over, where the chain's whole time belongs to the attempt that started in it.
    """
    seconds = float(seconds)
    return float(math.floor(seconds)) if seconds >= 2 else seconds


def _call_kwargs(
    target: ModelTarget,
    messages: Sequence[Mapping[str, Any]],
    temperature: float | None,
    max_tokens: int | None,
    response_format: Mapping[str, Any] | None,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: str | Mapping[str, Any] | None = None,
    user: str | None = None,
    client_parameters: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": model_string(target),
        "messages": [dict(message) for message in messages],
        "api_key": target.api_key or NO_KEY,
        "timeout": _client_timeout(target.timeout),
        "max_retries": 0,  # the openai client's own retries
        "num_retries": 0,  # litellm's retries: one call means one request
    }
    if target.route == DEMO_ROUTE:
        # The demo model of the embedded default: litellm's own mock_response answers (model echo:
        # the last user message; model judge: a verdict), so the first run needs no model server.
        kwargs["model"] = f"openai/{target.model}"
        kwargs["mock_response"] = demo_answer(messages, target.model)
        kwargs["api_key"] = "demo-no-key"
    elif target.api_base:
        kwargs["api_base"] = target.api_base
    if temperature is not None:
        kwargs["temperature"] = temperature
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if response_format is not None:
        kwargs["response_format"] = dict(response_format)
    if tools:
        kwargs["tools"] = [dict(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice if isinstance(tool_choice, str) else dict(tool_choice)
    if user:
        kwargs["user"] = user
        if target.route == "openai":
            # litellm sends `user` only for OpenAI's own catalogue models; SPEC §11.5 passes it on to
            # every OpenAI-compatible provider, so it goes in the body as well.
            kwargs["extra_body"] = {"user": user}
    if client_parameters:
        # What an outside client asked for (the OpenAI gateway: stop, seed, penalties, …), as sent.
        kwargs.update(_client_parameters(target, client_parameters))
    return kwargs


# Parameters the gateway passes on that litellm handles itself on every route (see _call_kwargs).
_HANDLED = frozenset({"user", "temperature", "max_tokens"})


def check_parameters(target: ModelTarget, names: Sequence[str]) -> None:
    """Raise UnsupportedParameters for the client parameters litellm does not send to the target's
    route: a parameter that changes the answer reaches the provider or is refused, never dropped."""
    if target.route == DEMO_ROUTE:
        return
    litellm = _litellm()
    try:
        supported = set(litellm.get_supported_openai_params(model=target.model, custom_llm_provider=target.route)
                        or ())
    except Exception:  # an unknown route: nothing is known to be sent
        supported = set()
    missing = [name for name in names if name not in supported and name not in _HANDLED]
    if missing:
        raise UnsupportedParameters(missing)


def _client_parameters(target: ModelTarget, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The client's parameters as litellm's keyword arguments, checked first (check_parameters)."""
    check_parameters(target, list(parameters))
    return {name: (dict(value) if isinstance(value, Mapping) else value) for name, value in parameters.items()}


# A provider with this route is answered by litellm's mock_response, never by a model: the demo
# model of the embedded default (judging/demo_model.py, docs/decisions.md).
DEMO_ROUTE = "demo"


def demo_answer(messages: Sequence[Mapping[str, Any]], model: str = "echo") -> str:
    """The demo model's answer: model ``judge`` answers a judge's verdict, any other model echoes
    the last user message (see ``judging.demo_model``)."""
    from judging import demo_model

    return demo_model.answer(model, messages)


def complete(
    target: ModelTarget,
    messages: Sequence[Mapping[str, Any]],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    response_format: Mapping[str, Any] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    user: str | None = None,
    client_parameters: Mapping[str, Any] | None = None,
) -> ModelReply:
    """Ask the target once and return the whole answer; raise ``ProviderError``."""
    _require_key(target)
    litellm = _litellm()
    _ensure_model_known(litellm, target, "chat")
    kwargs = _call_kwargs(target, messages, temperature, max_tokens, response_format, tools, tool_choice, user,
                          client_parameters)
    started = time.monotonic()
    try:
        response = litellm.completion(**kwargs)
    except Exception as error:  # every failure leaves here as a ProviderError
        raise _failure(error, target) from error
    latency_ms = (time.monotonic() - started) * 1000

    choice = response.choices[0] if response.choices else None
    message = getattr(choice, "message", None)
    text = clean_text(getattr(message, "content", None) or "")
    tool_calls = [_tool_call_of(call) for call in (getattr(message, "tool_calls", None) or [])]
    usage, estimated = _usage_of(getattr(response, "usage", None))
    if usage is None:
        usage, estimated = _estimate_usage(litellm, target, messages, text, tool_calls), True
    cost = _cost(litellm, target, usage, response=response)
    return ModelReply(
        text=text,
        tool_calls=tool_calls,
        usage=usage,
        cost=cost,
        model=getattr(response, "model", None),
        raw_finish_reason=getattr(choice, "finish_reason", None),
        usage_estimated=estimated,
        latency_ms=latency_ms,
    )


def stream(
    target: ModelTarget,
    messages: Sequence[Mapping[str, Any]],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    response_format: Mapping[str, Any] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    user: str | None = None,
    client_parameters: Mapping[str, Any] | None = None,
) -> StreamHandle:
    """Open a streamed answer.

    The request is sent here, so a provider that refuses, fails or times out
    before answering raises ``ProviderError`` from this call. The returned
    handle yields text deltas; ``handle.reply`` holds the whole answer (tool
    calls assembled, usage, cost) once it is exhausted. The timeout bounds
    the wait for each piece, not the whole stream.
    """
    _require_key(target)
    litellm = _litellm()
    _ensure_model_known(litellm, target, "chat")
    kwargs = _call_kwargs(target, messages, temperature, max_tokens, response_format, tools, tool_choice, user,
                          client_parameters)
    kwargs["stream"] = True
    if _supports_stream_usage(litellm, target):
        kwargs["stream_options"] = {"include_usage": True}
    started = time.monotonic()
    try:
        chunks = litellm.completion(**kwargs)
    except Exception as error:
        raise _failure(error, target) from error
    return StreamHandle(litellm, target, list(messages), chunks, started)


def _supports_stream_usage(litellm: Any, target: ModelTarget) -> bool:
    try:
        params = litellm.get_supported_openai_params(model=target.model, custom_llm_provider=target.route)
    except Exception:  # an unknown route: ask for nothing it may refuse
        return False
    return bool(params) and "stream_options" in params


class StreamHandle:
    """Iterate for text deltas; read ``reply`` after the last one.

    An error while iterating is raised as ``ProviderError`` with
    ``after_first_chunk`` telling whether any text had been yielded (after
    which no fallback may replace the answer).
    """

    def __init__(
        self,
        litellm: Any,
        target: ModelTarget,
        messages: list[Mapping[str, Any]],
        chunks: Any,
        started: float,
    ) -> None:
        self._litellm = litellm
        self._target = target
        self._messages = messages
        self._chunks = chunks
        self._started = started
        self._parts: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}
        self._usage: dict[str, int] | None = None
        self._model: str | None = None
        self._finish_reason: str | None = None
        self._iterator: Iterator[str] | None = None
        self.reply: ModelReply | None = None
        self.first_chunk_at: float | None = None  # seconds after the request, when text first arrived

    @property
    def started(self) -> bool:
        """True once text has been yielded (a fallback may no longer replace it)."""
        return bool(self._parts)

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join(self._parts)

    @property
    def done(self) -> bool:
        return self.reply is not None

    def __iter__(self) -> Iterator[str]:
        if self._iterator is None:
            self._iterator = self._deltas()
        return self._iterator

    def __enter__(self) -> StreamHandle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading and release the connection (safe to call twice)."""
        close = getattr(self._chunks, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # closing a broken stream must not raise  # noqa: S110
                pass

    def read_all(self) -> ModelReply:
        """Consume the rest of the stream and return the reply."""
        for _delta in self:
            pass
        assert self.reply is not None
        return self.reply

    def _deltas(self) -> Iterator[str]:
        try:
            for chunk in self._chunks:
                self._take_metadata(chunk)
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(choice, "delta", None)
                    if getattr(choice, "finish_reason", None):
                        self._finish_reason = choice.finish_reason
                    if delta is None:
                        continue
                    self._take_tool_calls(getattr(delta, "tool_calls", None))
                    content = clean_text(getattr(delta, "content", None))
                    if content:
                        if not self._parts:
                            self.first_chunk_at = time.monotonic() - self._started
                        self._parts.append(content)
                        yield content
        except ProviderError:
            raise
        except GeneratorExit:
            self.close()
            raise
        except Exception as error:
            self.close()
            raise _failure(error, self._target, after_first_chunk=self.started) from error
        self._finish()

    def _take_metadata(self, chunk: Any) -> None:
        model = getattr(chunk, "model", None)
        if model:
            self._model = model
        usage, _estimated = _usage_of(getattr(chunk, "usage", None))
        if usage is not None:
            self._usage = usage

    def _take_tool_calls(self, deltas: Any) -> None:
        for position, delta in enumerate(deltas or []):
            index = _get(delta, "index")
            index = position if index is None else int(index)
            call = self._calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            if _get(delta, "id"):
                call["id"] = _get(delta, "id")
            function = _get(delta, "function")
            if function is not None:
                if _get(function, "name") and not call["name"]:
                    call["name"] = clean_text(_get(function, "name"))
                if _get(function, "arguments"):
                    call["arguments"] += clean_text(_get(function, "arguments"))

    def _finish(self) -> None:
        text = self.text
        tool_calls = [self._calls[index] for index in sorted(self._calls)]
        usage, estimated = self._usage, False
        if usage is None:
            usage, estimated = _estimate_usage(self._litellm, self._target, self._messages, text, tool_calls), True
        self.reply = ModelReply(
            text=text,
            tool_calls=tool_calls,
            usage=usage,
            cost=_cost(self._litellm, self._target, usage),
            model=self._model,
            raw_finish_reason=self._finish_reason,
            usage_estimated=estimated,
            latency_ms=(time.monotonic() - self._started) * 1000,
        )


# --------------------------------------------------------------------------
# Decisions (System One, through litellm.systemone)
# --------------------------------------------------------------------------
def decide(
    target: ModelTarget,
    questions: Mapping[str, Mapping[str, Any]],
    state: Any,
) -> DecisionReply:
    """Ask a native decision model once, in the System One shape.

    ``questions`` maps a key to ``{"type": "choice", "instructions": ...,
    "criteria": {"allow": ..., "deny": ..., "pass": ...}}``; ``state`` is the
    thing judged (a string or JSON). An answer litellm cannot parse raises a
    non-retryable ``ProviderError`` of kind ``unusable_response``.
    """
    _require_key(target)
    litellm = _litellm()
    _ensure_model_known(litellm, target, "decisions")
    kwargs: dict[str, Any] = {
        "model": model_string(target),
        "state": state,
        "questions": {key: dict(question) for key, question in questions.items()},
        "api_key": target.api_key or NO_KEY,
        "timeout": _client_timeout(target.timeout),
        "max_retries": 0,
        "num_retries": 0,
        "model_info": dict(_DECISION_MODEL_INFO),
    }
    if target.api_base:
        kwargs["api_base"] = target.api_base
    started = time.monotonic()
    try:
        response = litellm.systemone(**kwargs)
    except Exception as error:
        raise _failure(error, target) from error
    latency_ms = (time.monotonic() - started) * 1000

    answers = {
        str(key): answer.model_dump(mode="python") if hasattr(answer, "model_dump") else dict(answer)
        for key, answer in (response.answers or {}).items()
    }
    raw_usage = getattr(response, "usage", None)
    prompt = int(getattr(raw_usage, "input_tokens", 0) or 0)
    completion = int(getattr(raw_usage, "output_tokens", 0) or 0)
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return DecisionReply(
        answers=answers,
        usage=usage,
        cost=_cost(litellm, target, usage, response=response),
        model=getattr(response, "model", None),
        latency_ms=latency_ms,
    )


# --------------------------------------------------------------------------
# Tokens and cost
# --------------------------------------------------------------------------
def token_count(model: str, messages: Sequence[Mapping[str, Any]]) -> int:
    """litellm's token count of ``messages`` for ``model`` (``route/model`` or bare).

    Never fails: when litellm cannot count, a rough estimate (4 characters a
    token) is returned.
    """
    litellm = _litellm()
    try:
        return int(litellm.token_counter(model=model, messages=[dict(message) for message in messages]))
    except Exception:
        return _rough_tokens(messages)


def _rough_tokens(value: Any) -> int:
    if isinstance(value, str):
        return max(1, math.ceil(len(value) / 4)) if value else 0
    if isinstance(value, Mapping):
        return sum(_rough_tokens(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_rough_tokens(item) for item in value)
    return 0


def _usage_of(raw: Any) -> tuple[dict[str, int] | None, bool]:
    if raw is None:
        return None, False
    prompt = _get(raw, "prompt_tokens")
    completion = _get(raw, "completion_tokens")
    if prompt is None and completion is None:
        return None, False
    prompt, completion = int(prompt or 0), int(completion or 0)
    total = _get(raw, "total_tokens")
    total = int(total) if total else prompt + completion
    if prompt == 0 and completion == 0:
        return None, False
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}, False


def _estimate_usage(
    litellm: Any,
    target: ModelTarget,
    messages: Sequence[Mapping[str, Any]],
    text: str,
    tool_calls: Sequence[Mapping[str, str]],
) -> dict[str, int]:
    name = model_string(target)
    try:
        prompt = int(litellm.token_counter(model=name, messages=[dict(message) for message in messages]))
    except Exception:
        prompt = _rough_tokens(list(messages))
    answer = text + "".join(call.get("name", "") + call.get("arguments", "") for call in tool_calls)
    try:
        completion = int(litellm.token_counter(model=name, text=answer, count_response_tokens=True)) if answer else 0
    except Exception:
        completion = _rough_tokens(answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _cost(litellm: Any, target: ModelTarget, usage: Mapping[str, int], *, response: Any = None) -> float:
    """Cost in the price map's currency. The target's own prices win; litellm's
    local price map is only a fallback, and looking it up never fails a call."""
    if target.price_in_per_mtok is not None or target.price_out_per_mtok is not None:
        return (
            usage.get("prompt_tokens", 0) * (target.price_in_per_mtok or 0.0)
            + usage.get("completion_tokens", 0) * (target.price_out_per_mtok or 0.0)
        ) / 1_000_000
    try:
        hidden = getattr(response, "_hidden_params", None) or {}
        known = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
        if isinstance(known, (int, float)) and math.isfinite(known) and known > 0:
            return float(known)
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model_string(target),
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
        )
        cost = float(prompt_cost or 0.0) + float(completion_cost or 0.0)
        return cost if math.isfinite(cost) and cost >= 0 else 0.0
    except Exception:  # an unpriced model costs 0.0 rather than failing the call
        return 0.0


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------
_CLIENT_REASONS = {
    400: ("bad_request", "request refused by the provider"),
    401: ("unauthorized", "provider refused the credentials"),
    402: ("payment_required", "provider refused: payment required"),
    403: ("forbidden", "provider refused access"),
    404: ("not_found", "model or endpoint not found"),
    409: ("conflict", "provider reported a conflict"),
    413: ("too_large", "request too large for the provider"),
    422: ("unprocessable", "provider could not process the request"),
}


def classify_error(error: BaseException, *, api_key: str | None = None, after_first_chunk: bool = False) -> ProviderError:
    """Turn whatever a litellm call raised into a ``ProviderError``."""
    if isinstance(error, ProviderError):
        return error
    chain = _exception_chain(error)
    top = error
    original = getattr(error, "original_exception", None)
    if type(error).__name__ == "MidStreamFallbackError" and isinstance(original, BaseException):
        top = original  # litellm's wrapper for a broken stream; the cause decides
    status = _status_of(top)
    detail = _safe_detail(error, api_key)

    def build(kind: str, reason: str, *, retryable: bool, timeout: bool = False, code: int | None = None):
        if after_first_chunk:
            reason = f"stream broke after the first chunk: {reason}"
        return ProviderError(
            reason,
            kind=kind,
            retryable=retryable,
            timeout=timeout,
            status=code,
            after_first_chunk=after_first_chunk,
            detail=detail,
        )

    if any(_is_timeout(item) for item in chain):
        client_side = any(_is_transport_timeout(item) for item in chain)
        return build("timeout", "timed out", retryable=True, timeout=True, code=None if client_side else status)
    if any(type(item).__name__ == "DecisionsResponseValidationError" for item in chain):
        return build("unusable_response", "provider answer could not be parsed", retryable=False)
    if any(_is_transport_error(item) for item in chain):
        if any(_is_refused(item) for item in chain):
            refused = build("connection", "connection refused", retryable=True)
            refused.refused = True
            return refused
        return build("connection", "connection to the provider failed", retryable=True)
    if status == 429 or _is_instance_named(top, "RateLimitError"):
        return build("rate_limited", "rate limited by the provider (HTTP 429)", retryable=True, code=429)
    if _is_instance_named(top, "APIConnectionError"):
        return build("connection", "connection to the provider failed", retryable=True)
    if status is not None and status >= 500:
        return build("server_error", f"provider error (HTTP {status})", retryable=True, code=status)
    if status is not None and 400 <= status < 500:
        kind, reason = _CLIENT_REASONS.get(status, ("client_error", "request refused by the provider"))
        return build(kind, f"{reason} (HTTP {status})", retryable=False, code=status)
    return build("error", "the call failed", retryable=False, code=status)


def _exception_chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    pending: list[BaseException | None] = [error]
    while pending and len(seen) < 20:
        item = pending.pop(0)
        if item is None or any(item is known for known in seen):
            continue
        seen.append(item)
        original = getattr(item, "original_exception", None)
        pending.extend([item.__cause__, item.__context__, original if isinstance(original, BaseException) else None])
    return seen


def _is_refused(error: BaseException) -> bool:
    """Nothing listens at the address (errno ECONNREFUSED), however deep httpx wrapped it."""
    return isinstance(error, ConnectionRefusedError) or "connection refused" in str(error).lower() \
        or "errno 111" in str(error).lower()


def _is_instance_named(error: BaseException, name: str) -> bool:
    return any(klass.__name__ == name for klass in type(error).__mro__)


def _is_transport_timeout(error: BaseException) -> bool:
    try:
        import httpx

        if isinstance(error, httpx.TimeoutException):
            return True
    except ImportError:  # pragma: no cover - httpx comes with litellm
        pass
    return isinstance(error, TimeoutError)


def _is_timeout(error: BaseException) -> bool:
    # litellm.Timeout and openai.APITimeoutError (also what a provider's 408 becomes)
    return _is_transport_timeout(error) or _is_instance_named(error, "APITimeoutError") or (
        _is_instance_named(error, "Timeout") and type(error).__module__.startswith("litellm")
    )


def _is_transport_error(error: BaseException) -> bool:
    try:
        import httpx

        if isinstance(error, httpx.TransportError):
            return True
    except ImportError:  # pragma: no cover
        pass
    if isinstance(error, ConnectionError):
        return True
    # openai's APIConnectionError (not litellm's catch-all of the same name)
    return type(error).__module__.startswith("openai") and _is_instance_named(error, "APIConnectionError")


def _status_of(error: BaseException) -> int | None:
    for candidate in (getattr(error, "status_code", None), getattr(getattr(error, "response", None), "status_code", None)):
        try:
            if candidate is not None:
                return int(candidate)
        except (TypeError, ValueError):
            continue
    return None


_SECRET_SHAPES = re.compile(
    r"(?i)(bearer\s+)[^\s'\"]+|(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[^\s'\",&]+"
    r"|\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}|\bAIza[0-9A-Za-z_\-]{10,}|\bgh[pousr]_[A-Za-z0-9]{10,}"
    r"|//[^/\s:@]+:[^/\s@]+@"
)


def _mask(match: re.Match[str]) -> str:
    if match.group(1):
        return match.group(1) + "***"
    if match.group(2):
        return match.group(2) + "***"
    if match.group(0).startswith("//"):
        return "//***@"
    return "***"


def _safe_detail(error: BaseException, api_key: str | None) -> str:
    try:
        text = str(getattr(error, "message", None) or error)
    except Exception:
        text = type(error).__name__
    if api_key:
        text = text.replace(api_key, "***")
    text = _SECRET_SHAPES.sub(_mask, text)
    text = " ".join(text.split())
    return text[:_DETAIL_LIMIT]


def _get(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _tool_call_of(call: Any) -> dict[str, str]:
    function = _get(call, "function")
    arguments = _get(function, "arguments") if function is not None else None
    if arguments is not None and not isinstance(arguments, str):
        import json

        arguments = json.dumps(arguments)
    return {
        "id": clean_text(str(_get(call, "id") or "")),
        "name": clean_text(str((_get(function, "name") if function is not None else "") or "")),
        "arguments": clean_text(arguments or ""),
    }
