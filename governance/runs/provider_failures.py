"""A provider failure, said so the person who can fix it knows what to fix.

A failed call becomes facts (provider, configuration, kind of failure, HTTP status, the address
asked, the key variable's name, the seconds allowed; never a key), kept in the governance log and
rendered in the reader's language: the administrator reads where (address, variable), the
consumer reads which provider of the chain failed and how.
"""
from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

from django.db import DatabaseError, transaction

# How a failure reads is a message like every other (governance.messages); named here for the run's callers.
from governance.messages import failure_for_consumer as for_consumer, failure_sentence as sentence  # noqa: F401
from governance.runs.rehearsal import drafting
from governance.screening.pipeline import write_events

logger = logging.getLogger("gavel.completions")

def public_address(api_base: str | None) -> str:
    """The address without credentials, query or fragment (an api_base may carry a key in either)."""
    if not api_base:
        return ""
    try:
        parts = urlsplit(api_base)
    except ValueError:
        return ""
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def facts(candidate, error) -> dict:
    """The governance facts of one failed call to `candidate` (a Configuration)."""
    provider = candidate.provider
    fact = {"provider": provider.name, "configuration": candidate.identifier, "failure": error.kind}
    if error.status:
        fact["status"] = error.status
    if getattr(error, "refused", False):
        fact["refused"] = True
    address = public_address(getattr(error, "api_base", None) or provider.api_base)
    if address:
        fact["api_base"] = address
    if error.kind == "missing_key" and provider.api_key_env:
        fact["key_env"] = provider.api_key_env
    if error.kind == "timeout" and getattr(error, "timeout_seconds", None):
        fact["timeout"] = round(float(error.timeout_seconds), 1)
    if getattr(error, "after_first_chunk", False):
        fact["after_first_chunk"] = True
    return fact


def record(failures: list[dict], *, configuration, correlation_id: str, actor: str,
           answered_by: str | None = None) -> None:
    """One governance event for a chain in which providers failed: which, and how; `answered_by`
    names the fallback that answered in the end, if one did."""
    if not failures or drafting():  # a draft's failures are in its report; the draft was rolled back
        return
    first = failures[0]
    detail = {"failures": failures}
    if answered_by:
        detail["answered_by"] = answered_by
    event = {
        "correlation_id": correlation_id, "decision": "provider_failed", "check_name": "provider",
        "configuration": configuration.identifier, "provider": first.get("provider", "")[:100],
        "model": configuration.model[:200], "actor": actor[:150], "mode": "", "detail": detail,
    }
    try:
        # In a savepoint: a log row that cannot be written must not replace the failure the caller
        # is about to hear, nor break the transaction around it.
        with transaction.atomic():
            write_events([event])
    except DatabaseError:
        logger.warning("could not log the provider failure of %s", configuration.identifier, exc_info=True)
