"""Consumer tokens: Bearer (or DRF's Token) headers, stored hashed; per-consumer throttling."""
import logging
import threading
import time

from django.conf import settings
from django.core.cache.backends.locmem import LocMemCache
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions, permissions, throttling

from governance.models import THROTTLE_RATE_RE, Consumer

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
        consumer = Consumer.objects.filter(token_hash=Consumer.hash_token(token)).first()
        if consumer is None or not consumer.is_active:
            raise exceptions.AuthenticationFailed(_("The token is not valid or has been revoked."))
        return consumer, consumer

    def authenticate_header(self, request):
        return 'Bearer realm="gavel"'


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


class ConsumerRateThrottle(throttling.SimpleRateThrottle):
    """One bucket per consumer, at the consumer's own rate or GAVEL_THROTTLE_RATE."""

    scope = "consumer"

    def __init__(self):
        # The rate depends on the consumer, so it is resolved in allow_request.
        pass

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
        self.rate = rate or settings.GAVEL_THROTTLE_RATE
        self.num_requests, self.duration = self.parse_rate(self.rate)
        global _shared_cache_down_until
        if time.monotonic() >= _shared_cache_down_until:
            try:
                return super().allow_request(request, view)
            except Exception as exc:  # any cache failure: count locally, never fail the request
                with _fallback_lock:
                    first = time.monotonic() >= _shared_cache_down_until
                    _shared_cache_down_until = time.monotonic() + SHARED_CACHE_RETRY
                if first:
                    logger.warning("the throttle cannot reach the cache (%s); counting in this process for %ss",
                                   type(exc).__name__, SHARED_CACHE_RETRY)
        self.cache = _fallback_cache
        return super().allow_request(request, view)

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


from governance.api import schema  # noqa: E402,F401  (registers the OpenAPI description)
