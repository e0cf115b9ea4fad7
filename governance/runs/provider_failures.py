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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

logger = logging.getLogger("gavel.completions")

# How each kind of failure reads; the HTTP status is added where one arrived.
KINDS = {
    "connection": gettext_lazy("could not connect"),
    "timeout": gettext_lazy("no answer in time"),
    "missing_key": gettext_lazy("its key variable is not set"),
    "rate_limited": gettext_lazy("rate limited"),
    "server_error": gettext_lazy("server error"),
    "unauthorized": gettext_lazy("the key was refused"),
    "forbidden": gettext_lazy("access refused"),
    "payment_required": gettext_lazy("payment required"),
    "not_found": gettext_lazy("model or endpoint not found"),
    "bad_request": gettext_lazy("request refused"),
    "unusable_response": gettext_lazy("its answer could not be read"),
}


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


def how(fact: dict, *, for_admin: bool) -> str:
    """How the call failed, in the active language. The administrator also reads the address and
    the key variable; a consumer does not (they are the deployment's, not the caller's)."""
    kind = fact.get("failure", "")
    address = fact.get("api_base", "") if for_admin else ""
    if kind == "connection" and fact.get("refused"):
        text = _("connection refused at %(address)s") % {"address": address} if address else _("connection refused")
    elif kind == "connection":
        text = _("could not connect to %(address)s") % {"address": address} if address else str(KINDS[kind])
    elif kind == "missing_key" and for_admin and fact.get("key_env"):
        text = _("the key variable %(variable)s is not set") % {"variable": fact["key_env"]}
    elif kind == "timeout" and fact.get("timeout"):
        text = _("no answer within %(seconds)s s") % {"seconds": fact["timeout"]}
    else:
        text = str(KINDS.get(kind, _("the call failed")))
    if fact.get("status") and kind != "timeout":
        text = _("HTTP %(status)s, %(how)s") % {"status": fact["status"], "how": text}
    if kind != "connection" and kind != "missing_key" and address:
        text += " " + _("(at %(address)s)") % {"address": address}
    return text


def sentence(fact: dict, *, for_admin: bool) -> str:
    """`provider demo-local (configuration demo): connection refused at http://…`."""
    return _("provider %(provider)s (configuration %(configuration)s): %(how)s") % {
        "provider": fact.get("provider", "?"), "configuration": fact.get("configuration", "?"),
        "how": how(fact, for_admin=for_admin)}


def for_consumer(failures: list[dict]) -> str:
    return "; ".join(sentence(fact, for_admin=False) for fact in failures)


def record(failures: list[dict], *, configuration, correlation_id: str, actor: str,
           answered_by: str | None = None) -> None:
    """One governance event for a chain in which providers failed: which, and how; `answered_by`
    names the fallback that answered in the end, if one did."""
    from governance.screening.pipeline import write_events

    if not failures:
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
