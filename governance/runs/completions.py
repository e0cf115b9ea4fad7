"""The completion service: a generation screened whole (`run`), streams.

Every model call in Gavel goes through the call service, governance/runs/calls.py (`call_model`,
`call_decision`: budgets, usage rows, fallbacks, provider limits), which asks `judging.llm` — the
one module that imports litellm.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from governance.errors import BadInput
from governance.models import Configuration
from governance.runs import limits, provider_failures
# The call service (budgets, usage rows, fallbacks, limits) lives in governance/runs/calls.py; its names
# stay importable from here for the completion service's callers.
from governance.runs.calls import (  # noqa: F401
    _caps, _count_failure, _count_usage, _messages_for, _raise_chain_failure, _refused, _through_chain,
    _unsupported, _update_usage, call_decision, call_model, chain_of, claim_request, model_target, over_budget,
    refuse_budget, sampling,
)
from governance.evidence import tracing
from governance.evidence.records import record_completion
from governance.runs.escalation import screen_generated, tool_calls_of
from governance.screening import service as services
from governance.screening.pipeline import STEP_CHECK_NAMES, CallFacts, Output, ToolCall
from governance.screening.redaction import StreamRedactor

logger = logging.getLogger("gavel.completions")


_SAMPLING_KEYS = ("temperature", "max_tokens", "client_temperature", "client_max_tokens")
# The provider's `response_format` types that ask for a JSON answer.
JSON_FORMATS = ("json_object", "json_schema")


# --- the completion endpoint ---
@dataclass
class PreparedCall:
    configuration: Configuration
    also: list
    messages: list[dict]
    tools: list[dict]
    read_tools: frozenset
    kind: str
    site: str
    language: str
    actor: str
    reader_language: str | None
    correlation_id: str
    policy_version: int
    options: dict = field(default_factory=dict)
    busy_wait: float | None = None  # how long the generation waits for a provider at its limit (None: its timeout)
    surface: str = "api"  # where the text leaves Gavel, for its evidence record (SPEC §13.1)
    # What the request's protocol read but did not send on (SPEC §11.9), first in the response's `checks`.
    request_checks: list = field(default_factory=list)

    @property
    def answer_format(self) -> str:
        """`json` when the client asked for a JSON answer, else `text`: screened as such (SPEC §11.8).
        Every protocol reads its own member into the provider's `response_format` (Chat's
        `response_format`, Responses' `text.format`, Messages' `output_config.format`); a forced tool's
        answer is a tool call, whose arguments are always read as JSON."""
        asked = self.options.get("response_format")
        return "json" if isinstance(asked, dict) and asked.get("type") in JSON_FORMATS else "text"

    def output_of(self, text: str, reply) -> Output:
        """The answer as the screening reads it: its text in the format asked for, its tool calls."""
        return Output(text=text, format=self.answer_format, tool_calls=tool_calls_of(reply))

    def facts(self, served_by=None) -> CallFacts:
        return CallFacts(
            configuration=self.configuration, also=self.also, kind=self.kind, offers_tools=bool(self.tools),
            read_tools=self.read_tools, served_by=served_by, site=self.site, language=self.language,
            actor=self.actor, reader_language=self.reader_language, correlation_id=self.correlation_id,
            policy_version=self.policy_version,
        )


def prepare(data: dict, *, consumer, actor: str, reader_language: str | None, correlation_id: str) -> PreparedCall:
    """Resolve and authorise a completion request; refuse it when over budget (before any provider)."""
    services.require_kind(consumer, data.get("kind", "completion"))
    configuration, also = services.resolve_configurations(data["configuration"], data.get("also") or [], consumer)
    if configuration.provider.kind == "decision":
        # A decision model answers questions and writes no text (SPEC §6.4): never a chat call.
        message = _("%(c)s is a decision configuration: it judges texts and writes none.") % {
            "c": configuration.identifier}
        raise BadInput(message, fields={"configuration": [message]})
    cap = over_budget(configuration)
    if cap:
        raise refuse_budget(configuration, cap, correlation_id=correlation_id, actor=actor)
    options = {"tools": data["tools"]} if data.get("tools") else {}
    return PreparedCall(
        configuration=configuration, also=also, messages=[dict(m) for m in data["messages"]],
        tools=data.get("tools") or [], read_tools=frozenset(data.get("read_tools") or ()),
        kind=data.get("kind", "completion"), site=data.get("site", ""), language=data.get("language", ""),
        actor=actor, reader_language=reader_language, correlation_id=correlation_id,
        policy_version=services.policy_version_of([configuration, *also]), options=options,
    )


def count_input_tokens(data: dict, *, consumer) -> int:
    """The input tokens of a completions request as its configuration's provider would be sent them (the
    configuration's system prompt first), by litellm's counter for its model (the Messages API's count_tokens,
    SPEC §11.9). Authorised as a completion; no provider is asked, so no budget is spent or checked."""
    from judging.llm import count_tokens

    services.require_kind(consumer, data.get("kind", "completion"))
    configuration, _also = services.resolve_configurations(data["configuration"], data.get("also") or [], consumer)
    return count_tokens(model_target(configuration), _messages_for(configuration, list(data["messages"])),
                        data.get("tools") or None)


def check_client_parameters(call: PreparedCall) -> None:
    """Refuse, before any provider is asked, a client parameter the configuration's route does not take
    (SPEC §11.5: passed on or refused with 400 naming it, never dropped)."""
    from judging.llm import UnsupportedParameters, check_parameters

    names = list(call.options.get("client_parameters") or ())
    if not names:
        return
    try:
        check_parameters(model_target(call.configuration), names)
    except UnsupportedParameters as exc:
        raise _unsupported(exc) from exc


def send_where_taken(call: PreparedCall, optional: dict, dropped: dict, client_name=str) -> None:
    """Parameters a client sends by default (Claude Code's `thinking` and effort) reach the provider where the
    configuration's route takes them, else they are dropped; each dropped one, and every member the protocol
    read but did not send on (`dropped`: name → reason), is an entry of the response's `checks` (SPEC §11.9:
    never silently dropped). `client_name` names a parameter as the client sent it."""
    from judging.llm import UnsupportedParameters, check_parameters

    untaken: list = []
    if optional:
        try:
            check_parameters(model_target(call.configuration), list(optional))
        except UnsupportedParameters as exc:
            untaken = exc.names
    taken = {name: value for name, value in optional.items() if name not in untaken}
    if taken:
        call.options["client_parameters"] = {**(call.options.get("client_parameters") or {}), **taken}
    notes = {client_name(name): "not_taken_by_route" for name in untaken}
    notes.update({name: reason for name, reason in dropped.items() if name not in notes})
    call.request_checks.extend({"check": "request", "result": "dropped", "field": name, "reason": reason}
                               for name, reason in sorted(notes.items()))


def _with_request_checks(call: PreparedCall, body: dict) -> dict:
    if call.request_checks:
        body["checks"] = [*call.request_checks, *(body.get("checks") or [])]
    return body


def _completion_info(reply, served: Configuration, escalated_from: str | None = None) -> dict:
    info = {"provider": served.provider.name, "model": reply.model or served.model,
            "usage": reply.usage, "cost": round(float(reply.cost), 8)}
    if escalated_from:
        info["escalated_from"] = escalated_from  # the configuration whose answer failed verification (§6.6)
    return info


def run(call: PreparedCall) -> dict:
    """Generate, then screen the answer; the response of SPEC §11.1 with `completion`."""

    reply, served = call_model(call.configuration, call.messages, correlation_id=call.correlation_id,
                               actor=call.actor, busy_wait=call.busy_wait, **call.options)
    # Screened, and escalated once when its verification fails (SPEC §6.6); tasks come through here too.
    result = screen_generated(call, call.output_of(reply.text or "", reply), reply, served)
    body = _with_request_checks(call, result.screening.as_response(call.policy_version))
    body["completion"] = _completion_info(result.reply, result.served, result.escalated_from)
    record_completion(call, body)
    return body


# --- streams (SPEC §8.1) ---
def sse(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def holds_stream(facts: CallFacts, answer_format: str = "text") -> bool:
    """Held when a term list applies or the effective rule mode is block — in a run that offers tools
    too: Gavel cannot know in advance whether the model will answer with text (SPEC §8.2). A JSON answer
    is always held: its `\\u` escapes hide a key from a live stream's redaction, which reads the text
    as sent, and only the whole document decodes (SPEC §9, §11.8)."""
    from termlists.guardrail import lists_apply

    return answer_format == "json" or facts.strictest_mode == "block" or lists_apply(facts)


def open_stream(call: PreparedCall):
    """Start the stream, falling back until a provider sends its first chunk.

    Errors before the first chunk raise the ordinary API errors (SPEC §8.1);
    returns (handle, iterator, first chunk, serving configuration, usage day).

    A stream Gavel will hold (decided here, before any provider is asked) sends nothing before its
    verdict, so it asks the provider for the whole answer without streaming (`whole_answer`): the
    same steps follow, at a plain call's cost. Its first chunk is then None and the answer comes
    from the iterator; an answer that broke off after it began is raised from there, like a stream
    broken after its first chunk. The handle carries the facts that decided the hold.
    """
    from judging.llm import ProviderError, UnsupportedParameters, stream, whole_answer

    facts = call.facts()
    held = holds_stream(facts, call.answer_format)
    ask = whole_answer if held else stream
    errors, failures = [], []

    def log_failures(answered_by=None):
        provider_failures.record(failures, configuration=call.configuration, correlation_id=call.correlation_id,
                                 actor=call.actor, answered_by=answered_by)

    for candidate in chain_of(call.configuration):
        # The provider's limits (SPEC 10.1): the place is held until the stream has ended (stream_steps).
        slot = limits.acquire(candidate.provider, tokens=limits.rough_tokens(call.messages),
                              wait_up_to=float(candidate.effective_timeout()))
        try:
            day = claim_request(candidate)
        except BaseException:
            slot.release()
            raise
        if day is None:
            slot.release()
            if candidate is call.configuration:
                raise refuse_budget(candidate, over_budget(candidate) or "daily_requests",
                                    correlation_id=call.correlation_id, actor=call.actor)
            continue
        try:
            handle = ask(model_target(candidate), _messages_for(candidate, call.messages),
                         **sampling(candidate, call.options))
            handle.limit_slot, handle.facts, handle.held = slot, facts, held
            iterator = iter(handle)
            first = None if held else next(iterator, None)
        except BaseException as exc:
            slot.release()
            if isinstance(exc, UnsupportedParameters):
                raise _unsupported(exc) from exc
            if not isinstance(exc, ProviderError):
                raise
            _count_failure(candidate, day)
            errors.append(exc)
            failures.append(provider_failures.facts(candidate, exc))
            logger.warning("provider stream failed for %s: %s", candidate.identifier,
                           provider_failures.sentence(failures[-1], for_admin=True))
            if not exc.retryable:
                log_failures()
                raise _refused(failures[-1]) from exc
            continue
        log_failures(answered_by=candidate.identifier)
        return handle, iterator, first, candidate, day
    log_failures()
    _raise_chain_failure(errors, failures)


def stream_events(call: PreparedCall, opened=None):
    """Yield the SSE events of one streamed completion; `done` is always last."""
    for name, data in stream_steps(call, opened):
        yield sse(name, data)


def planned_steps(call: PreparedCall, opened):
    """(steps, done) of an opened stream. A held stream sends nothing before its verdict (SPEC §8.1), so
    it is screened here, before the response starts, and `done` (its last step's data) lets the
    response's headers carry the outcome (§11.1); a live stream's steps are a generator, `done` None."""
    facts, held = _hold_of(call, opened)
    steps = stream_steps(call, opened, facts)
    if not held:
        return steps, None
    steps = list(steps)
    return steps, steps[-1][1]


def _hold_of(call: PreparedCall, opened, facts=None) -> tuple[CallFacts, bool]:
    """(facts, held) of an opened stream: as open_stream decided them, now naming who served.
    The same facts decide the hold and are screened, so the term lists' scope is read once."""
    handle, served = opened[0], opened[3]
    facts = facts or getattr(handle, "facts", None) or call.facts()
    facts.served_by = served.provider
    held = getattr(handle, "held", None)
    return facts, holds_stream(facts, call.answer_format) if held is None else held


def stream_steps(call: PreparedCall, opened=None, facts=None):
    """Yield (event name, data) of one streamed completion, `done` always last: one run for
    every wire format (Gavel's SSE here, OpenAI chunks in governance/protocols/openai_chat)."""
    from judging.llm import ProviderError

    opened = opened or open_stream(call)
    handle, iterator, first, served, day = opened
    facts, held = _hold_of(call, opened, facts)
    redactor = StreamRedactor()
    parts: list[str] = []
    try:
        chunks = iter(([first] if first is not None else []))
        for delta in _chain(chunks, iterator):
            parts.append(delta)
            if not held:
                safe = redactor.feed(delta)
                if safe:
                    yield "delta", {"text": safe}
        if not held:
            rest = redactor.flush()
            if rest:
                yield "delta", {"text": rest}
        reply = handle.reply
        getattr(handle, "limit_slot", limits.NO_LIMIT).release(reply.usage.get("total_tokens", 0))
        _count_usage(served, day, reply.usage.get("total_tokens", 0), reply.cost, reply.latency_ms)
        tracing.stream_answered(served, call.correlation_id, reply)  # its span, under the run's (SPEC §13.2)
        # A held stream may escalate; a live one has already sent its text (SPEC §8.1).
        result = screen_generated(call, call.output_of("".join(parts), reply), reply, served,
                                  facts, live=not held)
        screening = result.screening
    except Exception as exc:
        # After the first chunk there is no fallback, and the text was not
        # screened whole: say so, and still end with `done` (SPEC §8.1).
        getattr(handle, "limit_slot", limits.NO_LIMIT).release()
        timed_out = getattr(exc, "timeout", False)
        if isinstance(exc, ProviderError):

            failure = provider_failures.facts(served, exc)
            logger.warning("stream failed after it started: %s", provider_failures.sentence(failure, for_admin=True))
            _count_failure(served, day)
            provider_failures.record([failure], configuration=call.configuration, correlation_id=call.correlation_id,
                                     actor=call.actor)
            code = "provider_timeout" if timed_out else "provider_error"
            message = _("The provider stopped while streaming: %(failure)s.") % {
                "failure": provider_failures.for_consumer([failure])}
        else:
            logger.exception("screening a stream failed (request %s)", call.correlation_id)
            code, message = "server_error", _("Gavel could not finish screening the stream; it has been logged.")
        yield "error", {"error": {"code": code, "message": message, "fields": {}}}
        yield "done", _unfinished_stream_body(call, served, held, redacted=bool(redactor.findings))
        return
    body = _with_request_checks(call, screening.as_response(call.policy_version))
    body["completion"] = _completion_info(result.reply, result.served, result.escalated_from)
    record_completion(call, body)
    text = body.pop("text", None)
    if held:
        if screening.block is not None:
            yield "blocked", {"block": body["block"]}
        else:
            yield "delta", {"text": text or ""}
    else:
        if body["hints"]:
            yield "hints", {"hints": body["hints"]}
        if screening.block is not None:
            # A live stream that is stopped at the end: its proposed tool calls are
            # not returned, and it says so.
            yield "blocked", {"block": body["block"]}
    yield "done", body


def _unfinished_stream_body(call: PreparedCall, served: Configuration, held: bool, *, redacted: bool) -> dict:
    """The `done` of a stream that broke off: nothing after redaction was checked.

    A held stream delivered nothing, so it ends blocked with a block that says
    why; a live stream delivered its (redacted) deltas, which no later check saw:
    a "not checked" hint, as SPEC §4 handles a check that could not run.
    """
    reason = "stream_error"
    message = str(_("The answer broke off while streaming, so it was not checked."))
    checks = [{"check": "secret_redaction", "result": "skipped" if held else ("redacted" if redacted else "passed"),
               **({"reason": reason} if held else {})}]
    checks += [{"check": name, "result": "not_checked", "reason": reason}
               for name in STEP_CHECK_NAMES.values() if name != "secret_redaction"]
    body = {"id": call.correlation_id, "policy_version": call.policy_version,
            "outcome": "blocked" if held else "allowed_with_hints"}
    if held:
        body["hints"] = []
        body["block"] = {"check": "stream", "message": message, "stored_message": message}
    else:
        body["tool_calls"] = []
        body["hints"] = [{"check": "stream", "type": "not_checked", "reason": reason, "passage": None,
                          "start": None, "end": None, "message": message}]
        body["block"] = None
    body["verification"] = {"status": "not_applicable", "checks": []}
    body["checks"] = [*call.request_checks, *checks]
    # `done` always names who served (SPEC §8.1); the provider's totals never arrived.
    body["completion"] = {"provider": served.provider.name, "model": served.model, "usage": {}, "cost": 0.0}
    return body


def _chain(*iterables):
    for iterable in iterables:
        yield from iterable
