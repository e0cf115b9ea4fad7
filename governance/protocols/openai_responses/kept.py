"""The output items Gavel returned on the Responses API, kept so a client may send them back as an
`item_reference` (Vercel's AI SDK does by default): screened and redacted as they were sent, for the
token that received them only, and for as long as task texts are kept (GAVEL_TASK_RETENTION_DAYS).

They live in the cache: one that lost an item (evicted, restarted, another process's memory) makes
its reference a 400 that asks for the whole conversation, never a guess.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger("gavel.responses")
PREFIX = "gavel:responses:item"


def _key(consumer_id, item_id: str) -> str:
    return f"{PREFIX}:{consumer_id}:{item_id}"


def keep(consumer_id, output: list[dict]) -> None:
    """Keep a response's output items under their ids."""
    items = {_key(consumer_id, item["id"]): item for item in output if item.get("id")}
    if not items:
        return
    try:
        cache.set_many(items, timeout=settings.GAVEL_TASK_RETENTION_DAYS * 86400)
    except Exception:  # a cache that fails costs only later references (each then a clear 400)
        logger.warning("could not keep %d output items", len(items), exc_info=True)


def reference_ids(body) -> list[str]:
    """The ids of the `item_reference` items of a request body."""
    given = body.get("input") if isinstance(body, dict) else None
    if not isinstance(given, list):
        return []
    return [item["id"] for item in given if isinstance(item, dict) and item.get("type") == "item_reference"
            and isinstance(item.get("id"), str)]


def look_up(consumer_id, ids: list[str]) -> dict[str, dict]:
    """{item id: item} of the referenced items this token received and Gavel still has."""
    if not ids:
        return {}
    try:
        found = cache.get_many([_key(consumer_id, item_id) for item_id in ids])
    except Exception:
        logger.warning("could not look up %d item references", len(ids), exc_info=True)
        return {}
    return {key.rpartition(":")[2]: item for key, item in found.items()}
