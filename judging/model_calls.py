"""The judge's model call, handed in: governance installs its call service here once, at start-up.

A judge never reaches for the service that runs model calls (budgets, fallback chains, usage
rows and provider limits live in `governance.runs.calls`, above judging); governance hands it
in when its app is ready (`governance.apps`). Judging sees only this protocol.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ModelCalls(Protocol):
    """What judging asks of the call service. Each call returns (reply, the configuration that served)."""

    def call_model(self, configuration: Any, messages: list[dict], *, correlation_id: str, actor: str,
                   **options: Any) -> tuple[Any, Any]:
        """One chat call through the configuration's chain (a chat judge, SPEC §6.3)."""

    def call_decision(self, configuration: Any, questions: dict, state: Any, *, correlation_id: str, actor: str,
                      timeout_cap: float | None = None) -> tuple[Any, Any]:
        """One System One decision call through the configuration's chain (a decision judge, SPEC §6.4)."""

    def chain_of(self, configuration: Any) -> Sequence[Any]:
        """The configuration, then every fallback a call of it may reach, in order (SPEC §6.2, §7)."""


_NEEDED = ("call_model", "call_decision", "chain_of")
_installed: ModelCalls | None = None


def install(calls: ModelCalls) -> None:
    """Hand judging its model calls (an object or module with `call_model`, `call_decision`, `chain_of`)."""
    global _installed
    missing = [name for name in _NEEDED if not callable(getattr(calls, name, None))]
    if missing:
        raise TypeError(f"model calls without {', '.join(missing)}")
    _installed = calls


def installed() -> ModelCalls:
    """The model calls governance installed; a judge asked before then fails (and passes, SPEC §6.2)."""
    if _installed is None:
        raise RuntimeError("no model calls installed: governance installs its call service when its app is ready")
    return _installed
