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
    """Every reason a judge of `configuration` can never run: zones (SPEC §7), then judges not built yet."""
    if configuration is None or configuration.pk is None:
        return []
    judges = configuration.ordered_judges()
    if not judges:
        if configuration.rule_mode != "off":
            return [core.render(messages.WARN_NO_JUDGES, None, configuration=configuration.identifier,
                                mode=configuration.rule_mode)]
        return []
    warnings = zone_warnings(configuration)
    for judge in judges:
        if judge.provider.kind == "decision":
            from judging.judges import NotAsked, judge_for

            if isinstance(judge_for(judge), NotAsked):  # until SPEC §6.4 registers its judge
                facts = {"judge": judge.identifier, "configuration": configuration.identifier}
                warnings.append(core.render(messages.WARN_DECISION_JUDGE, None, **facts))
    return warnings
