"""Load benchmark (issue 10): gunicorn on PostgreSQL and Redis, screenings against a 1,000-term list.

Run (one command; about two minutes):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/gavel_load CACHE_URL=redis://127.0.0.1:6379/3 \\
        .venv/bin/python benchmarks/load.py [--workers 2] [--rate 200] [--seconds 60]

Set-up: the database named by DATABASE_URL is created when missing and migrated; a configuration
with a 1,000-term forbidden list, a consumer without a practical throttle; gunicorn (`--workers`,
sync workers, default persistent connections) on 127.0.0.1; ~2 KB texts that pass the list.
The load generator runs on the same machine (it competes with the server for the CPU).

1. Throughput: wrk (when installed; `apt-get install -y wrk`) with 16 connections for 15 s, else the
   Python generator (raw asyncio sockets) closed-loop with 16 connections. Prints screenings/s,
   p50, p99 and errors.
2. Fixed rate: 200 screenings/s for 60 s, open loop (each request is due at its scheduled time,
   sent from a pool of 32 threads with blocking sockets; latency counts from the scheduled time, so
   a stalled server or a late generator is not hidden). Targets: p99 < 50 ms, 0 errors.
3. Queries per warm screening (the hot path), counted in-process on the same database.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TERMS = [f"forbidden{i:04d}" for i in range(1000)]
SENTENCE = "The harbour woke early and the gulls followed the boats out past the breakwater towards the light. "
TEXT = (SENTENCE * 25)[:2000]


def setup_database() -> str:
    """Create (if missing) and migrate the database; make the policy and a consumer; return the token."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database (it is created when missing).")
    if not os.environ.get("CACHE_URL", "").startswith("redis"):
        sys.exit("Set CACHE_URL to a Redis database, e.g. redis://127.0.0.1:6379/3.")
    name = url.rsplit("/", 1)[1].split("?")[0]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    import psycopg

    with psycopg.connect(admin.replace("postgres://", "postgresql://"), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "governance.settings")
    os.environ.setdefault("SECRET_KEY", "load-benchmark-secret")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from governance.models import Configuration, Consumer, Provider
    from termlists.models import TermList

    provider, _ = Provider.objects.get_or_create(name="load-provider", defaults={"route": "openai"})
    configuration, _ = Configuration.objects.get_or_create(identifier="load", defaults={
        "provider": provider, "model": "unused"})
    term_list, _ = TermList.objects.get_or_create(name="Load terms")
    if term_list.forbidden != "\n".join(TERMS):
        term_list.forbidden = "\n".join(TERMS)
        term_list.save()
    term_list.configurations.set([configuration])
    Consumer.objects.filter(name="load-bench").delete()
    consumer = Consumer(name="load-bench", throttle_rate="1000000/min")
    token = consumer.issue_token()
    consumer.save()
    consumer.configurations.set([configuration])
    return token


def queries_per_warm_screening(token: str) -> tuple[int, list[str]]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = json.dumps({"configuration": "load", "text": TEXT})
    for _ in range(2):
        client.post("/api/v1/screenings", body, content_type="application/json")
    with CaptureQueriesContext(connection) as captured:
        response = client.post("/api/v1/screenings", body, content_type="application/json")
    assert response.status_code == 200 and response.json()["outcome"] == "allowed", response.content
    return len(captured), [q["sql"][:90] for q in captured.captured_queries]


def start_gunicorn(workers: int, log_dir: Path) -> tuple[subprocess.Popen, str]:
    from tests.provider_server import unused_port

    port = unused_port()
    env = {**os.environ, "DEBUG": "0", "LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("GAVEL_TESTING", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "governance.wsgi:application", "-w", str(workers),
         "-b", f"127.0.0.1:{port}", "--timeout", "60"],
        cwd=ROOT, env=env, stdout=(log_dir / "gunicorn.log").open("w"), stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1):
                return process, url
        except Exception:
            time.sleep(0.05)
    process.kill()
    sys.exit("gunicorn did not start; see " + str(log_dir / "gunicorn.log"))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# --- phase 1 ---
def throughput_wrk(url: str, token: str, seconds: int, connections: int, log_dir: Path) -> dict:
    script = log_dir / "post.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        f'wrk.body = {json.dumps(json.dumps({"configuration": "load", "text": TEXT}))}\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "Bearer {token}"\n'
    )
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script),
                          f"{url}/api/v1/screenings"], capture_output=True, text=True, check=True).stdout

    def ms(label):
        value, unit = re.search(rf"{label}\s+([\d.]+)(us|ms|s)\b", out).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]

    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non_2xx = int(m.group(1)) if (m := re.search(r"Non-2xx or 3xx responses: (\d+)", out)) else 0
    socket_errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    return {"tool": "wrk", "rate": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50": ms("50%"), "p99": ms("99%"), "errors": non_2xx + socket_errors, "requests": requests}


class RawClient:
    """A lean HTTP/1.1 client on asyncio streams: one connection per request, as gunicorn's sync
    workers close each connection anyway. (httpx's pool slows quadratically with thousands of
    waiting requests, which made the generator, not the server, the bottleneck.)"""

    def __init__(self, url: str, token: str):
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)
        body = json.dumps({"configuration": "load", "text": TEXT}).encode()
        self.request = (
            f"POST /api/v1/screenings HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body

    async def post(self) -> bool:
        """Send one screening; True for a 200 whose body says `allowed`."""
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            return False
        try:
            writer.write(self.request)
            await writer.drain()
            response = await asyncio.wait_for(reader.read(), timeout=10)
            return response.startswith(b"HTTP/1.1 200") and b'"outcome":"allowed"' in response
        except (OSError, asyncio.TimeoutError):
            return False
        finally:
            writer.close()


async def _closed_loop(url: str, token: str, seconds: int, connections: int) -> dict:
    client = RawClient(url, token)
    latencies, errors = [], 0
    deadline = time.monotonic() + seconds

    async def worker():
        nonlocal errors
        while time.monotonic() < deadline:
            started = time.monotonic()
            ok = await client.post()
            latencies.append((time.monotonic() - started) * 1000)
            errors += not ok

    began = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(connections)))
    elapsed = time.monotonic() - began
    return {"tool": "python (closed loop)", "rate": len(latencies) / elapsed, "p50": percentile(latencies, 50),
            "p99": percentile(latencies, 99), "errors": errors, "requests": len(latencies)}


# --- phase 2 ---
def _fixed_rate(url: str, token: str, rate: int, seconds: int, threads: int = 32) -> dict:
    """Open loop: request i is due at start + i/rate whatever happened before; its latency counts
    from that time, so a stalled server (or generator) shows in the figures instead of hiding.

    Blocking sockets on `threads` threads, thread k sending requests k, k+threads, ...: cheaper per
    request than asyncio's streams, which left less CPU to the server on this 2-CPU machine. A thread
    still busy with an earlier request sends late, and that wait is counted."""
    import socket
    import threading

    host, port = url.removeprefix("http://").split(":")
    request = RawClient(url, token).request
    total = rate * seconds
    latencies: list[float] = []
    counts = {"errors": 0, "late": 0}
    lock = threading.Lock()
    start = time.monotonic() + 0.2

    def post() -> bool:
        try:
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.sendall(request)
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
            response = b"".join(chunks)
            return response.startswith(b"HTTP/1.1 200") and b'"outcome":"allowed"' in response
        except OSError:
            return False

    def sender(first: int):
        for i in range(first, total, threads):
            scheduled = start + i / rate
            delay = scheduled - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            late = delay < -0.005
            ok = post()
            elapsed = (time.monotonic() - scheduled) * 1000
            with lock:
                latencies.append(elapsed)
                counts["errors"] += not ok
                counts["late"] += late

    workers = [threading.Thread(target=sender, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    achieved = total / (time.monotonic() - start)
    return {"sent": total, "rate": achieved, "p50": percentile(latencies, 50), "p90": percentile(latencies, 90),
            "p99": percentile(latencies, 99), "max": max(latencies), "errors": counts["errors"],
            "late_sends": counts["late"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--throughput-seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()

    token = setup_database()
    queries, sqls = queries_per_warm_screening(token)
    with tempfile.TemporaryDirectory() as tmp:
        log_dir = Path(tmp)
        process, url = start_gunicorn(args.workers, log_dir)
        try:
            warm = asyncio.run(_closed_loop(url, token, 3, args.connections))  # compile the list in each worker
            assert warm["errors"] == 0, "errors while warming up; see the gunicorn log"
            if shutil.which("wrk"):
                one = throughput_wrk(url, token, args.throughput_seconds, args.connections, log_dir)
            else:
                one = asyncio.run(_closed_loop(url, token, args.throughput_seconds, args.connections))
            two = _fixed_rate(url, token, args.rate, args.seconds)
        finally:
            process.terminate()
            process.wait(timeout=20)

    print(f"gunicorn -w {args.workers} (sync) on PostgreSQL + Redis cache; 1,000-term list; {len(TEXT.encode())}-byte "
          f"texts; {os.cpu_count()} CPUs shared with the load generator\n")
    print(f"Phase 1, throughput ({one['tool']}, {args.connections} connections, {args.throughput_seconds} s)")
    print("| screenings/s | p50 ms | p99 ms | errors | requests |\n|---:|---:|---:|---:|---:|")
    print(f"| {one['rate']:.0f} | {one['p50']:.1f} | {one['p99']:.1f} | {one['errors']} | {one['requests']} |\n")
    print(f"Phase 2, fixed rate {args.rate}/s for {args.seconds} s (open loop; latency from the scheduled time)")
    print("| sent | achieved/s | p50 ms | p90 ms | p99 ms | max ms | errors |\n|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {two['sent']} | {two['rate']:.1f} | {two['p50']:.1f} | {two['p90']:.1f} | {two['p99']:.1f} | "
          f"{two['max']:.1f} | {two['errors']} |")
    print(f"(the generator sent {two['late_sends']} requests more than 5 ms late; their wait is in the figures)")
    verdict = "met" if two["p99"] < 50 and two["errors"] == 0 else "NOT met"
    print(f"target p99 < 50 ms and 0 errors: {verdict}\n")
    print(f"Queries per warm screening: {queries} (target at most 3)")
    for sql in sqls:
        print(f"  {sql}")


if __name__ == "__main__":
    main()
