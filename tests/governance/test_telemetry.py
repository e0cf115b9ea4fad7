"""Metrics and traces (SPEC §13.2): the counts after a scripted mix, who may read /metrics, counts summed over
processes, and a blocked completion's spans with the GenAI guardrail attributes and no content."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client.parser import text_string_to_metric_families

from governance.evidence import metrics, tracing
from governance.models import Task
from governance.work import editors
from termlists.models import TermList
from tests.governance.test_evidence import LONG
from tests.governance.test_tasks_api import eager, submit, task_body  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]


def scrape(client=None, **extra) -> dict:
    response = (client or Client()).get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def delta(before, after, name, **labels):
    return value(after, name, **labels) - value(before, name, **labels)


def test_a_scripted_mix_is_counted(api, submit, eager, provider_server, configuration):
    TermList.objects.create(name="Hype", forbidden="revolutionary", mode="report").configurations.add(configuration)
    TermList.objects.create(name="Never", forbidden="Acme").configurations.add(configuration)
    before = scrape()
    for text in ("A plain sentence.", "A revolutionary sentence.", "An Acme sentence."):
        assert api.post("/api/v1/screenings", {"configuration": "newsroom", "text": text},
                        format="json").status_code == 200
    provider_server.set_default({"text": LONG})
    assert api.post("/api/v1/completions", {"configuration": "newsroom",
                                            "messages": [{"role": "user", "content": "Write."}]},
                    format="json").status_code == 200
    provider_server.set_default({"status": 400})  # a provider failure that is not retried
    assert api.post("/api/v1/completions", {"configuration": "newsroom",
                                            "messages": [{"role": "user", "content": "Write."}]},
                    format="json").status_code == 502
    provider_server.set_default({"text": LONG})
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    editors.accept(task, user=get_user_model().objects.create_user("erika"))
    after = scrape()

    runs = "gavel_runs_total"
    assert delta(before, after, runs, surface="screening", configuration="newsroom", outcome="allowed") == 1
    assert delta(before, after, runs, surface="screening", configuration="newsroom",
                 outcome="allowed_with_hints") == 1
    assert delta(before, after, runs, surface="screening", configuration="newsroom", outcome="blocked") == 1
    assert delta(before, after, runs, surface="api", configuration="newsroom", outcome="allowed") == 1
    assert delta(before, after, runs, surface="task", configuration="newsroom", outcome="allowed") == 1
    assert delta(before, after, "gavel_checks_total", check="term_list", result="blocked") == 1
    assert delta(before, after, "gavel_checks_total", check="term_list", result="reported") == 1
    assert delta(before, after, "gavel_provider_calls_total", provider="local-test") == 2
    assert delta(before, after, "gavel_provider_failures_total", provider="local-test") == 1
    assert delta(before, after, "gavel_provider_seconds_count", provider="local-test") == 2
    assert delta(before, after, "gavel_added_seconds_count") == 5  # three screenings, a completion, a task
    assert delta(before, after, "gavel_evidence_records_total", surface="task") == 2  # delivered, accepted
    assert delta(before, after, "gavel_reviews_total", decision="accepted") == 1
    assert value(after, "gavel_tasks", status="accepted") == 1 and value(after, "gavel_queue_depth") == 0
    # Bounded labels: no text, term or request id among them.
    labels = " ".join(f"{k}={v}" for _n, items in after for k, v in items)
    for word in ("plain sentence", "revolutionary", "Acme", LONG[:20]):
        assert word not in labels


@pytest.mark.parametrize("check, result", [
    ({"check": "rules_judge", "result": "passed"}, "ok"),
    ({"check": "rules_judge", "result": "passed", "cached": True}, "cached"),
    ({"check": "rules_judge", "result": "not_checked", "reason": "timeout"}, "timeout"),
    ({"check": "rules_judge", "result": "not_checked", "reason": "unusable"}, "unusable"),
    ({"check": "rules_judge", "result": "blocked", "reason": "error"}, "error"),
])
def test_judge_results_are_named_as_the_metric_says(check, result):
    assert metrics.judge_result(check) == result


def test_a_skipped_judge_is_no_judge_call(db):
    before = metrics.JUDGE_CALLS.labels("ok")._value.get()
    metrics.run_finished("screening", "x", "allowed", [{"check": "rules_judge", "result": "skipped",
                                                         "reason": "not_finished_text"}])
    assert metrics.JUDGE_CALLS.labels("ok")._value.get() == before


# --- who may read /metrics ---
@pytest.fixture
def metrics_token(settings):
    settings.GAVEL_METRICS_TOKEN = "scrape-token-for-tests"
    return settings.GAVEL_METRICS_TOKEN


@pytest.mark.parametrize("extra", [
    {"REMOTE_ADDR": "10.1.2.3"},
    {"REMOTE_ADDR": "203.0.113.9"},
    # Behind the reverse proxy of the deployment docs: it connects from loopback and forwards the client.
    {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"},
    {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "127.0.0.1, 203.0.113.9"},
    {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_REAL_IP": "198.51.100.4"},
    {"REMOTE_ADDR": "127.0.0.1", "HTTP_FORWARDED": 'for="[2001:db8::1]";proto=https'},
    {"REMOTE_ADDR": "10.1.2.3", "HTTP_AUTHORIZATION": "Bearer wrong-token"},
])
def test_from_elsewhere_without_the_token_is_401(db, metrics_token, extra):
    response = Client().get("/metrics", **extra)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated" and "gavel_" not in response.content.decode()
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("extra", [
    {"REMOTE_ADDR": "127.0.0.1"}, {"REMOTE_ADDR": "::1"},
    {"REMOTE_ADDR": "10.1.2.3", "HTTP_AUTHORIZATION": "Bearer scrape-token-for-tests"},
    {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9",
     "HTTP_AUTHORIZATION": "Bearer scrape-token-for-tests"},
])
def test_loopback_or_the_token_may_read(db, metrics_token, extra):
    response = Client().get("/metrics", **extra)
    assert response.status_code == 200 and "gavel_queue_depth 0.0" in response.content.decode()


def test_without_a_token_set_only_loopback_reads(db, settings):
    settings.GAVEL_METRICS_TOKEN = ""
    assert Client().get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer ").status_code == 401
    assert Client().get("/metrics").status_code == 200


# --- several processes ---
COUNT = """
from governance.evidence import metrics
for _ in range({n}):
    metrics.run_finished("api", "newsroom", "allowed", [{{"check": "term_list", "result": "passed"}}])
"""
SHOW = """
import sys
from governance.evidence import metrics
sys.stdout.write(metrics.exposition().decode())
"""


def in_process(code, directory):
    """Run code in a fresh process of this checkout, counting into the shared directory, on a database of
    its own beside it (the tasks' numbers are read from it)."""
    env = {**os.environ, "GAVEL_TESTING": "1", "PROMETHEUS_MULTIPROC_DIR": str(directory),
           "DATABASE_URL": f"sqlite:///{directory.parent}/metrics.sqlite3"}
    return subprocess.run([sys.executable, "manage.py", "shell", "--no-imports", "-c", code], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True, timeout=120).stdout


def test_counts_are_summed_across_processes(tmp_path):
    directory = tmp_path / "prometheus"
    directory.mkdir()
    in_process("from django.core.management import call_command; call_command('migrate', verbosity=0)", directory)
    in_process(COUNT.format(n=2), directory)
    in_process(COUNT.format(n=3), directory)
    shown = in_process(SHOW, directory)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(shown) for s in family.samples}
    assert value(samples, "gavel_runs_total", surface="api", configuration="newsroom", outcome="allowed") == 5
    assert value(samples, "gavel_checks_total", check="term_list", result="passed") == 5


# --- traces ---
@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.configure(provider)
    yield exporter
    tracing.configure(None)


def test_a_blocked_completion_is_a_run_span_with_a_span_per_check(api, provider_server, configuration, spans):
    TermList.objects.create(name="Competitors", forbidden="whole team").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                "messages": [{"role": "user", "content": "Write."}]},
                        format="json", HTTP_X_REQUEST_ID="trace-me-1")
    assert response.status_code == 200 and response.json()["outcome"] == "blocked"
    finished = spans.get_finished_spans()
    runs = [s for s in finished if s.name == "apply_guardrail gavel"]
    assert len(runs) == 1
    run = runs[0]
    assert run.attributes["gen_ai.operation.name"] == "apply_guardrail"
    assert run.attributes["gen_ai.guardrail.verdict"] == "deny"
    assert run.attributes["gen_ai.guardrail.action"] == "block"
    assert list(run.attributes["gen_ai.guardrail.rule.id"]) == ["Competitors"]
    assert run.attributes["gen_ai.guardrail.policy.id"] == "newsroom"
    assert run.attributes["gen_ai.guardrail.policy.version"] == str(response.json()["policy_version"])
    assert run.attributes["gavel.request_id"] == "trace-me-1"
    assert run.attributes["gavel.correlation_id"] == response.json()["id"]
    children = [s for s in finished if s.parent is not None and s.parent.span_id == run.context.span_id]
    checks = [s for s in children if s.name.startswith("apply_guardrail ")]
    assert sorted(s.attributes["gen_ai.guardrail.name"] for s in checks) == sorted(
        c["check"] for c in response.json()["checks"])
    term = next(s for s in checks if s.attributes["gen_ai.guardrail.name"] == "term_list")
    assert term.attributes["gen_ai.guardrail.verdict"] == "deny"
    assert list(term.attributes["gen_ai.guardrail.rule.id"]) == ["Competitors"]
    skipped = [s for s in checks if s.attributes["gavel.check.result"] == "skipped"]
    assert skipped and all(s.attributes["gavel.check.reason"] == "earlier_block" for s in skipped)
    # The provider's answer: a GenAI inference span under the run, begun before the run's checks.
    (model,) = [s for s in children if s.name == "chat test-model"]
    assert model.kind == SpanKind.CLIENT and model.start_time >= run.start_time and model.end_time <= run.end_time
    assert model.start_time < min(s.start_time for s in children if s is not model)
    usage = response.json()["completion"]["usage"]
    assert dict(model.attributes) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system": "openai",
        "gen_ai.request.model": "test-model", "gen_ai.response.model": "test-model",
        "gen_ai.usage.input_tokens": usage["prompt_tokens"], "gen_ai.usage.output_tokens": usage["completion_tokens"],
        "gen_ai.response.finish_reasons": ("stop",), "server.address": "127.0.0.1",
        "server.port": int(provider_server.base_url.rsplit(":", 1)[1].split("/")[0]),
        "gavel.configuration": "newsroom", "gavel.provider": "local-test", "gavel.call.for": "generation",
        "gavel.correlation_id": response.json()["id"]}
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    # No content: neither the answer, the blocked term nor the prompt in any attribute.
    values = " ".join(str(v) for s in finished for v in s.attributes.values())
    for word in ("whole team", "planning tool", "Write."):
        assert word not in values


JUDGED = ("Quillfeather writes that the zorbanic lantern ships tomorrow for free, with seven maps, four candles, "
          "two compasses and a small booklet about rivers, mountains, weather, harbours and the old lighthouse.")


@pytest.fixture
def judged(configuration, provider):
    """`newsroom` checking one `style` rule in report mode with the judge `judge` (one second to answer)."""
    from governance.models import Configuration, Provider, set_links
    from snippets.models import Snippet

    judges = Provider.objects.create(name="judge-provider", route="openai", api_base=provider.api_base,
                                     api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=1)
    judge = Configuration.objects.create(identifier="judge", provider=judges, model="judge-model")
    Snippet.objects.create(identifier="tone", name="Tone", tags=["style"], body="Never promise a delivery date.")
    configuration.rule_mode, configuration.rule_tags = "report", ["style"]
    configuration.save()
    set_links(configuration, "rule_judges", [judge.identifier])
    return configuration


def screen_judged(api):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": JUDGED}, format="json")
    assert response.status_code == 200
    return response.json()


def judge_spans(spans):
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "apply_guardrail gavel"]
    (check,) = [s for s in finished if s.name == "apply_guardrail rules_judge"]
    calls = [s for s in finished if s.name.startswith("chat ")]
    return run, check, calls, finished


def test_a_judge_call_is_a_span_under_its_check(api, judged, provider_server, spans):
    provider_server.script([{"for_model": "judge-model", "usage": {"prompt_tokens": 210, "completion_tokens": 14},
                             "text": '{"violations": [{"rule": 1, "passage": "ships tomorrow"}]}'}])
    body = screen_judged(api)
    assert body["outcome"] == "allowed_with_hints"
    run, check, calls, finished = judge_spans(spans)
    assert check.parent.span_id == run.context.span_id
    (call,) = calls
    assert call.name == "chat judge-model" and call.parent.span_id == check.context.span_id
    assert call.context.trace_id == run.context.trace_id and call.kind == SpanKind.CLIENT
    attributes = call.attributes
    assert (attributes["gen_ai.operation.name"], attributes["gen_ai.provider.name"], attributes["gen_ai.system"],
            attributes["gen_ai.request.model"]) == ("chat", "openai", "openai", "judge-model")
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (210, 14)
    assert attributes["gavel.call.for"] == "rules_judge" and attributes["gavel.provider"] == "judge-provider"
    assert "error.type" not in attributes and call.status.is_ok
    assert list(check.attributes["gen_ai.guardrail.rule.id"]) == ["tone#1"]
    # No content: neither the text, the passage the judge quoted nor the rule's line.
    values = " ".join(str(v) for s in finished for v in s.attributes.values())
    for word in ("Quillfeather", "zorbanic", "ships tomorrow", "delivery date"):
        assert word not in values


def test_a_judge_that_times_out_is_a_failed_span(api, judged, provider_server, spans):
    provider_server.script([{"for_model": "judge-model", "delay": 2.5, "text": '{"violations": []}'}])
    body = screen_judged(api)
    assert {"check": "rules_judge", "result": "not_checked", "reason": "timeout"} in body["checks"]
    _run, check, (call,), _finished = judge_spans(spans)
    assert call.parent.span_id == check.context.span_id
    assert call.attributes["error.type"] == "timeout" and call.status.status_code == StatusCode.ERROR
    assert "gen_ai.usage.input_tokens" not in call.attributes


def test_a_provider_failure_without_a_run_is_a_span_of_its_own(api, provider_server, spans):
    provider_server.set_default({"status": 400})
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    assert response.status_code == 502
    finished = spans.get_finished_spans()
    assert not [s for s in finished if s.name == "apply_guardrail gavel"]  # nothing was screened
    (call,) = finished
    assert call.name == "chat test-model" and call.parent is None
    assert call.attributes["error.type"] == "400" and call.status.status_code == StatusCode.ERROR
    assert tracing.pending_calls.get() is None  # sent after the response, nothing left for the next run


def test_a_held_stream_is_a_run_span_with_its_model_call(api, configuration, provider_server, spans):
    TermList.objects.create(name="Competitors", forbidden="Zyntrax").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    response = api.post("/api/v1/completions", {"configuration": "newsroom", "stream": True,
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    assert b"event: done" in b"".join(response.streaming_content)
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "apply_guardrail gavel"]
    (call,) = [s for s in finished if s.name == "chat test-model"]
    assert call.parent.span_id == run.context.span_id and run.start_time <= call.start_time
    assert call.attributes["gen_ai.usage.output_tokens"] > 0


@pytest.mark.parametrize("path, body", [
    ("/openai/v1/chat/completions", {"model": "newsroom", "messages": [{"role": "user", "content": "Write."}]}),
    ("/openai/v1/responses", {"model": "newsroom", "input": "Write."}),
    ("/anthropic/v1/messages", {"model": "newsroom", "max_tokens": 100,
                                "messages": [{"role": "user", "content": "Write."}]}),
])
def test_every_protocol_puts_the_model_call_under_its_run(api, provider_server, spans, path, body):
    provider_server.set_default({"text": LONG})
    assert api.post(path, body, format="json").status_code == 200
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "apply_guardrail gavel"]
    (call,) = [s for s in finished if s.name == "chat test-model"]
    assert call.parent.span_id == run.context.span_id and run.start_time <= call.start_time


def test_a_tasks_generation_is_a_model_call_under_the_tasks_run(api, submit, eager, provider_server, spans):
    provider_server.set_default({"text": LONG})
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    assert task.status == "ready"
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "apply_guardrail gavel"]
    (call,) = [s for s in finished if s.name == "chat test-model"]
    assert run.attributes["gavel.correlation_id"] == call.attributes["gavel.correlation_id"] == task.correlation_id
    assert call.parent.span_id == run.context.span_id and call.attributes["gavel.call.for"] == "generation"
    assert tracing.pending_calls.get() is None


def test_a_task_whose_provider_refuses_leaves_no_call_for_the_next_task(api, eager, provider_server, spans,
                                                                        django_capture_on_commit_callbacks):
    from governance.work import queue

    provider_server.set_default({"status": 400})
    with django_capture_on_commit_callbacks(execute=True):  # the worker's run, with no request around it
        task = queue.submit(task_body(), consumer=api.consumer, actor="test")
    task.refresh_from_db()
    assert task.status == "failed"
    (call,) = spans.get_finished_spans()  # sent when the task ended: nothing was screened
    assert call.name == "chat test-model" and call.parent is None and call.attributes["error.type"] == "400"
    assert tracing.pending_calls.get() is None


def test_tracing_off_leaves_the_model_call_alone(api, provider_server):
    assert tracing.state["tracer"] is None
    ask = lambda candidate, target: "answer"  # noqa: E731
    assert tracing.traced_call("chat", ask, "x") is ask
    provider_server.set_default({"text": LONG})
    assert api.post("/api/v1/completions", {"configuration": "newsroom",
                                            "messages": [{"role": "user", "content": "Write."}]},
                    format="json").status_code == 200
    assert tracing.pending_calls.get() is None


def test_tracing_off_makes_no_span_and_leaves_the_screening_alone(api, configuration):
    assert tracing.state["tracer"] is None
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": "A plain sentence."},
                        format="json")
    assert response.status_code == 200 and response.json()["outcome"] == "allowed"


def test_a_rejection_is_counted_and_leaves_no_evidence(api, submit, eager, provider_server):
    from governance.models import EvidenceRecord

    provider_server.set_default({"text": LONG})
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    before = scrape()
    editors.reject(task, user=get_user_model().objects.create_user("erika"))
    after = scrape()
    assert delta(before, after, "gavel_reviews_total", decision="rejected") == 1
    assert delta(before, after, "gavel_reviews_total", decision="accepted") == 0
    assert not EvidenceRecord.objects.filter(task=task, review_decision__gt="").exists()
