"""OpenTelemetry traces of screenings (SPEC §13.2): a span per run, a child span per check, a span per model
call (the provider's answer under the run, a judge's under its check), no content.

Span names and attributes follow OpenTelemetry's GenAI conventions (`gen_ai.guardrail.*` for the run and its
checks, the inference span's `gen_ai.*` for model calls; still in development status; the version Gavel
follows is CONVENTION, docs/operations.md). Traces are exported over OTLP only when
OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise tracing is off and costs one flag check per step and per model
call. The same module times the screening for the `gavel_added_seconds` histogram.
"""
import contextvars
import os
import time
from urllib.parse import urlsplit

from celery.signals import task_postrun
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import SpanKind, Status, StatusCode

from governance.evidence import metrics

CONVENTION = ("OpenTelemetry GenAI semantic conventions (development status): gen_ai.guardrail.* as of 2026-12, "
              "the inference span's gen_ai.* attributes as of v1.37 (gen_ai.system kept beside gen_ai.provider.name)")
OPERATION = "apply_guardrail"
VERDICTS = {"allowed": "allow", "allowed_with_hints": "warn", "blocked": "deny"}
CHECK_VERDICTS = {"passed": "allow", "reported": "warn", "redacted": "modify", "blocked": "deny"}
ACTIONS = {"allow": "none", "warn": "annotate", "modify": "redact", "deny": "block"}
state = {"tracer": None}
request_id = contextvars.ContextVar("gavel_request_id", default="")
# The check whose step runs now (a model call inside it is that check's, a judge's), and the model calls
# made before their run's span opened (a completion asks the provider, then screens the answer).
current_check = contextvars.ContextVar("gavel_current_check", default="")
pending_calls = contextvars.ContextVar("gavel_pending_calls", default=None)


def configure(provider) -> None:
    """Trace with this TracerProvider (None turns tracing off). Tests hand in one with an in-memory exporter."""
    state["tracer"] = provider.get_tracer("gavel") if provider is not None else None


def configure_from_environment() -> None:
    """Export over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter reads the OTEL_* variables)."""
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "gavel")}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    configure(provider)


def start_run(screening):
    """Open the run's span (when tracing) and start its clock: what finish_run closes. The model calls of
    the same run made before it (the provider's answer being screened) become its first children."""
    tracer = state["tracer"]
    span = None
    if tracer is not None:
        facts = screening.facts
        calls = _take_pending(facts.correlation_id)
        span = tracer.start_span(f"{OPERATION} gavel", start_time=min((c[1] for c in calls), default=None),
                                 attributes={
            "gen_ai.operation.name": OPERATION, "gen_ai.guardrail.name": "gavel",
            "gen_ai.guardrail.target": "llm_output",
            "gen_ai.guardrail.policy.id": getattr(facts.configuration, "identifier", "") or "",
            "gen_ai.guardrail.policy.version": str(facts.policy_version or ""),
            "gavel.correlation_id": facts.correlation_id, "gavel.kind": facts.kind,
            "gavel.request_id": request_id.get(),
        })
        screening.trace_span = span
        for call in calls:
            _emit_call(call, trace.set_span_in_context(span))
    return span, time.perf_counter()


def finish_run(started, screening) -> None:
    span, clock = started
    metrics.screening_took(time.perf_counter() - clock)
    if span is None:
        return
    traced = getattr(screening, "traced_checks", set())
    parent = trace.set_span_in_context(span)
    for index, check in enumerate(screening.checks):
        if index not in traced:  # skipped without running (an earlier block): a span that says so
            child = state["tracer"].start_span(f"{OPERATION} {check['check']}", context=parent)
            _describe_check(child, screening, check)
            child.end()
    verdict = VERDICTS.get(screening.outcome, "allow")
    if verdict == "allow" and any(c.get("result") == "redacted" for c in screening.checks):
        verdict = "modify"
    span.set_attribute("gen_ai.guardrail.verdict", verdict)
    span.set_attribute("gen_ai.guardrail.action", ACTIONS[verdict])
    if screening.block is not None:
        rules = rule_ids(screening, screening.block.check)
        if rules:
            span.set_attribute("gen_ai.guardrail.rule.id", rules)
        span.set_attribute("gavel.block.check", screening.block.check)
    span.end()


def traced(check: str, step):
    """The step, inside a child span of the run's when the run is traced."""
    def run(screening):
        span = getattr(screening, "trace_span", None)
        if span is None:
            return step(screening)
        before = len(screening.checks)
        with state["tracer"].start_as_current_span(f"{OPERATION} {check}",
                                                    context=trace.set_span_in_context(span)) as child:
            token = current_check.set(check)
            try:
                result = step(screening)
            finally:
                current_check.reset(token)
            for index in range(before, len(screening.checks)):
                _describe_check(child, screening, screening.checks[index])
                screening.traced_checks = getattr(screening, "traced_checks", set()) | {index}
        return result

    run.__name__ = getattr(step, "__name__", check)
    return run


def _describe_check(span, screening, check: dict) -> None:
    name, result = check.get("check", ""), check.get("result", "")
    span.set_attribute("gen_ai.operation.name", OPERATION)
    span.set_attribute("gen_ai.guardrail.name", name)
    span.set_attribute("gen_ai.guardrail.target", "llm_output")
    span.set_attribute("gavel.check.result", result)
    if check.get("reason"):
        span.set_attribute("gavel.check.reason", check["reason"])
    verdict = CHECK_VERDICTS.get(result)
    if verdict:
        span.set_attribute("gen_ai.guardrail.verdict", verdict)
        span.set_attribute("gen_ai.guardrail.action", ACTIONS[verdict])
        rules = rule_ids(screening, name)
        if rules and verdict != "allow":
            span.set_attribute("gen_ai.guardrail.rule.id", rules)


def rule_ids(screening, check: str) -> list[str]:
    """Identifiers of the rules a check's events name: term-list names, pattern-rule identifiers, judged rules
    as snippet#number. Never terms, passages or any other text."""
    found = []
    for event in screening.events:
        if event.get("check_name") != check:
            continue
        detail = event.get("detail") or {}
        for value in (detail.get("list"), detail.get("identifier")):
            if isinstance(value, str) and value:
                found.append(value)
        for rule in detail.get("rules") or []:
            if isinstance(rule, dict) and rule.get("number") is not None:
                found.append(f"{rule.get('snippet', '')}#{rule['number']}")
    return sorted(set(found))


# --- model calls (the GenAI inference span) ---
OPERATIONS = {"chat": "chat", "decision": "decision"}  # "decision": System One's format, no predefined name
# gen_ai.provider.name's well-known values for litellm's routes; any other route is named as it is.
PROVIDER_NAMES = {"openai": "openai", "azure": "azure.ai.openai", "anthropic": "anthropic", "bedrock": "aws.bedrock",
                  "vertex_ai": "gcp.vertex_ai", "gemini": "gcp.gemini", "mistral": "mistral_ai", "groq": "groq",
                  "cohere": "cohere", "deepseek": "deepseek", "perplexity": "perplexity", "xai": "x_ai",
                  "watsonx": "ibm.watsonx.ai"}


def traced_call(operation: str, ask, correlation_id: str):
    """`ask(candidate, target)` (governance/runs/calls.py), recording each model call as a span when tracing;
    `ask` itself, at no cost, when not."""
    if state["tracer"] is None:
        return ask

    def call(candidate, target):
        started = time.time_ns()
        try:
            reply = ask(candidate, target)
        except Exception as exc:
            _model_called(operation, candidate, correlation_id, started, error=exc)
            raise
        _model_called(operation, candidate, correlation_id, started, reply=reply)
        return reply

    return call


def _model_called(operation, candidate, correlation_id, started, *, reply=None, error=None) -> None:
    provider = candidate.provider
    purpose = current_check.get()
    attributes = {"gen_ai.operation.name": OPERATIONS.get(operation, operation),
                  "gen_ai.provider.name": PROVIDER_NAMES.get(provider.route, provider.route),
                  "gen_ai.system": PROVIDER_NAMES.get(provider.route, provider.route),
                  "gen_ai.request.model": candidate.model, "gavel.configuration": candidate.identifier,
                  "gavel.provider": provider.name, "gavel.call.for": purpose or "generation",
                  "gavel.correlation_id": correlation_id}
    address = urlsplit(provider.api_base or "")
    if address.hostname:  # where the call went, never a path or query (they could carry a key)
        attributes["server.address"] = address.hostname
        if address.port:
            attributes["server.port"] = address.port
    if reply is not None:
        if getattr(reply, "model", None):
            attributes["gen_ai.response.model"] = reply.model
        usage = getattr(reply, "usage", None) or {}
        if not getattr(reply, "usage_estimated", False) and usage:  # tokens the provider reported
            attributes["gen_ai.usage.input_tokens"] = int(usage.get("prompt_tokens", 0))
            attributes["gen_ai.usage.output_tokens"] = int(usage.get("completion_tokens", 0))
        if getattr(reply, "raw_finish_reason", None):
            attributes["gen_ai.response.finish_reasons"] = [reply.raw_finish_reason]
    else:
        status = getattr(error, "status", None)
        attributes["error.type"] = ("timeout" if getattr(error, "timeout", False) else
                                    str(status) if status else type(error).__name__)
    call = (f"{attributes['gen_ai.operation.name']} {candidate.model}", started, time.time_ns(), attributes,
            error is not None, correlation_id)
    if purpose:  # inside a check's span (a judge): its child, now
        _emit_call(call, None)
        return
    calls = pending_calls.get()
    if calls is None:
        calls = []
        pending_calls.set(calls)
    calls.append(call)


def stream_answered(candidate, correlation_id: str, reply) -> None:
    """A streamed answer, finished (governance/runs/completions.py): its span, begun when the stream was asked for."""
    if state["tracer"] is not None:
        started = time.time_ns() - int(max(getattr(reply, "latency_ms", 0.0) or 0.0, 0.0) * 1_000_000)
        _model_called("chat", candidate, correlation_id, started, reply=reply)


def _emit_call(call, context) -> None:
    name, started, ended, attributes, failed, _correlation = call
    if state["tracer"] is None:
        return  # tracing was turned off in between (a test's provider went away)
    span = state["tracer"].start_span(name, context=context, kind=SpanKind.CLIENT, start_time=started,
                                      attributes=attributes)
    if failed:
        span.set_status(Status(StatusCode.ERROR, attributes["error.type"]))
    span.end(end_time=ended)


def _take_pending(correlation_id: str) -> list:
    """The waiting model calls of this run; any other's (a run that failed before it was screened) is sent
    on its own now rather than kept."""
    calls = pending_calls.get()
    if not calls:
        return []
    pending_calls.set(None)
    mine = [call for call in calls if call[5] == correlation_id]
    for call in calls:
        if call[5] != correlation_id:
            _emit_call(call, Context())  # a trace of its own, whatever span is current
    return mine


def flush_pending() -> None:
    """Send the model calls no run took (a provider that failed: nothing was screened) as spans of their own."""
    if pending_calls.get() and state["tracer"] is not None:
        _take_pending("")


@task_postrun.connect(weak=False, dispatch_uid="gavel-trace-flush")
def _after_task(**_kwargs) -> None:
    """A worker's task ended: the same for its model calls no run took (the next task starts clean)."""
    flush_pending()


class RequestIdMiddleware:
    """Hands the request id (governance.middleware.RequestIDMiddleware) to the run's span; after the
    response, sends the model calls no run took."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = request_id.set(getattr(request, "request_id", ""))
        try:
            return self.get_response(request)
        finally:
            flush_pending()
            request_id.reset(token)


configure_from_environment()
