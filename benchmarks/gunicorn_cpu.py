"""CPU per request through gunicorn (issue 30): a plain OpenAI-gateway call, a held 40-chunk stream and
a screening against 1,000 forbidden words, each as the CPU the web processes (gunicorn's master and its
workers, read from /proc) spent per request, beside its own baseline measured in the same run: bare
`litellm.completion` of the same call in this process for the gateway, the term matcher alone on the
same text for the screening. With `--old PATH` (a checkout of an earlier commit, e.g. made by
`git worktree add /tmp/h-cost-old cadd143`) the same rows are measured against gunicorn started from
that checkout on the same database as well, both servers running at once and the requests of each row
taking turns between them one by one (a second table: the ratio is what it is for).

Run: DATABASE_URL is not needed (a new PostgreSQL database is made and dropped):
    .venv/bin/python benchmarks/gunicorn_cpu.py [--requests 300] [--rounds 2] [--old /tmp/h-cost-old]
        [--postgres postgres://postgres@127.0.0.1:5432] [--cache redis://127.0.0.1:6379/13]

Real parts: gunicorn (2 sync workers, as `-w 2`), PostgreSQL, Redis (CACHE_URL), the local provider
server in a process of its own (answering 40 words at once). Requests are sent one at a time by one
client thread (a sync worker serves one at a time anyway); CPU is total over N requests divided by N,
the database's and Redis's own CPU not included. Targets: plain call <= 8 ms, screening <= 1.5 ms. The
floor row is a POST to an unknown JSON path (a 404 from Django, no view): what gunicorn, Django's
handler and the middleware cost any request. The round-trip rows are one PostgreSQL statement and one
Redis command from this process: with the floor they give an estimate of the least a screening could
cost here.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.gateway_cpu import ANSWER, MESSAGES  # noqa: E402
from benchmarks.inprocess import new_postgres_database, provider_in_another_process  # noqa: E402
from benchmarks.load import TERMS, TEXT  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
TARGET_PLAIN_MS, TARGET_SCREENING_MS = 8.0, 1.5
# An estimate of a screening's least: what any JSON request costs gunicorn's processes (the 404 row) and
# its three round trips, each timed as this process's CPU for the simplest statement of its kind: the
# token's SELECT, the throttle's Redis call, the evidence record's INSERT (docs/operations.md, "The fifth
# round"). An estimate, not a bound: the round trips are timed here, not in a worker.
ROUND_TRIP_PG, ROUND_TRIP_REDIS = "a PostgreSQL round trip (SELECT 1)", "a Redis round trip (GET)"


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its live children (gunicorn's workers)."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / TICKS
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += tree_cpu(int(child))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


def start_gunicorn(root: Path, env: dict, port: int, app: str = "governance.wsgi:application") -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app, "-w", "2", "-b", f"127.0.0.1:{port}",
         "--timeout", "60"], cwd=root, env={**env, "PYTHONPATH": str(root)},
        stdout=open(f"/tmp/gunicorn-cpu-{port}.log", "w"), stderr=subprocess.STDOUT)
    for _ in range(400):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return process
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.05)
    process.kill()
    sys.exit(f"gunicorn from {root} did not start; see /tmp/gunicorn-cpu-{port}.log")


def django_on_new_database(postgres: str, cache: str, prefix: str, **env: str) -> None:
    """Django on a new PostgreSQL database of the server `postgres` (dropped at exit), migrated, with
    Gavel's settings as a deployment runs them (no GAVEL_TESTING) and Redis at `cache`; `env` on top."""
    os.environ["DATABASE_URL"] = new_postgres_database(postgres.rstrip("/"), prefix)
    os.environ.update({"CACHE_URL": cache, "DJANGO_SETTINGS_MODULE": "governance.settings",
                       "SECRET_KEY": prefix + "benchmark-" + "k" * 40, "ALLOWED_HOSTS": "127.0.0.1",
                       "DEBUG": "0", **env})
    os.environ.pop("GAVEL_TESTING", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def newsletter_consumer(provider, terms: list[str]) -> str:
    """The configuration `newsletter` of `provider` with one list of the forbidden `terms`, and a consumer
    granted it (throttled far above any benchmark's rate); returns the consumer's token. Connections are
    closed after, so that none is carried into a forked server."""
    from django.db import connections

    from governance.models import Configuration, Consumer
    from termlists.models import TermList

    configuration = Configuration.objects.create(identifier="newsletter", provider=provider, model="writer")
    TermList.objects.create(name="forbidden", forbidden="\n".join(terms)).configurations.add(configuration)
    consumer = Consumer(name="bench", throttle_rate="1000000/min")
    token = consumer.issue_token()
    consumer.save()
    consumer.configurations.set([configuration])
    connections.close_all()
    return token


def poster(port: int, token: str):
    def post(path: str, body: dict, expect: int = 200) -> bytes:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {token}",
                                                      "Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        conn.close()
        assert response.status == expect, data[:500]
        return data
    return post


def cpu_per_request(pid: int, send, requests: int) -> float:
    # Warm requests in pairs at once, so that both workers take some: a worker that took none would
    # load litellm (seconds of CPU) inside the timed requests.
    with ThreadPoolExecutor(2) as pair:
        list(pair.map(lambda _: send(), range(30)))
    time.sleep(0.3)
    before = tree_cpu(pid)
    for _ in range(requests):
        send()
    time.sleep(0.3)  # the workers' own after-response work
    return (tree_cpu(pid) - before) * 1000 / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds: alone, each row keeps its lowest; side by side (--old), the sum of all")
    parser.add_argument("--old", type=Path, default=None, help="a checkout of an earlier commit to compare")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--cache", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--port", type=int, default=18510)
    args = parser.parse_args()

    django_on_new_database(args.postgres, args.cache, "gavel-gunicorn-cpu-", LOG_LEVEL="WARNING",
                           BENCH_API_KEY="bench-key")
    from governance.models import Provider
    from judging.llm.loader import _litellm
    from termlists.matcher import TermMatcher

    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    with provider_in_another_process({"text": ANSWER}) as base_url:
        provider = Provider.objects.create(name="local", route="openai", api_base=base_url,
                                           api_key_env="BENCH_API_KEY", trust_zone="local", timeout=10)
        token = newsletter_consumer(provider, TERMS)

        litellm = _litellm()
        bare_kwargs = {"model": "openai/writer", "messages": MESSAGES, "api_key": "bench-key", "api_base": base_url,
                       "timeout": 10.0, "max_retries": 0, "num_retries": 0}
        matcher = TermMatcher(TERMS)

        requests = [
            ("gateway, plain", "/openai/v1/chat/completions", {"model": "newsletter", "messages": MESSAGES}, 200),
            ("gateway, held 40-chunk stream", "/openai/v1/chat/completions",
             {"model": "newsletter", "messages": MESSAGES, "stream": True}, 200),
            ("screening, 1,000 forbidden words", "/api/v1/screenings", {"configuration": "newsletter", "text": TEXT},
             200),
            ("floor: a JSON 404 (no view)", "/api/v1/no-such-endpoint", {}, 404),
        ]
        import psycopg
        import redis

        database = psycopg.connect(os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1),
                                   autocommit=True)
        cache = redis.Redis.from_url(args.cache)
        baselines = {"bare litellm.completion, plain": (lambda: litellm.completion(**bare_kwargs), args.requests),
                     "term matcher alone, 1,000 words": (lambda: matcher.find(TEXT), args.requests * 10),
                     ROUND_TRIP_PG: (lambda: database.execute("SELECT 1").fetchone(), args.requests * 5),
                     ROUND_TRIP_REDIS: (lambda: cache.get("gavel-benchmark-nothing"), args.requests * 5)}
        absolute, loads = alone(args, env, token, requests, baselines)
        versus = side_by_side(args, env, token, requests) if args.old else {}
    report(args, absolute, loads, versus)


def in_process(work, count: int) -> float:
    for _ in range(20):
        work()
    time.sleep(0.2)
    before = time.process_time()
    for _ in range(count):
        work()
    time.sleep(0.2)
    return (time.process_time() - before) * 1000 / count


def alone(args, env: dict, token: str, requests: list, baselines: dict) -> tuple[dict, dict]:
    """This checkout's gunicorn by itself, each row a block of requests after warm ones (a server
    under steady load), the lowest of the rounds; the baselines in this process between rounds."""
    rows: dict[str, float] = {}
    loads: dict[str, float] = {}

    def keep(key, value):
        rows[key] = min(rows.get(key, value), value)
        loads[key] = os.getloadavg()[0]

    for _round in range(args.rounds):
        for name, (work, count) in baselines.items():
            keep(name, in_process(work, count))
        server = start_gunicorn(ROOT, env, args.port)
        post = poster(args.port, token)
        try:
            for name, path, body, expect in requests:
                keep(name, cpu_per_request(server.pid, lambda: post(path, body, expect), args.requests))
        finally:
            server.terminate()
            server.wait(timeout=30)
    return rows, loads


def side_by_side(args, env: dict, token: str, requests: list) -> dict[str, tuple[float, float]]:
    """(this checkout, the old one) per row, both gunicorns running at once and the requests of a row
    taking turns between them one by one: a drift in the machine's speed (seen here by 1.5x within
    minutes) weighs on both alike. Each request meets a worker that another server's request has just
    left colder, so these figures run higher than the ones of `alone`; their ratio is what they are for."""
    roots = {"this": ROOT, "old": args.old.resolve()}
    servers = {label: start_gunicorn(root, env, args.port + 1 + index) for index, (label, root) in enumerate(roots.items())}
    posts = {label: poster(args.port + 1 + index, token) for index, label in enumerate(roots)}
    spent = {(label, name): 0.0 for label in roots for name, *_rest in requests}
    try:
        for _round in range(args.rounds):
            for name, path, body, expect in requests:
                for post in posts.values():  # in pairs at once, so that both workers are warm
                    with ThreadPoolExecutor(2) as pair:
                        list(pair.map(lambda _: post(path, body, expect), range(30)))
                time.sleep(0.3)
                before = {label: tree_cpu(server.pid) for label, server in servers.items()}
                for index in range(args.requests):
                    for label in (list(posts) if index % 2 == 0 else list(posts)[::-1]):
                        posts[label](path, body, expect)
                time.sleep(0.3)  # the workers' own after-response work
                for label, server in servers.items():
                    spent[(label, name)] += tree_cpu(server.pid) - before[label]
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    per = args.requests * args.rounds
    return {name: (spent[("this", name)] * 1000 / per, spent[("old", name)] * 1000 / per)
            for name, *_rest in requests}


def report(args, rows: dict, loads: dict, versus: dict) -> None:
    bare, match = rows["bare litellm.completion, plain"], rows["term matcher alone, 1,000 words"]
    print(f"\nCPU per request through gunicorn (2 sync workers, master + workers from /proc), this checkout alone: "
          f"{args.requests} requests per row after warm ones, lowest of {args.rounds} rounds; PostgreSQL + Redis; "
          f"{os.cpu_count()} CPUs")
    print(f"{'request':<36}{'CPU ms':>9}{'x baseline':>12}{'load 1m':>9}")
    for name, value in rows.items():
        if "round trip" in name:
            continue
        base = match if "screening" in name or "matcher" in name else bare
        print(f"{name:<36}{value:>9.2f}{value / base:>11.2f}x{loads[name]:>9.2f}")
    pg, cache = rows[ROUND_TRIP_PG], rows[ROUND_TRIP_REDIS]
    least = rows["floor: a JSON 404 (no view)"] + 2 * pg + cache
    print(f"\nround trips, this process's CPU: {ROUND_TRIP_PG} {pg:.3f} ms, {ROUND_TRIP_REDIS} {cache:.3f} ms; an "
          f"estimate of a screening's least (the JSON 404 and its three round trips: token, throttle, evidence) {least:.2f} ms, "
          f"{rows['screening, 1,000 forbidden words'] / least:.2f}x of it")
    plain, screening = rows["gateway, plain"], rows["screening, 1,000 forbidden words"]
    print(f"\nbaselines: bare litellm.completion {bare:.2f} ms (gateway rows), the matcher alone {match:.3f} ms "
          f"(screening row), both in this process")
    print(f"target plain call <= {TARGET_PLAIN_MS:g} ms: {'met' if plain <= TARGET_PLAIN_MS else 'NOT met'} "
          f"({plain:.2f} ms)")
    print(f"target screening <= {TARGET_SCREENING_MS:g} ms: {'met' if screening <= TARGET_SCREENING_MS else 'NOT met'} "
          f"({screening:.2f} ms)")
    if versus:
        print(f"\nthis checkout against {args.old}, both running at once, requests taking turns one by one "
              f"({args.requests} x {args.rounds} per row; higher than above, see side_by_side):")
        print(f"{'request':<36}{'this ms':>9}{'old ms':>9}{'x old':>8}")
        for name, (this, old) in versus.items():
            print(f"{name:<36}{this:>9.2f}{old:>9.2f}{this / old:>7.2f}x")


if __name__ == "__main__":
    main()
