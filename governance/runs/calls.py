"""The call service: every model call in Gavel passes here (SPEC 10.1, "one room for model calls").

Budget caps and usage rows (SPEC 2.2), Gavel's own fallback chain, the provider limits held
across processes (governance/runs/limits.py). `call_model` (completions, tasks, chat judges) and
`call_decision` (decision judges) ask `judging.llm` — the one module that imports litellm. This
module sits below both the completion service (governance/runs/completions.py) and judging: it
imports neither, so the arrows run one way.
"""
from __future__ import annotations

from decimal import Decimal
import logging
import os
import time

from django.db import IntegrityError, transaction
from django.db.models import Prefetch, prefetch_related_objects
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.errors import BadInput, BudgetExceeded, ProviderFailed, ProviderTimedOut
from governance.evidence import metrics, tracing
from governance.runs.rehearsal import drafting, rehearsing
from governance.models import Configuration, FallbackLink, UsageDay
from governance.models.provider_keys import key_env_problem
from governance.runs import connections
from governance.runs import limits, provider_failures
from governance.runs.provider_failures import for_consumer
from governance.screening.pipeline import write_events

logger = logging.getLogger("gavel.calls")


# --- budget caps (SPEC §2.2) ---
def _caps(configuration: Configuration) -> tuple:
    """(name, cap, UsageDay column) of each daily cap; a cap of 0 is no cap."""
    return (
        ("daily_requests", configuration.budget_daily_requests, "requests"),
        ("daily_tokens", configuration.budget_daily_tokens, "tokens"),
        ("daily_cost", configuration.budget_daily_cost, "cost"),
    )


def over_budget(configuration: Configuration) -> str | None:
    """The cap today's usage has reached, or None. 0 means no cap."""
    caps = _caps(configuration)
    if not any(cap for _, cap, _ in caps):
        return None
    usage = UsageDay.objects.filter(configuration=configuration, day=timezone.localdate()).first()
    if usage is None:
        return None
    for name, cap, column in caps:
        if cap and getattr(usage, column) >= cap:
            return name
    return None


def claim_request(configuration: Configuration):
    """Count one request against today's caps, atomically; return the day, or None when over a cap.

    One conditional UPDATE both checks and counts, so parallel calls cannot all
    slip under a cap: the row is only incremented while every cap still has room.
    """
    day = timezone.localdate()
    if rehearsing():
        held = configuration.__dict__.get(_HELD_BUDGET, _NOT_HELD)  # hold_chain: read under the draft
        over = over_budget(configuration) if held is _NOT_HELD else held
        return None if over else day  # a cap still refuses; nothing is counted
    caps = [(column, cap) for _name, cap, column in _caps(configuration) if cap]
    if _update_usage(configuration, day, "requests = requests + 1", [], caps):
        return day  # the usual case: one statement
    # Nothing counted: today's row is missing (the day's first request), or a cap is reached, or
    # another process has just made the row. Where the row exists, counting again tells which.
    if UsageDay.objects.filter(configuration=configuration, day=day).exists():
        return day if _update_usage(configuration, day, "requests = requests + 1", [], caps) else None
    try:
        with transaction.atomic():
            UsageDay.objects.create(configuration=configuration, day=day)
    except IntegrityError:
        pass  # another process made today's row first
    return day if _update_usage(configuration, day, "requests = requests + 1", [], caps) else None


def _update_usage(configuration: Configuration, day, assignments: str, params: list, caps=()) -> int:
    """One UPDATE of the day's usage row, written out: it runs twice per model call, and building
    and compiling a queryset each time cost more than the statement (benchmarks/judging.py).
    `caps` are (column, cap) pairs the row must still be under. Returns the rows changed (0 or 1)."""
    from django.db import connection

    quote = connection.ops.quote_name
    table = quote(UsageDay._meta.db_table)
    where = f"{quote('configuration_id')} = %s AND {quote('day')} = %s" + "".join(
        f" AND {quote(column)} < %s" for column, _cap in caps)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {assignments} WHERE {where}",
                       [*params, configuration.pk, day, *(cap for _column, cap in caps)])
        return cursor.rowcount


def _count_usage(configuration: Configuration, day, tokens: int, cost: float, latency_ms: float = 0.0) -> None:
    """Add tokens, cost and latency to the day the request was counted on (not the day it ended)."""
    if rehearsing():
        return
    _update_usage(configuration, day, "tokens = tokens + %s, cost = cost + %s, latency_ms = latency_ms + %s",
                  [max(tokens, 0), Decimal(str(round(cost, 6))), max(round(latency_ms), 0)])
    metrics.provider_answered(configuration.provider.name, latency_ms)  # SPEC §13.2


def _count_failure(configuration: Configuration, day) -> None:
    """A counted request whose provider failed (error or timeout): the dashboard's failure rate."""
    if rehearsing():
        return
    _update_usage(configuration, day, "failures = failures + 1", [])
    metrics.provider_failed(configuration.provider.name)  # SPEC §13.2


def refuse_budget(configuration: Configuration, cap: str, *, correlation_id: str, actor: str) -> BudgetExceeded:
    if not drafting():  # a draft's refusal is in its report; the draft itself was rolled back
        write_events([{
            "correlation_id": correlation_id, "decision": "budget_refused", "check_name": "budget",
            "configuration": configuration.identifier, "provider": configuration.provider.name,
            "model": configuration.model, "actor": actor[:150], "mode": "", "detail": {"cap": cap},
        }])
    return BudgetExceeded(
        _("The configuration %(c)s has reached its %(cap)s cap for today.") % {"c": configuration.identifier, "cap": cap},
        fields={"configuration": [_("budget exceeded: %s") % cap]},
    )


# --- one model call with Gavel's fallback chain ---
def model_target(configuration: Configuration, timeout_cap: float | None = None):
    from judging.llm import ModelTarget


    provider = configuration.provider
    if key_env_problem(provider.api_key_env):
        # A name stored before the rule (or past it) is never read: the variable could be a server secret.
        logger.error("provider %s names a key variable that is not allowed; the call is refused", provider.name)
        raise ProviderFailed(_("Provider %(name)s is not configured correctly: its key variable is not allowed. "
                               "An administrator must fix it.") % {"name": provider.name},
                             code="provider_configuration", retryable=False)
    timeout = float(configuration.effective_timeout())
    if timeout_cap is not None:
        timeout = min(timeout, timeout_cap)
    return ModelTarget(
        route=provider.route,
        model=configuration.model,
        api_base=provider.api_base or None,
        api_key=os.environ.get(provider.api_key_env) if provider.api_key_env else None,
        timeout=timeout,
        price_in_per_mtok=float(provider.price_per_mtok_in) if provider.price_per_mtok_in is not None else None,
        price_out_per_mtok=float(provider.price_per_mtok_out) if provider.price_per_mtok_out is not None else None,
        key_env=provider.api_key_env or None,
    )


def chain_of(configuration: Configuration) -> list[Configuration]:
    """The configuration, then its fallbacks in order — one hop deep, kinds never mixed."""
    chain = [configuration]
    for fallback in configuration.ordered_fallbacks():
        # Saving refuses a fallback of another kind; a provider's kind changed by a migration or
        # the shell could still make one, and a call must never cross families (SPEC §6.4).
        if fallback.provider.kind != configuration.provider.kind:
            logger.warning("fallback %s of %s is of another kind; skipped", fallback.identifier,
                           configuration.identifier)
        else:
            chain.append(fallback)
    return chain


_HELD_BUDGET = "_gavel_held_over_budget"
_NOT_HELD = object()


def hold_chain(configuration: Configuration) -> None:
    """Read now what a later rehearsed call of `configuration` reads from the database: its fallbacks
    (with their providers) and whether each of the chain is over a budget cap. A draft's judges are
    asked after the draft's transaction is rolled back (judging.cache.Deferral); by then the draft's
    rows are gone, so its chain is read while the draft stands and kept on the instance."""
    if configuration.pk is None:
        return
    prefetch_related_objects([configuration], Prefetch(
        "fallback_links", queryset=FallbackLink.objects.select_related("fallback__provider")))
    for candidate in chain_of(configuration):
        candidate.__dict__[_HELD_BUDGET] = over_budget(candidate)


def _messages_for(configuration: Configuration, messages: list[dict]) -> list[dict]:
    """The messages with the configuration's system prompt first, its `context_tags` context appended (§6.6)."""
    from snippets.services import system_prompt_for

    prompt = system_prompt_for(configuration)
    if prompt:
        return [{"role": "system", "content": prompt}, *messages]
    return list(messages)


def _raise_chain_failure(errors: list, failures: list | None = None) -> None:
    """Say which providers of the chain failed and how (governance/runs/provider_failures.py)."""

    said = for_consumer(failures or [])
    if errors and all(e.timeout for e in errors):
        if said:
            raise ProviderTimedOut(_("Every provider of the chain timed out: %(failures)s.") % {"failures": said})
        raise ProviderTimedOut(_("Every provider of the chain timed out."))
    if said:
        raise ProviderFailed(_("Every provider of the chain failed: %(failures)s.") % {"failures": said})
    raise ProviderFailed(_("Every provider of the chain failed."))


def sampling(candidate: Configuration, options: dict) -> dict:
    """The keyword arguments of one model call to `candidate`.

    `temperature` / `max_tokens` in the options are the caller's last word (a judge asks for 0).
    `client_temperature` / `client_max_tokens` are what an outside client asked for (the OpenAI
    gateway, SPEC §11.5): the configuration's temperature replaces it where it sets one, and the
    configuration's max_tokens caps it.
    """
    kwargs = {k: v for k, v in options.items() if k not in _SAMPLING_KEYS}
    temperature = options.get("temperature", candidate.temperature)
    if temperature is None:
        temperature = options.get("client_temperature")
    limit = options.get("max_tokens", candidate.max_tokens)
    asked = options.get("client_max_tokens")
    if asked is not None:
        limit = min(asked, limit) if limit else asked
    return {**kwargs, "temperature": temperature, "max_tokens": limit}


_SAMPLING_KEYS = ("temperature", "max_tokens", "client_temperature", "client_max_tokens")


def call_model(configuration: Configuration, messages: list[dict], *, correlation_id: str, actor: str,
               timeout_cap: float | None = None, own_system_prompt: bool = True, busy_wait: float | None = None,
               **options):
    """Ask the configuration, falling back on connection errors, timeouts, 429 and 5xx only.

    Returns (reply, serving configuration). Budget caps are checked before any provider is asked.
    `timeout_cap` bounds the whole chain, fallbacks included: each attempt gets its own timeout or
    the time left, whichever is less, and none starts once the time is up (ProviderTimedOut).
    `own_system_prompt=False` sends `messages` exactly, without the configurations' system prompts.
    A provider at one of its limits is waited for up to `busy_wait` seconds (default: the call's
    timeout), then ProviderBusy (governance/runs/limits.py).
    """
    from judging.llm import complete

    def ask(candidate: Configuration, target):
        return complete(
            target,
            _messages_for(candidate, messages) if own_system_prompt else list(messages),
            **sampling(candidate, options),
        )

    tokens = limits.rough_tokens(messages) + int(options.get("max_tokens") or 0)
    return _through_chain(configuration, tracing.traced_call("chat", ask, correlation_id), correlation_id=correlation_id,
                          actor=actor, timeout_cap=timeout_cap, busy_wait=busy_wait, tokens=tokens)


def call_decision(configuration: Configuration, questions: dict, state, *, correlation_id: str, actor: str,
                  timeout_cap: float | None = None):
    """Ask a decision configuration once (SPEC §6.4), with the same budget, fallbacks and usage as `call_model`.

    Returns (DecisionReply, serving configuration); the answers are not validated here.
    """
    from judging.llm import decide

    return _through_chain(configuration, tracing.traced_call("decision", lambda candidate, target: decide(
                              target, questions, state), correlation_id),
                          correlation_id=correlation_id, actor=actor, timeout_cap=timeout_cap,
                          tokens=limits.rough_tokens([questions, state]))


def _through_chain(configuration: Configuration, ask, *, correlation_id: str, actor: str,
                   timeout_cap: float | None, busy_wait: float | None = None, tokens: int = 0):
    """Call `ask(candidate, target)` along the configuration's chain until one answers; count its usage."""
    from judging.llm import ProviderError, UnsupportedParameters

    deadline = time.monotonic() + timeout_cap if timeout_cap is not None else None
    errors = []
    failures: list[dict] = []  # the facts of each failed call, for the log and the caller
    answered_by = None
    # Calls whose provider failed, counted on their usage rows once the chain is done: the write
    # never eats into the time a fallback has left.
    failed: list[tuple] = []
    try:
        for candidate in chain_of(configuration):
            left = None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProviderTimedOut(_("Every provider of the chain timed out."))
            # The provider's limits, across every process (SPEC 10.1): wait for a place, else ProviderBusy.
            timeout = float(candidate.effective_timeout()) if left is None else min(left, candidate.effective_timeout())
            slot = limits.acquire(candidate.provider, tokens=tokens,
                                  wait_up_to=timeout if busy_wait is None else min(busy_wait, timeout))
            reply = None
            try:
                day = claim_request(candidate)
                if day is None:
                    if candidate is configuration:
                        # Refused before any provider is asked (SPEC §2.2).
                        raise refuse_budget(configuration, over_budget(configuration) or "daily_requests",
                                            correlation_id=correlation_id, actor=actor)
                    continue  # a fallback over its own cap is skipped
                if deadline is not None and deadline - time.monotonic() <= 0:
                    raise ProviderTimedOut(_("Every provider of the chain timed out."))
                connections.release()  # a pooled worker thread holds no connection while the model answers
                reply = ask(candidate, model_target(candidate, None if deadline is None
                                                    else deadline - time.monotonic()))
            except UnsupportedParameters as exc:  # a fallback on a route that does not take them
                raise _unsupported(exc) from exc
            except ProviderError as exc:
                failure = provider_failures.facts(candidate, exc)
                logger.warning("provider call failed for %s: %s", candidate.identifier,
                               provider_failures.sentence(failure, for_admin=True))
                failed.append((candidate, day))
                errors.append(exc)
                failures.append(failure)
                if not exc.retryable:
                    raise _refused(failure) from exc
                continue
            finally:
                slot.release(reply.usage.get("total_tokens", 0) if reply is not None else None)
            _count_usage(candidate, day, reply.usage.get("total_tokens", 0), reply.cost, reply.latency_ms)
            answered_by = candidate.identifier
            return reply, candidate
        _raise_chain_failure(errors, failures)
    finally:
        for candidate, day in failed:
            _count_failure(candidate, day)
        # Also when a fallback answered: the administrator learns the first choice is failing.
        provider_failures.record(failures, configuration=configuration, correlation_id=correlation_id,
                                 actor=actor, answered_by=answered_by)


def _refused(failure: dict) -> ProviderFailed:
    """A provider refused the request itself (a 4xx other than 429): asking again would not help."""

    return ProviderFailed(_("The provider refused the request: %(failure)s.") % {"failure": for_consumer([failure])},
                          retryable=False)


def _unsupported(exc) -> BadInput:
    message = _("The provider of this configuration does not take this parameter.")
    return BadInput(_("The request asks for what Gavel does not support."), code="unsupported_parameter",
                    fields={name: [message] for name in exc.names})
