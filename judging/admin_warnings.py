"""What the admin tells an administrator about a configuration's judges and a snippet's rules.

Plain functions returning text (in the active language) and data, so the admin files only
display them: `configuration_warnings` on the configuration change page, and
`rule_numbering_for_snippet` on the snippet change page.
"""
from __future__ import annotations

from governance import messages as core
from judging import messages
from judging.rulesets import rule_numbering_for_snippet
from judging.zones_service import zone_warnings

__all__ = ["configuration_warnings", "rule_numbering_for_snippet", "zone_warnings"]


def configuration_warnings(configuration) -> list[str]:
    """Every reason a judge of `configuration` can never run: zones (SPEC §7), then missing judges."""
    from governance.models import Configuration

    if configuration is None or configuration.pk is None:
        return []
    names = list(configuration.rule_judges or ())
    if not names:
        if configuration.rule_mode != "off":
            return [core.render(messages.WARN_NO_JUDGES, None, configuration=configuration.identifier,
                                mode=configuration.rule_mode)]
        return []
    warnings = zone_warnings(configuration)
    found = {c.identifier: c for c in Configuration.objects.select_related("provider").filter(identifier__in=names)}
    for name in names:
        judge = found.get(name)
        facts = {"judge": name, "configuration": configuration.identifier}
        if judge is None:
            warnings.append(core.render(messages.WARN_UNKNOWN_JUDGE, None, **facts))
    return warnings
