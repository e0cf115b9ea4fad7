"""litellm, loaded on first use: imported and configured once (offline, local price map), never at
Django start-up; ``preload`` warms it up for a Celery worker."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import os
import threading
from typing import Any

from judging.llm.targets import ModelTarget, model_string

logger = logging.getLogger("gavel.llm")
_load_lock = threading.Lock()
_loaded: Any = None
_known_models: set[str] = set()
# Models Gavel put into litellm's price map itself, without prices: litellm prices their answers at 0.
_unpriced_models: set[str] = set()
# Set while litellm answers a call whose price Gavel does not read from it (see `price_unread`).
_price_unread = contextvars.ContextVar("gavel_price_unread", default=False)
# litellm's own calculator, kept by `_skip_unread_prices` (None until litellm is loaded).
_litellm_calculator: Any = None


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
            _skip_unread_prices()
            _loaded = litellm
    return _loaded


def unlogged():
    """The context of a call whose success logging nobody reads. Gavel installs no litellm callbacks,
    yet litellm hands every answered call's success logging to its thread pool (about 1.5 ms of CPU a
    call here, a fifth of litellm's own cost). litellm's flag for a call that another call logs and
    bills (`litellm._internal_context.internal_sub_call`) skips that job and nothing the answer
    carries: the price is set before it (`_hidden_params`). Private to litellm, which is pinned
    exactly; tests/judging/test_llm.py fails if a version stops honouring it, and without it a call
    is logged as before."""
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:  # pragma: no cover - another litellm: its logging runs, nothing else changes
        return contextlib.nullcontext()
    return internal_sub_call()


def _skip_unread_prices() -> None:
    """Let litellm skip pricing an answer nobody reads the price of.

    litellm prices every answer as it returns it (`Logging.response_cost_calculator`, from
    `set_hidden_params`): for a model it does not know that is model-map lookups, a zero-cost
    diagnostic and a warning check, about 1.4 ms of CPU a call here, a fifth of litellm's whole call.
    Gavel reads that price only for a target without prices of its own whose model litellm's map
    prices (`usage._cost`). Any other call of Gavel's runs inside `price_unread`, where the calculator
    answers None at once, as it does for a stream. Calls made outside it, and Gavel's calls to priced
    models, are priced as before. litellm is pinned exactly; tests/judging/test_llm.py fails if a
    version renames the method (then nothing is skipped and nothing else changes)."""
    global _litellm_calculator
    try:
        from litellm.litellm_core_utils.litellm_logging import Logging
    except ImportError:  # pragma: no cover - another litellm: every answer is priced, as before
        return
    current = getattr(Logging, "response_cost_calculator", None)
    if current is None or getattr(current, "gavel_skips_unread", False):
        return
    _litellm_calculator = current

    @functools.wraps(current)
    def response_cost_calculator(self, *args, **kwargs):
        if _price_unread.get():
            return None
        return _litellm_calculator(self, *args, **kwargs)

    response_cost_calculator.gavel_skips_unread = True
    Logging.response_cost_calculator = response_cost_calculator


def price_read(target: ModelTarget) -> bool:
    """Whether Gavel reads litellm's price of this target's answers: only when the target has no
    prices of its own and litellm's map may price its model (not one Gavel entered without prices)."""
    if target.price_in_per_mtok is not None or target.price_out_per_mtok is not None:
        return False
    return model_string(target) not in _unpriced_models


@contextlib.contextmanager
def price_unread(target: ModelTarget):
    """The context of one of Gavel's calls to `target`: litellm skips pricing the answer when Gavel
    will not read that price (`price_read`)."""
    token = _price_unread.set(not price_read(target))
    try:
        yield
    finally:
        _price_unread.reset(token)


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
            _unpriced_models.add(key)
        _known_models.add(key)
