"""Data in, data out of the door: where a call goes (``ModelTarget``), what comes back (``ModelReply``,
``DecisionReply``), and the provider text made safe before anything reads it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judging.llm.errors import ProviderError, classify_error

# Lone surrogates (U+D800..U+DFFF) cannot be encoded as UTF-8 and NUL cannot be stored by PostgreSQL:
# either would make a response 500, cut a stream or fail a database write downstream.
_UNSAFE_CHARS = re.compile("[\ud800-\udfff]|\x00")


def clean_text(text: Any) -> Any:
    """Provider text made safe before anything else reads it: lone surrogates become U+FFFD, NUL is removed."""
    if not isinstance(text, str) or not _UNSAFE_CHARS.search(text):
        return text
    return _UNSAFE_CHARS.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


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


def _get(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(name)
    return getattr(value, name, None)


def _tool_call_of(call: Any) -> dict[str, str]:
    function = _get(call, "function")
    arguments = _get(function, "arguments") if function is not None else None
    if arguments is not None and not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {
        "id": clean_text(str(_get(call, "id") or "")),
        "name": clean_text(str((_get(function, "name") if function is not None else "") or "")),
        "arguments": clean_text(arguments or ""),
    }
