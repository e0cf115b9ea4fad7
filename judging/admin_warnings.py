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
    """Every reason the rules of `configuration` can never be judged: no judge at all, or zones (SPEC §7)."""
    if configuration is None or configuration.pk is None:
        return []
    judges = configuration.ordered_judges()
    if not judges:
        if configuration.rule_mode != "off":
            return [core.render(messages.WARN_NO_JUDGES, None, configuration=configuration.identifier,
                                mode=configuration.rule_mode)]
        return []
    return zone_warnings(configuration)
