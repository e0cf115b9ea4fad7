"""Django's PostgreSQL backend with a cheaper health check on persistent connections (issue 30):
`SELECT 1` only when the socket says something happened to an idle connection."""
import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgreSQLDatabaseWrapper
from psycopg.pq import TransactionStatus


def nothing_to_read(fd: int) -> bool:
    """True when nothing waits to be read on the socket `fd` right now (no wait, no round trip)."""
    if hasattr(select, "poll"):  # select.select refuses descriptors past 1023
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    readable, _, _ = select.select([fd], [], [], 0)
    return not readable


class DatabaseWrapper(PostgreSQLDatabaseWrapper):
    def close_if_health_check_failed(self):
        """Skip Django's `SELECT 1` on a persistent connection that is idle with nothing to read."""
        # Django checks a reused connection with a whole round trip (`is_usable`) on its first use in
        # every request. Between requests an idle connection in autocommit has nothing to say: the
        # server speaks unasked only to end it (a restart or pg_terminate_backend sends a FATAL, then
        # closes: the socket turns readable) or to tell us something (a NOTICE, a ParameterStatus, a TLS
        # record). So a socket with nothing to read is taken as healthy, and anything else -- something
        # to read, a connection not idle, no descriptor, any error here -- gets Django's real check.
        # What this cannot see: a server gone without closing the TCP connection (a host lost, a network
        # cut). The SELECT 1 would wait on that one as well; TCP keepalives and timeouts are for it.
        if (self.pool or self.connection is None or not self.health_check_enabled
                or self.health_check_done):
            return super().close_if_health_check_failed()  # the pool checks its own; the rest: no-ops
        if self._idle_and_quiet():
            self.health_check_done = True
            return None
        return super().close_if_health_check_failed()

    def _idle_and_quiet(self) -> bool:
        try:
            return (self.connection.info.transaction_status == TransactionStatus.IDLE
                    and nothing_to_read(self.connection.fileno()))
        except Exception:  # a closed or odd connection: never a reason to skip the check
            return False
