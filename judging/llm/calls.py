"""The one door to language models: single litellm calls (chat and decision), plain data in and out.

Only this package imports litellm, and only inside functions (SPEC §11.4), with
the local price map and offline mode set first, so importing it costs nothing
and nothing but a target's own ``api_base`` is ever contacted. No Django here:
fallback chains, budgets and records belong to the service layer, which gets a
``ProviderError`` saying whether another provider is worth asking.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from judging import demo_model
from judging.llm.errors import UnsupportedParameters
from judging.llm.loader import _ensure_model_known, _litellm, price_unread, unlogged
from judging.llm.targets import (
    NO_KEY, DecisionReply, ModelReply, ModelTarget, _failure, _require_key, _tool_call_of,
    clean_text, model_string,
)
from judging.llm.usage import _cost, _estimate_usage, _usage_of

# Decision questions are answered with these capabilities declared, so litellm
# never asks a provider (or its default host) what the model can do.
_DECISION_MODEL_INFO = {
    "mode": "decisions",
    "supports_box_questions": False,
    "supports_audio_input": False,
    "supports_video_input": False,
}


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
    # The demo model is litellm's mock_response on its openai route (_call_kwargs), which checks the same list.
    route = "openai" if target.route == DEMO_ROUTE else target.route
    litellm = _litellm()
    try:
        supported = set(litellm.get_supported_openai_params(model=target.model, custom_llm_provider=route) or ())
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
        with unlogged(), price_unread(target):
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
        with unlogged(), price_unread(target):
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
