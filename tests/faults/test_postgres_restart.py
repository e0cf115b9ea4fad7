"""Fault: PostgreSQL restarted under load (a proxy the test cuts; the shared server keeps running).

Gunicorn reaches the test database through a TCP proxy. The test cuts the proxy and terminates the
server-side backends of Gavel's connections (pg_terminate_backend), so every connection really dies,
as in a restart. Under a steady stream of screenings: during the outage every answer is 503 with the
error body (never a 500), nothing is half-written, and afterwards service comes back by itself.
"""
import threading
import time

import httpx
import pytest
from django.db import connection

from tests.faults.services import CuttableProxy
from tests.production.servers import gunicorn_on_test_database

APP = "gavel-fault-test"


@pytest.fixture
def proxied_database():
    s = connection.settings_dict
    if not s["ENGINE"].endswith("postgresql"):
        pytest.skip("needs PostgreSQL (CI sets DATABASE_URL)")
    proxy = CuttableProxy(s["HOST"] or "127.0.0.1", int(s["PORT"] or 5432))
    url = f"postgres://{s['USER']}@127.0.0.1:{proxy.port}/{s['NAME']}?application_name={APP}"
    yield proxy, url
    proxy.stop()


def terminate_backends() -> int:
    with connection.cursor() as cursor:
        # Only this test database's: another pytest-xdist worker or test run may use the same name elsewhere.
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE application_name = %s AND datname = current_database()", [APP])
        return cursor.fetchone()[0]


@pytest.fixture
def token(transactional_db, configuration, make_consumer):
    from termlists.models import TermList

    TermList.objects.create(name="Brand", forbidden="Kunde").configurations.set([configuration])
    return make_consumer("fault-app", [configuration], throttle_rate="100000/min")[1]


def test_a_postgresql_restart_under_load(proxied_database, token, tmp_path):
    from governance.models import GovernanceEvent

    proxy, database_url = proxied_database
    headers = {"Authorization": f"Bearer {token}"}
    body = {"configuration": "newsroom", "text": "Ask the Kunde."}  # blocked: writes one event
    answers: list[tuple[float, int, dict]] = []
    stop = threading.Event()

    with gunicorn_on_test_database(tmp_path, workers=2, database_url=database_url) as url:
        def load():
            with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
                while not stop.is_set():
                    response = client.post("/api/v1/screenings", json=body)
                    answers.append((time.monotonic(), response.status_code, response.json()))

        threads = [threading.Thread(target=load) for _ in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        # Server side first: cutting the proxy first lets the backends see their clients go and exit
        # on their own, sometimes before they could be counted here.
        terminated = terminate_backends()
        proxy.cut()
        cut_at = time.monotonic()
        time.sleep(1.5)
        during = httpx.get(f"{url}/healthz", timeout=10)
        proxy.restore()
        restored_at = time.monotonic()
        time.sleep(1.5)
        stop.set()
        for thread in threads:
            thread.join(timeout=20)
        after = httpx.post(f"{url}/api/v1/screenings", json=body, headers=headers, timeout=10)

    statuses = {status for _, status, _ in answers}
    assert terminated >= 1, "the test must kill real server-side connections"
    assert statuses <= {200, 503}, statuses  # never a 500
    outage = [(status, data) for at, status, data in answers if cut_at + 0.2 < at < restored_at]
    assert outage and all(status == 503 for status, _ in outage), outage[:3]
    assert all(data["error"]["code"] == "unavailable" and set(data["error"]) == {"code", "message", "fields"}
               for _, data in outage)
    assert during.status_code == 503 and during.json()["database"]["ok"] is False
    recovered = [status for at, status, _ in answers if at > restored_at + 0.5]
    assert recovered and set(recovered) == {200}, "service came back by itself"
    assert after.status_code == 200 and after.json()["outcome"] == "blocked"
    # Nothing half-written: every delivered block has its event. A request in flight at the cut (at
    # most one per load thread) may have committed its event before its answer turned into a 503;
    # that event is whole and true, so the count may exceed the delivered blocks by that much.
    delivered = sum(1 for _, status, _ in answers if status == 200) + 1
    stored = GovernanceEvent.objects.filter(decision="blocked").count()
    assert delivered <= stored <= delivered + len(threads), (stored, delivered)
