"""Queued tasks end to end (issues 8, 19 and 30): tasks per second with the workers started exactly as
the README says (`manage.py run_workers -l info`: one process per core), each figure beside the
same run's baseline, one `celery -A governance worker -l info` process; the queue latency from
submit to `ready` (median, p95), for a provider answering at once and after `--delay` seconds, and
where a task's CPU goes, stage by stage.

Real parts: PostgreSQL and Redis (`--database` / `--broker`), a real `celery worker` process, the
local provider server (answering after the given delay), the tasks API through Django's handler.
Run: `.venv/bin/python benchmarks/tasks.py --delay 0 --delay 1 [--tasks 300]`.
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
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ANSWER = ("Our planning tool finds a free hour for the whole team, books a room that fits and sends the agenda "
          "before the meeting starts, so nobody has to ask twice and the week keeps its shape.")
TARGET = {1.0: 40.0, 0.0: 100.0}
TICKS = os.sysconf("SC_CLK_TCK")


def setup(database_root: str, db_name: str, broker: str):
    import psycopg

    with psycopg.connect(database_root + "/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {db_name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {db_name}")
    os.environ["DATABASE_URL"] = f"{database_root}/{db_name}"
    os.environ["CELERY_BROKER_URL"] = broker
    os.environ.setdefault("GAVEL_TESTING", "1")
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ["BENCH_API_KEY"] = "bench-key"
    os.environ["DJANGO_SETTINGS_MODULE"] = "governance.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def process_cpu(pid: int) -> float:
    """CPU seconds of a process and its live children (a prefork pool's processes)."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / TICKS
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                total += process_cpu(int(child))
    except (FileNotFoundError, ProcessLookupError):
        pass
    return total


def _ticks(pid) -> float:
    """CPU seconds of one process (no children), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return 0.0


def postgres_backends(db_name: str) -> dict[int, float]:
    """CPU seconds of every PostgreSQL backend connected to `db_name` (by its process title,
    `postgres: <cluster>: <user> <database> <host> <state>`)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        if len(title) >= 5 and title[0] == "postgres:" and title[3] == db_name:
            found[int(entry.name)] = _ticks(entry.name)
    return found


def pids_named(comm: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == comm:
                pids.append(int(entry.name))
        except (FileNotFoundError, ProcessLookupError):
            continue
    return pids


def machine_busy() -> float:
    """CPU seconds every core of the machine spent on anything but idle and I/O wait."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICKS


class Meter:
    """CPU seconds by process over a stretch of the run: the workers (with their children), the
    PostgreSQL backends of the benchmark's database (the submitter's own apart), Redis, the provider,
    this process, and the whole machine (anything else running on it included)."""

    def __init__(self, db_name: str, workers=(), provider_pid: int | None = None):
        from django.db import connection

        connection.ensure_connection()
        self.own_backend = connection.connection.info.backend_pid
        self.db_name, self.workers, self.provider_pid = db_name, list(workers), provider_pid
        self.redis = pids_named("redis-server")

    def snapshot(self) -> dict:
        backends = postgres_backends(self.db_name)
        own = backends.pop(self.own_backend, 0.0)
        return {"workers": sum(process_cpu(p.pid) for p in self.workers), "backends": backends,
                "own_backend": own, "redis": sum(_ticks(pid) for pid in self.redis),
                "provider": _ticks(self.provider_pid) if self.provider_pid else 0.0,
                "this": time.process_time(), "machine": machine_busy()}

    @staticmethod
    def spent(before: dict, after: dict) -> dict:
        ended = set(before["backends"]) - set(after["backends"])
        return {
            "workers": after["workers"] - before["workers"],
            "postgres": sum(cpu - before["backends"].get(pid, 0.0) for pid, cpu in after["backends"].items()),
            "postgres_ended": len(ended),  # their last stretch is not counted (none expected: pools keep them)
            "own_backend": after["own_backend"] - before["own_backend"],
            "redis": after["redis"] - before["redis"], "provider": after["provider"] - before["provider"],
            "this": after["this"] - before["this"], "machine": after["machine"] - before["machine"],
        }


def start_readme_workers(count: int, queue_name: str, extra_env: dict) -> list[subprocess.Popen]:
    """The README's worker line, `manage.py run_workers -l info`, with GAVEL_WORKER_PROCESSES=count:
    one supervisor whose children are the worker processes (their CPU is counted with it)."""
    env = {**os.environ, "GAVEL_CELERY_QUEUE": queue_name, "LOG_LEVEL": "WARNING",
           "GAVEL_WORKER_PROCESSES": str(count), **extra_env}
    log = Path("/tmp") / f"{queue_name}-run_workers.log"
    process = subprocess.Popen([sys.executable, "manage.py", "run_workers", "-l", "info"], cwd=ROOT, env=env,
                               stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while log.read_text().count(" ready.") < count:
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("workers did not start:\n" + log.read_text()[-2000:])
        time.sleep(0.1)
    time.sleep(1.0)  # let the pools settle before the CPU is read
    return [process]


def start_workers(count: int, queue_name: str, extra_env: dict, readme: bool = False) -> list[subprocess.Popen]:
    """`celery -A governance worker -l info`, `count` times (the one-process baseline: count 1); with
    `readme`, the README's `manage.py run_workers` running `count` processes. The queue comes from
    GAVEL_CELERY_QUEUE, like any deployment's."""
    if readme:
        return start_readme_workers(count, queue_name, extra_env)
    env = {**os.environ, "GAVEL_CELERY_QUEUE": queue_name, "LOG_LEVEL": "WARNING", **extra_env}
    processes, logs = [], []
    for index in range(count):
        log = Path("/tmp") / f"{queue_name}-{index}.log"
        logs.append(log)
        command = [sys.executable, "-m", "celery", "-A", "governance", "worker", "-l", "info"]
        if count > 1:
            command += ["-n", f"bench{index}@%h"]
        processes.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"),
                                          stderr=subprocess.STDOUT))
    deadline = time.monotonic() + 120
    while not all(" ready." in log.read_text() for log in logs):
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            raise SystemExit("workers did not start:\n" + "\n".join(log.read_text()[-2000:] for log in logs))
        time.sleep(0.1)
    time.sleep(1.0)  # let the pool settle before the CPU is read
    return processes


def stop(processes):
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


PROVIDER = """
import sys, threading
sys.path.insert(0, sys.argv[1])
from tests.provider_server import ProviderServer
server = ProviderServer().start()
server.set_default({"text": sys.argv[2], "delay": float(sys.argv[3])} if float(sys.argv[3]) else {"text": sys.argv[2]})
print(server.base_url, flush=True)
threading.Event().wait()
"""


class ProviderProcess:
    """The test provider server in a process of its own, so it never competes for this one's GIL."""

    def __init__(self):
        self.process = None
        self.base_url = ""

    def start(self, delay: float) -> str:
        self.stop()
        self.process = subprocess.Popen([sys.executable, "-c", PROVIDER, str(ROOT), ANSWER, str(delay)],
                                        stdout=subprocess.PIPE, text=True)
        self.base_url = self.process.stdout.readline().strip()
        return self.base_url

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait()
            self.process = None


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(round(share * (len(ordered) - 1))), len(ordered) - 1)]


def run(workers: int, count: int, client, configuration: str, server, delay: float, extra_env: dict,
        readme: bool = False, drain: bool = True, db_name: str = "") -> dict:
    from django.conf import settings

    from governance.models import Task

    from governance.models import Provider as ProviderRecord

    record = ProviderRecord.objects.get(name="bench")
    record.api_base = server.start(delay)
    record.save()  # bumps the policy version, so no process keeps the old address
    queue_name = f"gavel-bench-{uuid.uuid4().hex[:6]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue_name
    submit_cpu = 0.0
    ids = []

    def submit_all():
        nonlocal submit_cpu
        for i in range(count):
            before = time.thread_time()
            response = client.post("/api/v1/tasks", {"kind": "queued_task", "configuration": configuration,
                                                     "instruction": f"Text {i}"}, content_type="application/json")
            submit_cpu += time.thread_time() - before
            assert response.status_code == 202, response.content
            ids.append(response.json()["id"])

    submit_spent = None
    if drain:  # the tasks wait in Redis first: the workers' rate, not this process's submit rate, is timed
        meter = Meter(db_name, provider_pid=server.process.pid)
        before = meter.snapshot()
        submit_all()
        submit_spent = Meter.spent(before, meter.snapshot())
    processes = start_workers(workers, queue_name, extra_env, readme)
    meter = Meter(db_name, processes, server.process.pid)
    window_before = meter.snapshot()
    cpu_before = window_before["workers"]
    try:
        started = time.time()
        if not drain:
            submit_all()
        submitted = time.time()
        rows = Task.objects.filter(pk__in=ids)
        # The poll is one small statement every 0.1 s: the ORM's 300-id query every 50 ms cost this
        # process ~2 ms of CPU per task, taken from the cores the workers run on.
        from django.db import connection
        unfinished = (f"SELECT EXISTS (SELECT 1 FROM {Task._meta.db_table} WHERE id = ANY(%s) "
                      f"AND status NOT IN ('ready', 'blocked', 'failed'))")
        uuids = [uuid.UUID(str(i)) for i in ids]

        def waiting() -> bool:
            with connection.cursor() as cursor:
                cursor.execute(unfinished, [uuids])
                return cursor.fetchone()[0]

        while waiting():
            if time.time() - started > float(os.environ.get("BENCH_LIMIT", 600)):
                from collections import Counter
                raise SystemExit(f"tasks did not finish in time: {Counter(rows.values_list('status', flat=True))}")
            time.sleep(0.1)
        window = Meter.spent(window_before, meter.snapshot())
        cpu_after = cpu_before + window["workers"]
        finished = list(rows.values_list("status", "created", "finished_at"))
    finally:
        stop(processes)
    assert all(status == "ready" for status, _, _ in finished), {s for s, _, _ in finished}
    last = max(done for _, _, done in finished).timestamp()
    first = min(done for _, _, done in finished).timestamp()
    latencies = [(done - created).total_seconds() * 1000 for _, created, done in finished]
    # Draining a full queue: the rate between the first and the last task finished (the start-up before the
    # first is not the workers' rate); else the rate from the first submit to the last finished.
    per_s = (count - 1) / (last - first) if drain else count / (last - started)
    return {"workers": workers, "readme": readme, "tasks": count, "delay": delay, "submit_s": submitted - started,
            "total_s": last - (first if drain else started), "per_s": per_s, "p50": statistics.median(latencies),
            "p95": percentile(latencies, 0.95), "worker_cpu_ms": (cpu_after - cpu_before) * 1000 / count,
            "submit_cpu_ms": submit_cpu * 1000 / count, "load": os.getloadavg()[0],
            "window": {k: v * 1000 / count if k != "postgres_ended" else v for k, v in window.items()},
            "submit": ({k: v * 1000 / count if k != "postgres_ended" else v for k, v in submit_spent.items()}
                       if submit_spent else None)}


# --- where one task's CPU goes, stage by stage (in this process, one task after another) ---
class Stages:
    """Exclusive CPU time (this thread's) per named stage; a nested stage is not counted twice."""

    def __init__(self):
        self.cpu = defaultdict(float)
        self.stack: list[list] = []

    def wrap(self, owner, attribute: str, stage: str):
        original = getattr(owner, attribute)

        def timed(*args, **kwargs):
            entry = [stage, time.thread_time(), 0.0]
            self.stack.append(entry)
            try:
                return original(*args, **kwargs)
            finally:
                self.stack.pop()
                spent = time.thread_time() - entry[1]
                self.cpu[stage] += spent - entry[2]
                if self.stack:
                    self.stack[-1][2] += spent

        setattr(owner, attribute, timed)
        return original


def profile_stages(client, configuration: str, server, count: int) -> tuple[dict, int]:
    """Run `count` tasks through the worker's code in this process and split their CPU by stage."""
    from django.conf import settings

    import governance.runs.completions as completions
    import governance.runs.escalation as escalation
    import governance.work.queue as queue
    import governance.screening.pipeline as screening
    import judging.llm as llm
    from governance.work import tasks as celery_tasks

    from governance.models import Provider as ProviderRecord

    record = ProviderRecord.objects.get(name="bench")
    record.api_base = server.start(0.0)
    record.save()  # bumps the policy version, so no process keeps the old address
    stages = Stages()
    sent: list[str] = []
    patches = []

    def capture(task_id, countdown=None):  # the publish is timed separately below
        sent.append(str(task_id))

    original_enqueue = queue.enqueue
    for owner, attribute, stage in [
        (queue, "claim", "claim"), (llm, "complete", "generation (litellm)"),
        (completions, "claim_request", "usage rows"), (completions, "_count_usage", "usage rows"),
        (escalation, "screen_generated", "screening"), (queue, "_store_result", "store"),
        (screening, "write_events", "events"), (queue, "notify", "callback check"),
    ]:
        patches.append((owner, attribute, stages.wrap(owner, attribute, stage)))
    queue.enqueue = capture
    try:
        for i in range(5):  # warm: litellm loaded, policy caches filled
            client.post("/api/v1/tasks", {"kind": "queued_task", "configuration": configuration,
                                          "instruction": f"Warm {i}"}, content_type="application/json")
        for task_id in sent:
            celery_tasks.run_task.run(task_id)
        sent.clear()
        stages.cpu.clear()
        submit = publish = total = 0.0
        for i in range(count):
            before = time.thread_time()
            client.post("/api/v1/tasks", {"kind": "queued_task", "configuration": configuration,
                                          "instruction": f"Profiled {i}"}, content_type="application/json")
            submit += time.thread_time() - before
        for task_id in sent:
            before = time.thread_time()
            original_enqueue(task_id)
            publish += time.thread_time() - before
        queue_name = settings.CELERY_TASK_DEFAULT_QUEUE
        for task_id in sent:
            before = time.thread_time()
            celery_tasks.run_task.run(task_id)
            total += time.thread_time() - before
        from governance.celery import app
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(queue_name)
    finally:
        queue.enqueue = original_enqueue
        for owner, attribute, original in patches:
            setattr(owner, attribute, original)
    per_task = {"submit (API, minus publish)": submit * 1000 / count, "publish (Redis)": publish * 1000 / count}
    per_task.update({stage: cpu * 1000 / count for stage, cpu in stages.cpu.items()})
    per_task["rest of the run (task JSON, glue)"] = total * 1000 / count - sum(stages.cpu.values()) * 1000 / count
    return per_task, count


def accept_batch(client, configuration: str, count: int) -> dict:
    """POST one batch of `count` field fills; the time to its 202 (validation, bulk insert, bulk publish)."""
    from django.conf import settings

    from governance.celery import app

    settings.CELERY_TASK_DEFAULT_QUEUE = queue_name = f"gavel-bench-batch-{uuid.uuid4().hex[:6]}"
    items = [{"kind": "field_fill", "configuration": configuration, "instruction": f"Describe product {i}.",
              "field": {"record": f"product:{i}", "name": "short_text", "label": "Short text", "max_length": 160}}
             for i in range(count)]
    started = time.perf_counter()
    response = client.post("/api/v1/batches", {"name": "bench", "items": items}, content_type="application/json")
    seconds = time.perf_counter() - started
    assert response.status_code == 202, response.content[:500]
    with app.connection_for_write() as conn:
        published = conn.default_channel.client.llen(queue_name)
        conn.default_channel.queue_purge(queue_name)
    # What a worker then does with the one message: send the 10,000 tasks' own messages.
    from governance.work import batches

    started = time.perf_counter()
    fanned = batches.fan_out(response.json()["id"])
    fan_out_seconds = time.perf_counter() - started
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(queue_name)
    return {"items": count, "seconds": seconds, "published": published, "fanned": fanned,
            "fan_out_s": fan_out_seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=None,
                        help="tasks per run (default: 300 with an instant provider, 400 with a delay)")
    parser.add_argument("--delay", type=float, action="append",
                        help="seconds the provider takes to answer; repeat for several runs (default: 0 and 1)")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                        help="worker processes the README's command runs (default: the cores, as it does)")
    parser.add_argument("--submit-while-running", action="store_true",
                        help="submit while the workers run (the rate then includes this process's submits), "
                             "instead of draining a queue filled first")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of (one process, README command) per delay, interleaved (default 1)")
    parser.add_argument("--profile", type=int, default=100, help="tasks profiled stage by stage (0: skip)")
    parser.add_argument("--batch", type=int, default=10_000, help="field fills in the batch whose 202 is timed (0: skip)")
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--db-name", default="gavel_bench_tasks")
    parser.add_argument("--broker", default=os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/11")
    parser.add_argument("--worker-env", action="append", default=[],
                        help="NAME=VALUE for the worker's environment (to compare pools)")
    args = parser.parse_args()
    delays = args.delay or [0.0, 1.0]
    extra_env = dict(item.split("=", 1) for item in args.worker_env)
    setup(args.database, args.db_name, args.broker)

    from django.test import Client

    from governance.models import Configuration, Consumer
    from governance.models import Provider
    server = ProviderProcess()
    provider = Provider.objects.create(name="bench", route="openai", api_base="http://127.0.0.1:9/v1",
                                       api_key_env="BENCH_API_KEY", trust_zone="local", timeout=10)
    configuration = Configuration.objects.create(identifier="bench-writer", provider=provider, model="writer")
    consumer = Consumer(name="bench", throttle_rate="1000000/min")
    token = consumer.issue_token()
    consumer.save()
    consumer.configurations.add(configuration)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    # Per delay, the baseline (one `celery worker` process) and the README's command, interleaved.
    results = []
    for delay in delays:
        count = args.tasks or (400 if delay else 300)
        for _round in range(args.rounds):
            for readme in (False, True):
                results.append(run(args.workers if readme else 1, count, client, configuration.identifier, server,
                                   delay, extra_env, readme, drain=not args.submit_while_running,
                                   db_name=args.db_name))
    stages = profile_stages(client, configuration.identifier, server, args.profile)[0] if args.profile else {}
    batch = accept_batch(client, configuration.identifier, args.batch) if args.batch else None
    server.stop()
    load = os.getloadavg()
    print(f"\nqueued tasks end to end: one `celery worker` process (the baseline) and the README's "
          f"`manage.py run_workers` ({args.workers} processes{', ' + ' '.join(args.worker_env) if args.worker_env else ''})"
          f", PostgreSQL + Redis, {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
          f"at the end")
    print(f"{'delay s':>7} | {'workers':>13} | {'tasks':>5} | {'total s':>7} | {'tasks/s':>7} | {'x 1 proc':>8} | "
          f"{'p50 ms':>7} | {'p95 ms':>7} | {'worker CPU ms/task':>18} | {'x 1 proc':>8} | {'load 1m':>7} | target")
    print("-" * 140)
    baseline: dict = {}
    for r in results:
        if not r["readme"]:
            baseline[r["delay"]] = r
        one = r["one"] = baseline.get(r["delay"]) or r  # this round's one-process run
        target = TARGET.get(r["delay"])
        goal = (f">= {target:.0f}: {'met' if r['per_s'] >= target else 'NOT met'}" if target and r["readme"] else "-")
        label = f"README x{r['workers']}" if r["readme"] else "1 process"
        print(f"{r['delay']:>7.1f} | {label:>13} | {r['tasks']:>5} | {r['total_s']:>7.2f} | {r['per_s']:>7.1f} | "
              f"{r['per_s'] / one['per_s']:>7.2f}x | {r['p50']:>7.0f} | {r['p95']:>7.0f} | "
              f"{r['worker_cpu_ms']:>18.1f} | {r['worker_cpu_ms'] / one['worker_cpu_ms']:>7.2f}x | "
              f"{r['load']:>7.2f} | {goal}")
    print("x 1 proc: against the one-process run of the same delay in this run. " + (
        "Tasks submitted while the workers run; tasks/s from the first submit to the last finished."
        if args.submit_while_running else "The queue is filled first, then the workers start; tasks/s between the "
        "first and the last task finished; latency = finished_at - created (includes the wait in the queue)."))
    print(f"\nCPU ms per task by process, from /proc, while the workers ran (the same runs, in order); "
          f"budget for 100 tasks/s on {os.cpu_count()} cores: {os.cpu_count() * 1000 / 100:.0f} ms for all of it")
    print(f"{'delay s':>7} | {'workers':>13} | {'worker':>7} | {'PG':>6} | {'Redis':>6} | {'provider':>8} | "
          f"{'poller':>6} | {'sum':>6} | {'machine':>7} | {'x 1 proc':>8} | {'load 1m':>7}")
    print("-" * 104)
    for r in results:
        one = r["one"]
        w = r["window"]
        total = w["workers"] + w["postgres"] + w["redis"] + w["provider"] + w["this"] + w["own_backend"]
        one_w = one["window"]
        one_total = (one_w["workers"] + one_w["postgres"] + one_w["redis"] + one_w["provider"] + one_w["this"]
                     + one_w["own_backend"])
        label = f"README x{r['workers']}" if r["readme"] else "1 process"
        print(f"{r['delay']:>7.1f} | {label:>13} | {w['workers']:>7.2f} | {w['postgres']:>6.2f} | {w['redis']:>6.2f} | "
              f"{w['provider']:>8.2f} | {w['this'] + w['own_backend']:>6.2f} | {total:>6.2f} | {w['machine']:>7.2f} | "
              f"{total / one_total:>7.2f}x | {r['load']:>7.2f}"
              + (f"  ({w['postgres_ended']} backend(s) ended: their last stretch uncounted)" if w["postgres_ended"] else ""))
    print("worker: the worker processes (README: the supervisor and its children); PG: the PostgreSQL backends "
          "of the benchmark's database but this process's; Redis: the whole redis-server (shared with anything else "
          "using it); poller: this process and its backend waiting for the tasks to finish; machine: every core's "
          "busy time, anything else running on the machine included.")
    submits = [r["submit"] for r in results if r["submit"]]
    if submits:
        mean = {k: statistics.mean(s[k] for s in submits) for k in ("this", "own_backend", "redis", "machine")}
        print(f"submit (before the workers start, mean of {len(submits)} runs), ms per task: this process "
              f"{mean['this']:.2f} (API and publish), its PostgreSQL backend {mean['own_backend']:.2f}, Redis "
              f"{mean['redis']:.2f}; machine {mean['machine']:.2f}")
    if batch:
        print(f"\na batch of {batch['items']} field fills accepted (202: validated whole, inserted, "
              f"{batch['published']} message published) in {batch['seconds']:.2f} s; target < 10 s: "
              f"{'met' if batch['seconds'] < 10 else 'NOT met'}; a worker's fan-out of its {batch['fanned']} "
              f"task messages took {batch['fan_out_s']:.2f} s")
    if stages:
        print(f"\nCPU per task by stage ({args.profile} tasks run one after another in this process, instant "
              f"provider; worker-side Celery work — receive, ack, logging — is the worker CPU above minus these)")
        for stage, ms in stages.items():
            print(f"  {stage:<36} {ms:7.2f} ms")
        print(f"  {'total':<36} {sum(stages.values()):7.2f} ms")


if __name__ == "__main__":
    main()
