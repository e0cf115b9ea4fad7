"""/metrics under gunicorn with two workers and a real Celery worker (SPEC §13.2): after a scripted mix —
allowed, hinted, blocked, a judge that times out, a cached verdict, a provider failure, a queued task — the
counts of every process, summed exactly (prometheus_client's multiprocess mode, docs/operations.md); and a
request from another machine, straight or through a reverse proxy configured as docs/operations.md says,
gets 401 without the token.
"""
import http.client
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from prometheus_client.parser import text_string_to_metric_families

from governance.models import Configuration, Provider, Task, set_links
from snippets.models import Snippet
from termlists.models import TermList
from tests.governance.test_task_workers import Workers, broker, workers  # noqa: F401  (fixtures)
from tests.production.servers import gunicorn_on_test_database

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TEXTS = {"allowed": "A plain sentence.", "allowed_with_hints": "A revolutionary sentence.",
         "blocked": "An Acme sentence."}
EACH = 6
JUDGE_MODEL = "judge-model"
# Two texts of more than thirty words (a shorter one is not judged: not finished text).
TIMED_OUT = ("Our harbour guide lists the ferries, the opening hours of the market, the walks along the pier "
             "and the cafes by the water, with a map of the old town and a page about the tides and the birds.")
CACHED = ("The spring catalogue shows seven lamps, four chairs, two tables and a shelf for small books, each "
          "photographed in daylight with its size, its wood and its price printed plainly beside it on the page.")
ANSWER = ("The new planning tool finds a free hour for the whole team, books a room that fits and sends the "
          "agenda before the meeting starts, so nobody has to ask twice and every week keeps its shape.")
TOKEN = "metrics-token-for-the-gunicorn-test"


def call(url, path, body=None, token=None, **headers):
    """(status, parsed body or text) of one request; `Connection: close` so the next may go to either worker."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Connection": "close", **({"Content-Type": "application/json"} if data else {}),
               **({"Authorization": f"Bearer {token}"} if token else {}), **headers}
    request = urllib.request.Request(f"{url}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode()


def samples_of(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def mix(provider_server, make_consumer):
    """`metered` (a reporting and a blocking term list) on one provider; `judged` (style rules in report
    mode, verdicts cached for five minutes) asking a judge on a provider of its own with a one-second
    timeout; a consumer granted both."""
    writer = Provider.objects.create(name="writer-provider", route="openai", api_base=provider_server.base_url,
                                     api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=5)
    judges = Provider.objects.create(name="judge-provider", route="openai", api_base=provider_server.base_url,
                                     api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=1)
    metered = Configuration.objects.create(identifier="metered", provider=writer, model="writer-model")
    TermList.objects.create(name="Hype", forbidden="revolutionary", mode="report").configurations.add(metered)
    TermList.objects.create(name="Never", forbidden="Acme").configurations.add(metered)
    judge = Configuration.objects.create(identifier="judge", provider=judges, model=JUDGE_MODEL)
    Snippet.objects.create(identifier="tone", name="Tone of voice", tags=["style"], body="Never promise a date.")
    judged = Configuration.objects.create(identifier="judged", provider=writer, model="writer-model",
                                          rule_mode="report", rule_tags=["style"], judge_cache_seconds=300)
    set_links(judged, "rule_judges", [judge.identifier])
    _consumer, token = make_consumer("metered-app", [metered, judged], throttle_rate="100000/min")
    provider_server.set_default({"text": ANSWER})
    return token


def test_a_scripted_mix_is_counted_exactly_across_two_web_workers_and_a_celery_worker(
        mix, workers, provider_server, tmp_path, monkeypatch):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    monkeypatch.setenv("PROVIDER_TEST_API_KEY", "test-key-not-secret")
    workers.start(1, PROMETHEUS_MULTIPROC_DIR=directory)
    token = mix
    bodies = []  # every run's response body: the checks the metrics must add up to

    with gunicorn_on_test_database(tmp_path, workers=2, PROMETHEUS_MULTIPROC_DIR=str(directory),
                                   GAVEL_CELERY_QUEUE=workers.queue) as url:
        def screen(configuration, text):
            status, body = call(url, "/api/v1/screenings", {"configuration": configuration, "text": text}, token)
            assert status == 200, body
            bodies.append(body)
            return body

        # Allowed, hinted and blocked, concurrently: a sync worker serves one request at a time, so both
        # gunicorn workers take some.
        with ThreadPoolExecutor(max_workers=6) as pool:
            outcomes = [b["outcome"] for b in pool.map(lambda text: screen("metered", text),
                                                       [text for text in TEXTS.values() for _ in range(EACH)])]
        assert Counter(outcomes) == {outcome: EACH for outcome in TEXTS}

        # A judge that does not answer within its provider's one second: delivered with a "not checked" hint.
        provider_server.script([{"for_model": JUDGE_MODEL, "delay": 2.5, "text": '{"violations": []}'}])
        timed_out = screen("judged", TIMED_OUT)
        assert timed_out["outcome"] == "allowed_with_hints"
        assert {"check": "rules_judge", "result": "not_checked", "reason": "timeout"} in timed_out["checks"]

        # The same text twice: the judge is asked once, the second verdict comes from the cache.
        provider_server.script([{"for_model": JUDGE_MODEL, "text": '{"violations": []}'}])
        first, second = screen("judged", CACHED), screen("judged", CACHED)
        assert first["outcome"] == second["outcome"] == "allowed"
        assert {"check": "rules_judge", "result": "passed", "cached": True} in second["checks"]
        assert len([r for r in provider_server.chat_requests if r.model == JUDGE_MODEL]) == 2

        # A completion answered, then one the provider refuses (a 4xx: not retried, no fallback).
        message = [{"role": "user", "content": "Write the launch text."}]
        status, completed = call(url, "/api/v1/completions", {"configuration": "metered", "messages": message},
                                 token)
        assert status == 200 and completed["outcome"] == "allowed", completed
        bodies.append(completed)
        provider_server.script([{"for_model": "writer-model", "status": 400}])
        status, failed = call(url, "/api/v1/completions", {"configuration": "metered", "messages": message}, token)
        assert status == 502, failed

        # A queued task, run by the Celery worker (a process of its own, counting into the same directory).
        status, queued = call(url, "/api/v1/tasks", {"kind": "queued_task", "configuration": "metered",
                                                     "instruction": "Write the launch text."}, token)
        assert status == 202, queued
        deadline = time.monotonic() + 60
        while Task.objects.get(pk=queued["id"]).status in (Task.Status.QUEUED, Task.Status.RUNNING):
            assert time.monotonic() < deadline, f"the worker did not run the task\n{workers.output()}"
            time.sleep(0.2)
        task = Task.objects.get(pk=queued["id"])
        assert task.status == Task.Status.READY, workers.output()
        bodies.append({"outcome": task.outcome, "checks": task.checks})

        status, shown = call(url, "/metrics")
        assert status == 200, shown
        samples = samples_of(shown)

    # Every process counted: both gunicorn workers and the Celery worker wrote counter files.
    assert len(list(directory.glob("counter_*.db"))) == 3, sorted(p.name for p in directory.iterdir())
    runs = "gavel_runs_total"
    for outcome in TEXTS:
        assert value(samples, runs, surface="screening", configuration="metered", outcome=outcome) == EACH, outcome
    assert value(samples, runs, surface="screening", configuration="judged", outcome="allowed_with_hints") == 1
    assert value(samples, runs, surface="screening", configuration="judged", outcome="allowed") == 2
    assert value(samples, runs, surface="api", configuration="metered", outcome="allowed") == 1
    assert value(samples, runs, surface="task", configuration="metered", outcome="allowed") == 1
    assert sum(v for (name, _labels), v in samples.items() if name == runs) == 3 * EACH + 3 + 1 + 1
    # Each check's results: what the runs' own responses said, summed.
    said = Counter((check["check"], check["result"]) for body in bodies for check in body["checks"])
    counted = {(dict(labels)["check"], dict(labels)["result"]): v for (name, labels), v in samples.items()
               if name == "gavel_checks_total" and v}
    assert counted == dict(said)
    assert said[("term_list", "blocked")] == EACH and said[("term_list", "reported")] == EACH
    judge_calls = {dict(labels)["result"]: v for (name, labels), v in samples.items()
                   if name == "gavel_judge_calls_total" and v}
    assert judge_calls == {"timeout": 1, "ok": 1, "cached": 1}
    # Provider calls: the completion and the task answered, the refused completion failed; the judge
    # answered once and timed out once; the cached verdict asked nobody.
    assert value(samples, "gavel_provider_calls_total", provider="writer-provider") == 2
    assert value(samples, "gavel_provider_failures_total", provider="writer-provider") == 1
    assert value(samples, "gavel_provider_seconds_count", provider="writer-provider") == 2
    assert value(samples, "gavel_provider_calls_total", provider="judge-provider") == 1
    assert value(samples, "gavel_provider_failures_total", provider="judge-provider") == 1
    assert value(samples, "gavel_added_seconds_count") == 3 * EACH + 3 + 1 + 1  # every screened run
    # Evidence for every delivered text (the blocked screenings delivered nothing).
    assert value(samples, "gavel_evidence_records_total", surface="screening") == 2 * EACH + 3
    assert value(samples, "gavel_evidence_records_total", surface="api") == 1
    assert value(samples, "gavel_evidence_records_total", surface="task") == 1
    assert value(samples, "gavel_tasks", status="ready") == 1 and value(samples, "gavel_queue_depth") == 0


# --- a request from another machine, and through the reverse proxy of docs/operations.md ---
def this_machines_other_address() -> str:
    """An address of this machine that is not loopback (a connection from it is not "this machine" to
    Gavel): the interface a route out would use; no packet is sent."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    if address.startswith("127."):
        message = "this machine has no address but loopback to send a request from"
        if os.environ.get("GAVEL_REQUIRE_SERVICES"):
            pytest.fail(message)
        pytest.skip(message)
    return address


class ForwardingProxy:
    """A reverse proxy as docs/operations.md configures nginx in front of Gavel on the same machine:
    `proxy_pass` to gunicorn on 127.0.0.1, `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for`
    (the client's header, if any, with the peer's address appended) and nginx's default Host, the upstream."""

    def __init__(self, upstream: str, listen: str):
        self.upstream = upstream.removeprefix("http://")
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                sent = self.headers.get("X-Forwarded-For")
                headers = {name: value for name, value in self.headers.items()
                           if name.lower() not in ("host", "x-forwarded-for", "connection")}
                headers["Host"] = outer.upstream
                headers["X-Forwarded-For"] = f"{sent}, {self.client_address[0]}" if sent else self.client_address[0]
                headers["Connection"] = "close"
                connection = http.client.HTTPConnection(outer.upstream, timeout=30)
                connection.request("GET", self.path, headers=headers)
                answer = connection.getresponse()
                body = answer.read()
                connection.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("connection", "transfer-encoding", "content-length", "server", "date"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((listen, 0), Handler)
        self.url = f"http://{listen}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def get_from(url: str, source: str, token: str | None = None, **headers) -> int:
    """The status of GET url, sent from the local address `source`."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=30, source_address=(source, 0))
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request("GET", "/metrics", headers={"Connection": "close", **headers})
    status = connection.getresponse().status
    connection.close()
    return status


def test_from_another_address_without_the_token_is_401_straight_and_through_the_proxy(db, tmp_path):
    other = this_machines_other_address()
    with gunicorn_on_test_database(tmp_path, workers=2, GAVEL_METRICS_TOKEN=TOKEN, bind="0.0.0.0",
                                   ALLOWED_HOSTS=f"127.0.0.1,{other}") as url:
        port = url.rsplit(":", 1)[1]
        straight = f"http://{other}:{port}"
        assert get_from(straight, other) == 401  # the peer is not loopback
        assert get_from(straight, other, token="wrong") == 401
        assert get_from(straight, other, token=TOKEN) == 200
        assert get_from(url, "127.0.0.1") == 200  # this machine, no proxy
        proxy = ForwardingProxy(url, listen="0.0.0.0")
        try:
            proxied_port = proxy.url.rsplit(":", 1)[1]
            through = f"http://{other}:{proxied_port}"
            assert get_from(through, other) == 401  # gunicorn's peer is the proxy (loopback); the client is not
            # A client cannot make itself loopback: the proxy appends the address it really came from.
            assert get_from(through, other, **{"X-Forwarded-For": "127.0.0.1"}) == 401
            assert get_from(through, other, token=TOKEN) == 200
            assert get_from(f"http://127.0.0.1:{proxied_port}", "127.0.0.1") == 200  # a scraper on this machine
        finally:
            proxy.close()
