"""The health check of a persistent PostgreSQL connection (issue 30, governance/postgresql/base.py):
a reused idle connection costs no `SELECT 1`, and one whose server side was killed is still found and
replaced before the request's first query. Requests go through Django's WSGI handler in this process,
so the request signals close and check connections exactly as under gunicorn (the test client does not).
"""
import json
import select
import socket
import time

import psycopg
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection, connections
from django.test import RequestFactory

from governance.postgresql.base import DatabaseWrapper, nothing_to_read

BODY = {"configuration": "newsroom", "text": "Ask the Kunde."}  # blocked by the term list


@pytest.fixture
def screen(transactional_db, configuration, make_consumer):
    """POST one screening as a request of its own; return (status, body)."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (CI sets DATABASE_URL)")
    if not connection.settings_dict["CONN_MAX_AGE"]:
        pytest.skip("persistent connections are off (GAVEL_DB_CONN_MAX_AGE=0): nothing is reused")
    from termlists.models import TermList

    TermList.objects.create(name="Brand", forbidden="Kunde").configurations.set([configuration])
    token = make_consumer("check-app", [configuration], throttle_rate="100000/min")[1]
    handler = WSGIHandler()

    def post() -> tuple[int, dict]:
        environ = RequestFactory().post("/api/v1/screenings", json.dumps(BODY), content_type="application/json",
                                        HTTP_AUTHORIZATION=f"Bearer {token}").environ
        statuses = []
        response = handler(environ, lambda status, headers, exc_info=None: statuses.append(status))
        body = b"".join(response)
        response.close()  # request_finished: Django closes or keeps the connection here
        return int(statuses[0].split()[0]), json.loads(body)

    return post


@pytest.fixture
def checks(monkeypatch):
    """How many times Django's round-trip check (`is_usable`) runs."""
    wrapper = connections["default"]
    calls = []
    real = wrapper.is_usable
    monkeypatch.setattr(wrapper, "is_usable", lambda: calls.append(1) or real())
    return calls


def backend_pid() -> int:
    return connections["default"].connection.info.backend_pid


def terminate(pid: int) -> None:
    """pg_terminate_backend from another connection, then wait until the FATAL reached our socket."""
    with psycopg.connect(**connections["default"].get_connection_params(), autocommit=True) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]
    poller = select.poll()
    poller.register(connections["default"].connection.fileno(), select.POLLIN)
    assert poller.poll(5000), "the server did not close the connection"
    time.sleep(0.05)  # the FIN after the FATAL


def test_engine_is_gavels_backend(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (CI sets DATABASE_URL)")
    assert isinstance(connections["default"], DatabaseWrapper)
    assert connection.settings_dict["CONN_HEALTH_CHECKS"]


def test_a_reused_idle_connection_costs_no_select_1(screen, checks):
    assert screen()[0] == 200  # the first request opens the connection
    pid = backend_pid()
    answers = [screen() for _ in range(5)]
    assert all(status == 200 and data["outcome"] == "blocked" for status, data in answers)
    assert backend_pid() == pid, "the same persistent connection served every request"
    assert checks == [], "no round-trip health check on a healthy idle connection"


def test_a_connection_killed_between_requests_is_replaced_before_the_first_query(screen, checks):
    screen()
    killed = backend_pid()
    terminate(killed)
    status, data = screen()
    assert (status, data.get("outcome")) == (200, "blocked"), data  # no error reached the caller
    assert checks == [1], "the readable socket sent the connection to Django's real check"
    assert backend_pid() != killed, "a new connection"
    assert screen()[0] == 200 and checks == [1]


def test_without_looking_at_the_socket_the_killed_connection_reaches_the_caller(screen, monkeypatch):
    """The control of the test above: forced to skip the check, the same kill is a 503."""
    screen()
    terminate(backend_pid())
    monkeypatch.setattr(DatabaseWrapper, "_idle_and_quiet", lambda self: True)
    status, data = screen()
    assert status == 503 and data["error"]["code"] == "unavailable"


def test_a_connection_in_a_transaction_gets_the_real_check(transactional_db, checks):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (CI sets DATABASE_URL)")
    connection.ensure_connection()
    connection.connection.execute("BEGIN")  # behind Django's back: not idle
    try:
        connection.health_check_done = False
        connection.close_if_health_check_failed()
        assert checks == [1] and connection.connection is not None
    finally:
        connection.connection.execute("ROLLBACK")


def test_a_connection_closed_underneath_gets_the_real_check_and_is_dropped(transactional_db, checks):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (CI sets DATABASE_URL)")
    connection.ensure_connection()
    connection.connection.close()  # no descriptor any more
    connection.health_check_done = False
    connection.close_if_health_check_failed()
    assert checks == [1] and connection.connection is None
    with connection.cursor() as cursor:  # and the next query opens a new one
        cursor.execute("SELECT 1")


@pytest.mark.parametrize("poll", [True, False])
def test_nothing_to_read_is_true_until_a_byte_or_the_close_arrives(monkeypatch, poll):
    if not poll:
        monkeypatch.delattr(select, "poll", raising=False)  # select.select, as where poll is missing
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert nothing_to_read(ours.fileno())
        theirs.send(b"N")  # a NOTICE, say
        assert not nothing_to_read(ours.fileno())
        ours.recv(1)
        assert nothing_to_read(ours.fileno())
        theirs.close()  # the server went away
        assert not nothing_to_read(ours.fileno())
