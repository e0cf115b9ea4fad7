"""Provider limits held across every web process and worker (SPEC 2.1, 10.1).

A provider may set `max_concurrency` (calls at once), `requests_per_minute` and
`tokens_per_minute`; 0 means no limit. The counts live in Redis (the cache's server), so every
process sees the same ones, and one Lua script decides atomically:

- calls at once: a sorted set of the calls holding a slot, each with an expiry (its timeout plus a
  margin), so the slot of a process that died comes back by itself;
- requests per minute: a sorted set of the last minute's calls by time — a sliding window, so no
  60 seconds ever hold more than the limit; a call counts from its start and, once it ended, from
  its end (the provider received it in between);
- tokens per minute: the same window, each call counted with its estimated tokens at the start and
  settled to what the provider reported once it answered.

The clock is Redis's own (`TIME`), so processes whose clocks differ still share one window.
Without Redis (the embedded default is one process) the same rules are kept in this process.

`acquire()` answers a `Slot` or raises `ProviderBusy` with the seconds after which asking again
makes sense. A completion waits up to its timeout (then 429 `provider_busy`); a queued task does
not wait in a worker thread: it is sent again with that countdown (governance/work/queue.py).
"""
from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.utils.translation import gettext as _

from governance.cache import redis_client
from governance.errors import ProviderBusy

logger = logging.getLogger("gavel.limits")

# The window of requests_per_minute and tokens_per_minute. Tests may shorten it
# (GAVEL_LIMIT_WINDOW_SECONDS) to see several windows quickly; the code path is the same.
SLOT_MARGIN_SECONDS = 30
POLL_SECONDS = 0.05

# KEYS: concurrency set, requests window, tokens window
# ARGV: token, max_concurrency, rpm, tpm, estimated tokens, slot seconds, window seconds
# Answers {0, ""} when the call may start, {wait_ms, reason} when it may not.
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local token, conc, rpm, tpm = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens, slot_ms, window_ms = tonumber(ARGV[5]), tonumber(ARGV[6]) * 1000, tonumber(ARGV[7]) * 1000
if conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= conc then
    return {math.floor(window_ms / 600) + 50, 'max_concurrency'}
  end
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window_ms)
  if redis.call('ZCARD', KEYS[2]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return {math.max(tonumber(oldest[2]) + window_ms - now, 1) + 5, 'requests_per_minute'}
  end
end
if tpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window_ms)
  local entries = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
  local used = 0
  for i = 1, #entries, 2 do
    used = used + tonumber(string.match(entries[i], '^(%d+):'))
  end
  if used > 0 and used + tokens > tpm then
    local need, wait = used + tokens - tpm, window_ms
    for i = 1, #entries, 2 do
      need = need - tonumber(string.match(entries[i], '^(%d+):'))
      if need <= 0 then wait = tonumber(entries[i + 1]) + window_ms - now; break end
    end
    return {math.max(wait, 1) + 5, 'tokens_per_minute'}
  end
end
if conc > 0 then
  redis.call('ZADD', KEYS[1], now + slot_ms, token)
  redis.call('PEXPIRE', KEYS[1], slot_ms + 1000)
end
if rpm > 0 then
  redis.call('ZADD', KEYS[2], now, token)
  redis.call('PEXPIRE', KEYS[2], window_ms + 1000)
end
if tpm > 0 then
  redis.call('ZADD', KEYS[3], now, tokens .. ':' .. token)
  redis.call('PEXPIRE', KEYS[3], window_ms + 1000)
end
return {0, ''}
"""

# KEYS: concurrency set, requests window, tokens window. ARGV: token, estimated tokens, actual tokens
# (-1: keep the estimate). A finished call is counted in the windows from the moment it ended: the
# provider received it at some moment between start and end, so a minute counted at the provider
# never holds more than the limit (for calls shorter than the window).
RELEASE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[2], now, ARGV[1])
end
local old = ARGV[2] .. ':' .. ARGV[1]
if redis.call('ZSCORE', KEYS[3], old) then
  local actual = tonumber(ARGV[3])
  redis.call('ZREM', KEYS[3], old)
  redis.call('ZADD', KEYS[3], now, (actual >= 0 and actual or ARGV[2]) .. ':' .. ARGV[1])
end
return 1
"""


def rough_tokens(value) -> int:
    """A call's tokens before it is made: four characters a token (settled to the real count after)."""
    if isinstance(value, str):
        return (len(value) + 3) // 4
    if isinstance(value, dict):
        return sum(rough_tokens(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return sum(rough_tokens(item) for item in value)
    return 0


def limited(provider) -> bool:
    return bool(provider.max_concurrency or provider.requests_per_minute or provider.tokens_per_minute)


def window_seconds() -> float:
    return float(getattr(settings, "GAVEL_LIMIT_WINDOW_SECONDS", 60))


@dataclass
class Slot:
    provider: object = None
    token: str = ""
    tokens: int = 0
    released: bool = False
    store: object = field(default=None, repr=False)

    def release(self, actual_tokens: int | None = None) -> None:
        if self.released or self.provider is None:
            return
        self.released = True
        try:
            self.store.release(self, actual_tokens)
        except Exception:  # noqa: BLE001 - a slot always expires by itself; never fail an answered call
            logger.warning("could not release a limit slot of %s", self.provider.name, exc_info=True)

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()


NO_LIMIT = Slot(released=True)


class RedisCounts:
    def __init__(self, client, prefix):
        self.client = client
        self.prefix = prefix
        self.acquire_script = client.register_script(ACQUIRE)
        self.release_script = client.register_script(RELEASE)

    def keys(self, provider) -> list[str]:
        base = self.prefix(f"gavel_limit_{provider.name}")
        return [f"{base}:c", f"{base}:r", f"{base}:t"]

    def try_acquire(self, provider, token: str, tokens: int, slot_seconds: float) -> tuple[float, str]:
        wait_ms, reason = self.acquire_script(keys=self.keys(provider), args=[
            token, provider.max_concurrency, provider.requests_per_minute, provider.tokens_per_minute, tokens,
            int(slot_seconds), window_seconds()])
        return int(wait_ms) / 1000.0, reason.decode() if isinstance(reason, bytes) else reason

    def release(self, slot: Slot, actual_tokens: int | None) -> None:
        actual = -1 if actual_tokens is None else int(actual_tokens)
        self.release_script(keys=self.keys(slot.provider), args=[slot.token, slot.tokens, actual])


class LocalCounts:
    """The same rules in this process (no Redis: the embedded default runs one process)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.holding: dict[str, dict[str, float]] = {}
        self.requests: dict[str, dict[str, float]] = {}
        self.tokens: dict[str, dict[str, tuple[float, int]]] = {}

    def try_acquire(self, provider, token: str, tokens: int, slot_seconds: float) -> tuple[float, str]:
        now, window = time.monotonic(), window_seconds()
        with self.lock:
            holding = {k: v for k, v in self.holding.get(provider.name, {}).items() if v > now}
            requests = {k: v for k, v in self.requests.get(provider.name, {}).items() if v > now - window}
            used = {k: v for k, v in self.tokens.get(provider.name, {}).items() if v[0] > now - window}
            if provider.max_concurrency and len(holding) >= provider.max_concurrency:
                return window / 600 + 0.05, "max_concurrency"
            if provider.requests_per_minute and len(requests) >= provider.requests_per_minute:
                return min(requests.values()) + window - now + 0.005, "requests_per_minute"
            total = sum(n for _at, n in used.values())
            if provider.tokens_per_minute and total and total + tokens > provider.tokens_per_minute:
                need, wait = total + tokens - provider.tokens_per_minute, window
                for at, n in sorted(used.values()):
                    need -= n
                    if need <= 0:
                        wait = at + window - now
                        break
                return max(wait, 0.001) + 0.005, "tokens_per_minute"
            if provider.max_concurrency:
                holding[token] = now + slot_seconds
            if provider.requests_per_minute:
                requests[token] = now
            if provider.tokens_per_minute:
                used[token] = (now, tokens)
            self.holding[provider.name], self.requests[provider.name], self.tokens[provider.name] = (
                holding, requests, used)
        return 0.0, ""

    def release(self, slot: Slot, actual_tokens: int | None) -> None:
        now = time.monotonic()
        with self.lock:
            self.holding.get(slot.provider.name, {}).pop(slot.token, None)
            requests = self.requests.get(slot.provider.name, {})
            if slot.token in requests:
                requests[slot.token] = now
            used = self.tokens.get(slot.provider.name, {})
            if slot.token in used:
                used[slot.token] = (now, used[slot.token][1] if actual_tokens is None else int(actual_tokens))


_local = LocalCounts()


def _counts():
    store = caches["default"]
    if isinstance(store, RedisCache):
        backend = store._cache
        counts = getattr(backend, "_gavel_limit_counts", None)
        if counts is None:
            counts = backend._gavel_limit_counts = RedisCounts(redis_client(store), store.make_and_validate_key)
        return counts
    return _local


def acquire(provider, *, tokens: int = 0, wait_up_to: float = 0.0, slot_seconds: float | None = None) -> Slot:
    """Take a place under the provider's limits, waiting up to `wait_up_to` seconds; else ProviderBusy.

    `tokens` is the call's estimated prompt and answer tokens (tokens_per_minute); `slot_seconds`
    how long a place at once is held at most (the call's timeout and a margin) if never released.
    """
    if not limited(provider):
        return NO_LIMIT
    token = uuid.uuid4().hex
    slot_seconds = slot_seconds or (provider.timeout + SLOT_MARGIN_SECONDS)
    deadline = time.monotonic() + wait_up_to
    while True:
        counts = _counts()
        try:
            wait, reason = counts.try_acquire(provider, token, tokens, slot_seconds)
        except Exception as exc:  # noqa: BLE001 - Redis down: count in this process rather than fail calls
            logger.warning("provider limits cannot reach Redis (%s); counting in this process", type(exc).__name__)
            counts = _local
            wait, reason = counts.try_acquire(provider, token, tokens, slot_seconds)
        if not wait:
            return Slot(provider=provider, token=token, tokens=tokens, store=counts)
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProviderBusy(
                _("The provider %(provider)s is at its limit (%(limit)s); try again in a few seconds.")
                % {"provider": provider.name, "limit": reason}, provider=provider.name, reason=reason, wait=wait)
        time.sleep(min(wait, left, POLL_SECONDS if reason == "max_concurrency" else max(wait, POLL_SECONDS)))
