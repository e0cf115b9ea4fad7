"""Consumer tokens: Bearer (or DRF's Token) headers, stored hashed; per-consumer throttling."""
import functools
import json
import logging
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.db import connection
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions, permissions, throttling

from governance.cache import redis_client
from governance.models import THROTTLE_RATE_RE, Configuration, Consumer, PolicyVersion

logger = logging.getLogger("gavel.api")


class ConsumerTokenAuthentication(authentication.BaseAuthentication):
    keywords = ("bearer", "token")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header:
            return None
        if header[0].decode("latin-1").lower() not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(_("Give the token after the word Bearer, with no spaces in it."))
        try:
            token = header[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed(_("The token is not valid.")) from exc
        consumer = consumer_by_token_hash(Consumer.hash_token(token))
        if consumer is None or not consumer.is_active:
            raise exceptions.AuthenticationFailed(_("The token is not valid or has been revoked."))
        return consumer, consumer

    def authenticate_header(self, request):
        return 'Bearer realm="gavel"'


def consumer_by_token_hash(token_hash: str) -> Consumer | None:
    """The consumer holding this token, by a written-out statement: it runs on every request, and a
    queryset would be built and compiled each time (docs/operations.md, the hot path).

    The same statement reads the policy version and the configurations granted to the consumer: the
    consumer carries them as `grants_snapshot` (version, {identifier: id}), and the request's
    configurations are resolved from it without a statement of their own
    (governance.screening.service.resolve_configurations)."""
    sql, names, converters, snapshot = _consumer_statement(connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(sql, [token_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    values = []
    for value, (field, field_converters) in zip(row, converters):
        for converter in field_converters:
            value = converter(value, field, connection)
        values.append(value)
    consumer = Consumer.from_db(connection.alias, names, values)
    if snapshot:
        version, granted = row[len(names):]
        consumer.grants_snapshot = (version or 1, {name: pk for name, pk in json.loads(granted or "[]")})
    return consumer


@functools.cache
def _consumer_statement(alias: str) -> tuple[str, list[str], list[tuple], bool]:
    """The SELECT, the field names, each field's value converters and whether the policy version and
    the granted configurations follow the fields (PostgreSQL and SQLite), for one database (made once)."""
    from django.db import connections

    ops, vendor = connections[alias].ops, connections[alias].vendor
    fields = Consumer._meta.concrete_fields
    table = ops.quote_name(Consumer._meta.db_table)
    columns = ", ".join(f"{table}.{ops.quote_name(field.column)}" for field in fields)
    pairs = {"postgresql": "json_agg(json_build_array(c.identifier, c.id))::text",
             "sqlite": "json_group_array(json_array(c.identifier, c.id))"}.get(vendor)
    if pairs:
        grants = ops.quote_name(Consumer.configurations.through._meta.db_table)
        columns += (
            f", (SELECT value FROM {ops.quote_name(PolicyVersion._meta.db_table)} WHERE id = 1)"
            f", (SELECT {pairs} FROM {grants} g JOIN {ops.quote_name(Configuration._meta.db_table)} c"
            f" ON c.id = g.configuration_id WHERE g.consumer_id = {table}.id)"
        )
    sql = f"SELECT {columns} FROM {table} WHERE token_hash = %s"  # noqa: S608
    # The backend's converters, then the field's own (a JSON field such as `kinds` decodes its text).
    converters = []
    for field in fields:
        column = field.get_col(Consumer._meta.db_table)
        converters.append((field, ops.get_db_converters(column) + column.get_db_converters(connections[alias])))
    return sql, [field.attname for field in fields], converters, bool(pairs)


class IsConsumer(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.user, Consumer)


class IsAdminConsumer(permissions.BasePermission):
    message = _("Only an administrator consumer may use this endpoint.")

    def has_permission(self, request, view):
        return isinstance(request.user, Consumer) and request.user.is_admin


# When the shared cache (Redis) cannot be read or written, the throttle counts in this process's own
# memory instead and tries the shared cache again after SHARED_CACHE_RETRY seconds (docs/decisions.md,
# "Throttling when the cache is down"). A consumer then gets up to its rate per process, not per
# deployment, for the length of the outage; a screening never fails because requests cannot be counted.
SHARED_CACHE_RETRY = 5.0
_fallback_cache = LocMemCache("gavel-throttle-fallback", {"OPTIONS": {"MAX_ENTRIES": 100_000}})
_shared_cache_down_until = 0.0
_fallback_lock = threading.Lock()


class ConsumerRateThrottle(throttling.BaseThrottle):
    """One bucket per consumer, at the consumer's own rate or GAVEL_THROTTLE_RATE.

    A fixed-window counter: one atomic increment per request, whatever the rate (DRF's own throttle
    keeps and re-pickles the list of every request's time in the window, which costs more the higher
    the rate). A window is the rate's period, aligned to the clock; a client may send up to twice its
    rate across a window's edge (docs/decisions.md, "Throttling").
    """

    def allow_request(self, request, view):
        consumer = request.user if isinstance(request.user, Consumer) else None
        if consumer is None:
            return True
        rate = consumer.throttle_rate
        if rate and not THROTTLE_RATE_RE.match(rate):
            # Stored past the field's validator (e.g. before it existed): the default rate, not a 500 on every call.
            logger.warning("consumer %s has an unreadable throttle rate %r; using GAVEL_THROTTLE_RATE",
                           consumer.name, rate)
            rate = ""
        allowed, duration = throttling.SimpleRateThrottle.parse_rate(None, rate or settings.GAVEL_THROTTLE_RATE)
        if allowed is None:
            return True
        now = time.time()
        window = int(now // duration)
        self._wait = (window + 1) * duration - now
        key = f"throttle_consumer_{consumer.pk}_{duration}_{window}"
        global _shared_cache_down_until
        if time.monotonic() >= _shared_cache_down_until:
            try:
                return _count(caches["default"], key, duration) <= allowed
            except Exception as exc:  # any cache failure: count locally, never fail the request
                with _fallback_lock:
                    first = time.monotonic() >= _shared_cache_down_until
                    _shared_cache_down_until = time.monotonic() + SHARED_CACHE_RETRY
                if first:
                    logger.warning("the throttle cannot reach the cache (%s); counting in this process for %ss",
                                   type(exc).__name__, SHARED_CACHE_RETRY)
        with _fallback_lock:
            return _count(_fallback_cache, key, duration) <= allowed

    def wait(self):
        return getattr(self, "_wait", None)


def _count(store, key: str, duration: int) -> int:
    """This request's number in its window: one increment (and the window's expiry set once)."""
    client = redis_client(store)
    if client is not None:
        key = store.make_and_validate_key(key)  # KEY_PREFIX and VERSION, as the cache API would
        # One round trip: Django's cache API would take three (and build a client for each).
        # (SET NX with the expiry makes the window's key once; INCR keeps its expiry. Redis >= 2.6.12.)
        pipe = client.pipeline(transaction=False)
        pipe.set(key, 0, ex=duration + 1, nx=True)
        pipe.incr(key)
        return pipe.execute()[1]
    try:
        return store.incr(key)
    except ValueError:  # the window's first request (or its key has just expired)
        if store.add(key, 1, timeout=duration + 1):
            return 1
        return store.incr(key)  # another process made it meanwhile

