"""OpenTelemetry traces of screenings (SPEC §13.2): a span per run, a child span per check, no content.

Span names and attributes follow OpenTelemetry's GenAI guardrail conventions (`gen_ai.guardrail.*`, still in
development status; the version Gavel follows is CONVENTION, docs/operations.md). Traces are exported over
OTLP only when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise tracing is off and costs one flag check per
step. The same module times the screening for the `gavel_added_seconds` histogram.
"""
import contextvars
import os
import time

from opentelemetry import trace

from governance.evidence import metrics

CONVENTION = "OpenTelemetry GenAI semantic conventions (development status), gen_ai.guardrail.* as of 2026-12"
OPERATION = "apply_guardrail"
VERDICTS = {"allowed": "allow", "allowed_with_hints": "warn", "blocked": "deny"}
CHECK_VERDICTS = {"passed": "allow", "reported": "warn", "redacted": "modify", "blocked": "deny"}
ACTIONS = {"allow": "none", "warn": "annotate", "modify": "redact", "deny": "block"}
state = {"tracer": None}
request_id = contextvars.ContextVar("gavel_request_id", default="")


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
    """Open the run's span (when tracing) and start its clock: what finish_run closes."""
    tracer = state["tracer"]
    span = None
    if tracer is not None:
        facts = screening.facts
        span = tracer.start_span(f"{OPERATION} gavel", attributes={
            "gen_ai.operation.name": OPERATION, "gen_ai.guardrail.name": "gavel",
            "gen_ai.guardrail.target": "llm_output",
            "gen_ai.guardrail.policy.id": getattr(facts.configuration, "identifier", "") or "",
            "gen_ai.guardrail.policy.version": str(facts.policy_version or ""),
            "gavel.correlation_id": facts.correlation_id, "gavel.kind": facts.kind,
            "gavel.request_id": request_id.get(),
        })
        screening.trace_span = span
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
            result = step(screening)
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


class RequestIdMiddleware:
    """Hands the request id (governance.middleware.RequestIDMiddleware) to the run's span."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        token = request_id.set(getattr(request, "request_id", ""))
        try:
            return self.get_response(request)
        finally:
            request_id.reset(token)


configure_from_environment()
