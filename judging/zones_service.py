"""Trust zones applied to records (SPEC §7): which judge may read which text.

Turns providers, configurations and rule sets into the plain strings `judging.zones`
reasons about. The judging side counts every provider the completion service could
reach for the judge (`chain_of` of the model calls governance installs, `judging.model_calls`),
so the two cannot drift.
"""
from __future__ import annotations

from governance import messages as core
from judging import messages, model_calls, zones
from judging.rulesets import rule_set_for


def provider_zone(provider) -> str | None:
    """A provider's declared zone: None when there is no provider, "" when it declares none."""
    if provider is None:
        return None
    return provider.trust_zone or ""


def text_zone(served_by=None, configuration=None) -> str:
    """Where a text was written: the serving provider, else the configuration's own; else `local`."""
    own = provider_zone(configuration.provider) if configuration is not None else None
    return zones.written_zone(provider_zone(served_by), own)


def text_zone_of(facts) -> str:
    return text_zone(facts.served_by, facts.configuration)


def judging_zone(judge_configuration) -> str:
    """The least trusted zone among the judge's provider and every provider its fallbacks reach."""
    chain = model_calls.installed().chain_of(judge_configuration)
    return zones.least_trusted(c.provider.trust_zone or None for c in chain)


def refusal(judge_configuration, written: str, rule_set) -> dict | None:
    """Why the judge may not read the text, as facts (None when it may).

    {"judge_zone", "text_zone"} when the judge is less trusted than where the text was
    written; {"judge_zone", "data_class", "snippet"} when its ceiling does not admit a
    snippet's declared data class.
    """
    return next(_refusals(judging_zone(judge_configuration), written, rule_set), None)


def _refusals(where: str, written: str, rule_set):
    """Each reason a judge in zone `where` may not read a text written in `written` under `rule_set`."""
    if not zones.may_read(where, written):
        yield {"judge_zone": where, "text_zone": written}
    for snippet, data_class in rule_set.data_classes:
        if zones.refused_data_classes(where, [data_class]):
            yield {"judge_zone": where, "data_class": data_class, "snippet": snippet}


def zone_warnings(configuration) -> list[str]:
    """Why each judge of `configuration` can never run for zone reasons, in the active language.

    "Never" is measured against texts the configuration writes itself (its own provider's
    zone, `local` when it declares none) and against the data classes of its rule set,
    which hold for every call. A screening naming a less trusted `served_by` may still
    reach a judge this list warns about; one naming a more trusted one may not reach a
    judge it does not mention.
    """
    judges = configuration.ordered_judges()
    if not judges:
        return []
    written = text_zone(None, configuration)
    rule_set = rule_set_for(configuration)
    warnings: list[str] = []
    for judge in judges:
        for facts in _refusals(judging_zone(judge), written, rule_set):
            message = messages.WARN_ZONE if "text_zone" in facts else messages.WARN_DATA_CLASS
            warnings.append(core.render(message, None, judge=judge.identifier,
                                        configuration=configuration.identifier, **facts))
    return warnings
