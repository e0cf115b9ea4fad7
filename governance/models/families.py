"""Chat and decision families never translate into each other (SPEC §6.4).

A configuration belongs to its provider's family (`Provider.kind`). A decision
configuration only judges: it writes no text, so nothing a chat call needs (a system
prompt, sampling, context, rules of its own, an escalation) may be set on it; fallbacks
stay within one family; an escalation writes a text, so it is a chat configuration.
The admin, the model's `clean` and the policy import all ask `family_faults`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.apps import apps
from django.utils.translation import gettext_lazy as _

CHAT, DECISION = "chat", "decision"

# What only a configuration that writes text uses, and the value that means "not set".
CHAT_ONLY = {
    "system_prompt": "",
    "temperature": None,
    "max_tokens": None,
    "context_tags": [],
    "rule_mode": "off",
    "escalation": None,
}

MSG_CHAT_FIELD = _("A decision configuration only judges: it cannot have %(field)s (provider %(provider)s is of "
                   "kind decision).")
MSG_FALLBACK_FAMILY = _("Fallback %(name)s is a %(other)s configuration; a %(kind)s configuration falls back only to "
                        "%(kind)s configurations.")
MSG_ESCALATION_FAMILY = _("Escalation %(name)s is a decision configuration; an escalation writes a text, so it must "
                          "be a chat configuration.")


@dataclass(frozen=True)
class Fault:
    field: str  # model field name
    message: str
    index: int | None = None  # position in a list field (fallbacks)


def _is_set(field: str, value) -> bool:
    if field == "rule_mode":
        return (value or "off") != "off"
    if field in ("system_prompt", "context_tags", "escalation"):
        return bool(value)
    return value is not None


def family_faults(kind: str, provider: str, values: Mapping, *, kinds: Mapping[str, str]) -> list[Fault]:
    """Every way a configuration of `kind` (its provider `provider`) mixes the families.

    `values` holds its fields by model name (`escalation` as an identifier or None, `fallbacks`
    as identifiers); `kinds` maps the identifiers it names to their family (unknown ones are left
    to the reference checks).
    """
    faults: list[Fault] = []
    if kind == DECISION:
        for field in CHAT_ONLY:
            if _is_set(field, values.get(field)):
                faults.append(Fault(field, str(MSG_CHAT_FIELD % {"field": field, "provider": provider})))
    for index, name in enumerate(values.get("fallbacks") or ()):
        other = kinds.get(name)
        if other is not None and other != kind:
            faults.append(Fault("fallbacks", str(MSG_FALLBACK_FAMILY % {"name": name, "other": other, "kind": kind}),
                                index))
    escalation = values.get("escalation")
    if escalation and kind != DECISION and kinds.get(escalation) == DECISION:
        faults.append(Fault("escalation", str(MSG_ESCALATION_FAMILY % {"name": escalation})))
    return faults


def configuration_faults(configuration) -> list[Fault]:
    """`family_faults` of a configuration record (saved or not), reading the kinds it names."""
    if configuration.provider_id is None:
        return []
    escalation = configuration.escalation.identifier if configuration.escalation_id else None
    values = {field: getattr(configuration, field) for field in CHAT_ONLY if field != "escalation"}
    fallbacks = list(configuration.fallbacks)
    values.update(escalation=escalation, fallbacks=fallbacks)
    names = [n for n in [*fallbacks, escalation] if isinstance(n, str) and n]
    # By name: the records import this module (Configuration.clean asks it), so it cannot import them.
    configurations = apps.get_model("governance", "Configuration").objects
    kinds = dict(configurations.filter(identifier__in=names).values_list("identifier", "provider__kind"))
    provider = configuration.provider
    return family_faults(provider.kind, provider.name, values, kinds=kinds)
