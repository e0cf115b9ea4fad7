"""Queued tasks end to end (issue 8): tasks per second with 1 and with 2 Celery workers, and the
queue latency from submit to `ready` (median, p95).

Real parts: PostgreSQL and Redis (DATABASE_URL / CELERY_BROKER_URL, defaults below), real
`celery worker` processes, the local provider server answering instantly, the tasks API through
Django's handler. Run: `.venv/bin/python benchmarks/tasks.py [--tasks 300]`.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "gavel_bench_tasks"
ANSWER = ("Our planning tool finds a free hour for the whole team, books a room that fits and sends the agenda "
          "before the meeting starts, so nobody has to ask twice and the week keeps its shape.")


def setup(database_root: str, broker: str):
    import psycopg

    with psycopg.connect(database_root + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DB_NAME}")
    os.environ["DATABASE_URL"] = f"{database_root}/{DB_NAME}"
    os.environ["CELERY_BROKER_URL"] = broker
    os.environ.setdefault("GAVEL_TESTING", "1")
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ["PROVIDER_TEST_API_KEY"] = "bench-key"
    os.environ["DJANGO_SETTINGS_MODULE"] = "governance.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def start_workers(count: int, queue_name: str) -> list[subprocess.Popen]:
    env = {**os.environ, "GAVEL_CELERY_QUEUE": queue_name, "LOG_LEVEL": "WARNING"}
    processes, logs = [], []
    for index in range(count):
        log = Path("/tmp") / f"{queue_name}-{index}.log"
        logs.append(log)
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "governance", "worker", "-P", "solo", "-Q", queue_name,
             "-n", f"bench{index}-{queue_name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-l", "info"], cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT))
    deadline = time.monotonic() + 120
    while not all(" ready." in log.read_text() for log in logs):
        if time.monotonic() > deadline:
            raise SystemExit("workers did not start")
        time.sleep(0.1)
    return processes


def stop(processes):
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(round(share * (len(ordered) - 1))), len(ordered) - 1)]


def run(workers: int, count: int, client, configuration: str) -> dict:
    from django.conf import settings

    from governance.models import Task

    queue_name = f"gavel-bench-{uuid.uuid4().hex[:6]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue_name
    processes = start_workers(workers, queue_name)
    try:
        started = time.time()
        ids = []
        for i in range(count):
            response = client.post("/api/v1/tasks", {"kind": "queued_task", "configuration": configuration,
                                                     "instruction": f"Text {i}"}, content_type="application/json")
            assert response.status_code == 202, response.content
            ids.append(response.json()["id"])
        submitted = time.time()
        rows = Task.objects.filter(pk__in=ids)
        while rows.exclude(status__in=["ready", "blocked", "failed"]).exists():
            if time.time() - started > float(os.environ.get("BENCH_LIMIT", 600)):
                from collections import Counter
                raise SystemExit(f"tasks did not finish within 10 minutes: "
                                 f"{Counter(rows.values_list('status', flat=True))}")
            time.sleep(0.05)
        finished = list(rows.values_list("status", "created", "finished_at"))
    finally:
        stop(processes)
    assert all(status == "ready" for status, _, _ in finished), {s for s, _, _ in finished}
    last = max(done for _, _, done in finished).timestamp()
    latencies = [(done - created).total_seconds() * 1000 for _, created, done in finished]
    return {"workers": workers, "tasks": count, "submit_s": submitted - started, "total_s": last - started,
            "per_s": count / (last - started), "p50": statistics.median(latencies),
            "p95": percentile(latencies, 0.95)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--broker", default=os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/11")
    args = parser.parse_args()
    setup(args.database, args.broker)

    from django.test import Client

    from governance.models import Configuration, Consumer, Provider
    from tests.provider_server import ProviderServer

    server = ProviderServer().start()
    server.set_default({"text": ANSWER})
    provider = Provider.objects.create(name="bench", route="openai", api_base=server.base_url,
                                       api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=10)
    configuration = Configuration.objects.create(identifier="bench-writer", provider=provider, model="writer")
    consumer = Consumer(name="bench", throttle_rate="1000000/min")
    token = consumer.issue_token()
    consumer.save()
    consumer.configurations.add(configuration)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    results = [run(n, args.tasks, client, configuration.identifier) for n in (1, 2)]
    server.stop()
    print(f"\nqueued tasks end to end: {args.tasks} tasks per run, provider answering instantly, "
          f"PostgreSQL + Redis, solo workers, {os.cpu_count()} CPUs")
    print(f"{'workers':>7} | {'submit s':>8} | {'total s':>7} | {'tasks/s':>7} | {'latency p50 ms':>14} | "
          f"{'p95 ms':>8}")
    print("-" * 68)
    for r in results:
        print(f"{r['workers']:>7} | {r['submit_s']:>8.2f} | {r['total_s']:>7.2f} | {r['per_s']:>7.1f} | "
              f"{r['p50']:>14.0f} | {r['p95']:>8.0f}")
    print(f"\n2 workers / 1 worker throughput: {results[1]['per_s'] / results[0]['per_s']:.2f}x")
    print("latency = finished_at - created of each task; it includes the wait behind earlier tasks, "
          "since all are submitted at once")


if __name__ == "__main__":
    main()
