"""Tokens and cost: the usage a provider reported (or litellm's count when it sent none) and its price,
the target's own prices first and litellm's local price map as the fallback."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judging.llm.loader import _litellm, price_read
from judging.llm.targets import ModelTarget, _get, model_string

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


def count_tokens(target: ModelTarget, messages: Sequence[Mapping[str, Any]],
                 tools: Sequence[Mapping[str, Any]] | None = None) -> int:
    """The input tokens of a call to ``target`` with ``messages`` and (function) ``tools``, by litellm's token
    counter for the target's model — counted here, nothing sent (the Messages API's count_tokens). Never
    fails: when litellm cannot count, a rough estimate (4 characters a token)."""
    litellm = _litellm()
    try:
        return int(litellm.token_counter(model=model_string(target), messages=[dict(m) for m in messages],
                                         tools=[dict(tool) for tool in tools] if tools else None))
    except Exception:
        return _rough_tokens([list(messages), list(tools or ())])


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
    if not price_read(target):
        return 0.0  # a model Gavel entered into litellm's map without prices: litellm would say 0 too
    try:
        hidden = getattr(response, "_hidden_params", None) or {}
        known = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
        # litellm prices every answer as it returns it; pricing it again cost a plain call 0.2 ms.
        # Zero is an answer too (a model the map knows without prices): asking again would say the same.
        if isinstance(known, (int, float)) and not isinstance(known, bool) and math.isfinite(known) and known >= 0:
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
