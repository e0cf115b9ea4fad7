"""The Redis client behind Django's cache, for the counters that need one round trip (the API's
throttle, the provider limits): made once per cache backend, on its own connection pool."""
from django.core.cache.backends.redis import RedisCache


def redis_client(store):
    """A redis client on the cache backend's own connection pool (same server, timeouts and pool),
    made once and kept on the backend, so it lives and dies with it (Django keeps one per thread).
    None when the cache is not Redis."""
    if not isinstance(store, RedisCache):
        return None
    backend = store._cache
    client = getattr(backend, "_gavel_throttle_client", None)
    if client is None:
        pool = backend._get_connection_pool(write=True)
        client = backend._gavel_throttle_client = backend._client(connection_pool=pool)
    return client
