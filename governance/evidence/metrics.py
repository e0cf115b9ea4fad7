"""Prometheus metrics (SPEC §13.2): every instrument named once here, counted where a run finishes.

Several processes (gunicorn workers, Celery workers) share their counts through prometheus_client's
multiprocess mode: set PROMETHEUS_MULTIPROC_DIR to one empty, writable directory for every process of a
deployment (docs/operations.md). Without it (the embedded default) each process counts for itself.
Labels are identifiers of records and fixed words only, never text, terms, user input or request ids.
"""
import os

from django.db.models import Count
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily

from governance.models import PolicyRevision, Task

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))

RUNS = Counter("gavel_runs_total", "Runs (screenings, completions, tasks) by surface, configuration and outcome.",
               ["surface", "configuration", "outcome"])
CHECKS = Counter("gavel_checks_total", "Checks of the screening pipeline by check and result.", ["check", "result"])
JUDGE_CALLS = Counter("gavel_judge_calls_total",
                      "Rules-judge verdicts by result: ok, cached, unusable, timeout, error.", ["result"])
PROVIDER_CALLS = Counter("gavel_provider_calls_total", "Model calls answered, by provider.", ["provider"])
PROVIDER_FAILURES = Counter("gavel_provider_failures_total", "Model calls that failed, by provider.", ["provider"])
EVIDENCE = Counter("gavel_evidence_records_total", "Evidence records written, by surface.", ["surface"])
REVIEWS = Counter("gavel_reviews_total", "Editors' review decisions on tasks.", ["decision"])
ADDED = Histogram("gavel_added_seconds", "Time Gavel's screening adds to a run, from the first check to the verdict.",
                  buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
PROVIDER_TIME = Histogram("gavel_provider_seconds", "Time a provider took to answer a model call, by provider.",
                          ["provider"], buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120))
MCP_CALLS = Counter("gavel_mcp_tool_calls_total",
                    "MCP tool calls by configuration, server and result (forwarded, blocked, refused, rejected, "
                    "timed_out, failed).", ["configuration", "server", "result"])
MCP_ADDED = Histogram("gavel_mcp_added_seconds", "Time the MCP gateway adds to a tool call, upstream and waiting "
                      "for an editor excluded.", buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1))

JUDGE_CHECK = "rules_judge"
JUDGE_REASONS = {"timeout": "timeout", "unusable": "unusable", "error": "error"}
JUDGED = {"passed", "reported", "blocked", "not_checked"}


# Each labelled series once made, kept by its label values: `labels()` validates, converts and locks on
# every call, which the hot path need not repeat (benchmarks/gateway_cpu.py --metrics-overhead). The label
# values are bounded (above), so these stay small.
_series: dict = {}


def series(metric, *values):
    """The metric's child for these label values, made on first use."""
    key = (metric, values)
    child = _series.get(key)
    if child is None:
        child = _series[key] = metric.labels(*values)
    return child


def run_finished(surface: str, configuration: str, outcome: str, checks) -> None:
    """Count one finished run and its checks (called where the run's evidence is written)."""
    series(RUNS, surface, configuration or "", outcome or "").inc()
    for check in checks or ():
        name, result = check.get("check", ""), check.get("result", "")
        series(CHECKS, name, result).inc()
        if name == JUDGE_CHECK and result in JUDGED:
            series(JUDGE_CALLS, judge_result(check)).inc()


def judge_result(check: dict) -> str:
    if check.get("cached"):
        return "cached"
    return JUDGE_REASONS.get(check.get("reason") or "", "ok" if check.get("result") != "not_checked" else "error")


def screening_took(seconds: float) -> None:
    ADDED.observe(seconds)


def provider_answered(provider: str, latency_ms) -> None:
    series(PROVIDER_CALLS, provider).inc()
    if latency_ms is not None:
        series(PROVIDER_TIME, provider).observe(max(float(latency_ms), 0.0) / 1000)


def provider_failed(provider: str) -> None:
    series(PROVIDER_FAILURES, provider).inc()


def evidence_written(surface: str) -> None:
    series(EVIDENCE, surface).inc()


def reviewed(decision: str) -> None:
    series(REVIEWS, decision).inc()


def tool_call_finished(configuration: str, server: str, result: str, added_seconds: float) -> None:
    """Count one MCP tool call (SPEC §14) and the time the gateway added to it."""
    series(MCP_CALLS, configuration or "", server or "", result).inc()
    MCP_ADDED.observe(added_seconds)


class TaskCollector:
    """Tasks by status and the queue's depth, read from the database at scrape time: the row is the source
    of truth, so every process reports the same numbers (docs/operations.md)."""

    def collect(self):
        tasks = GaugeMetricFamily("gavel_tasks", "Tasks by status.", labels=["status"])
        counts = dict(Task.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
        for status in Task.Status.values:
            tasks.add_metric([status], counts.get(status, 0))
        yield tasks
        yield GaugeMetricFamily("gavel_queue_depth", "Tasks waiting for a worker (queued).",
                                value=counts.get(Task.Status.QUEUED, 0))
        yield GaugeMetricFamily("gavel_policy_releases", "Policy releases (revisions) recorded.",
                                value=PolicyRevision.objects.count())


def exposition() -> bytes:
    """The metrics in Prometheus' text format: every process's counts in multiprocess mode, this process's
    otherwise; the task numbers from the database either way."""
    tasks = CollectorRegistry()
    tasks.register(TaskCollector())
    if not MULTIPROCESS:
        return generate_latest(REGISTRY) + generate_latest(tasks)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry) + generate_latest(tasks)
