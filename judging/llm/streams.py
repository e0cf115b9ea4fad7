"""Streamed chat answers: the request is sent when the stream opens, the handle yields text deltas and
holds the whole answer (tool calls assembled, usage, cost) once it is exhausted."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from judging.llm.calls import _call_kwargs, complete
from judging.llm.errors import ProviderError, answer_broke_off
from judging.llm.loader import _ensure_model_known, _litellm
from judging.llm.targets import ModelReply, ModelTarget, _failure, _get, _require_key, clean_text
from judging.llm.usage import _cost, _estimate_usage, _usage_of

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


def whole_answer(target: ModelTarget, messages: Sequence[Mapping[str, Any]], **options: Any) -> WholeAnswer:
    """Ask for the whole answer at once (no streaming) and hand it back as a one-delta stream.

    For a stream Gavel holds until its verdict: the client receives nothing before screening, so
    streaming from the provider would buy nothing and cost litellm's per-chunk work (measured: a
    40-chunk answer took ~3× a plain call's CPU). Errors before the answer began raise
    ``ProviderError`` from here, as ``stream`` does before its first chunk; an answer whose body broke
    off after it began is raised while iterating, as a stream broken after its first chunk is.
    The timeout bounds the whole call (a stream's bounds each piece).
    """
    try:
        return WholeAnswer(complete(target, messages, **options))
    except ProviderError as error:
        cause = error.__cause__
        if cause is None or not answer_broke_off(cause):
            raise
        return WholeAnswer(None, broken=_failure(cause, target, after_first_chunk=True))


class WholeAnswer:
    """What ``StreamHandle`` offers, for an answer that came whole: one text delta, then ``reply``."""

    def __init__(self, reply: ModelReply | None, *, broken: ProviderError | None = None) -> None:
        self._answer = reply
        self._broken = broken
        self.reply: ModelReply | None = None
        self.first_chunk_at: float | None = reply.latency_ms / 1000 if reply is not None else None

    @property
    def done(self) -> bool:
        return self.reply is not None

    def __iter__(self) -> Iterator[str]:
        if self._broken is not None:
            raise self._broken
        if self._answer is not None and self._answer.text:
            yield self._answer.text
        self.reply = self._answer

    def close(self) -> None:
        """Nothing is open: the answer was read whole."""
