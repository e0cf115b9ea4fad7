"""Database connections while a thread waits (SPEC 10.1: bounded and reused).

In a worker the threads share a pool of connections (governance/celery.py). A model call can take
seconds; holding a connection through it would make the pool's size the limit on calls in flight.
`release()` gives the thread's connection back before such a wait; the next query borrows one again.
Outside a pool (web processes, SQLite) and inside a transaction it does nothing.
"""
from django.db import connections


def release() -> None:
    for connection in connections.all(initialized_only=True):
        if (connection.connection is not None and not connection.in_atomic_block
                and connection.settings_dict.get("OPTIONS", {}).get("pool")):
            connection.close()
