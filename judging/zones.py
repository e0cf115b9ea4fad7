"""Trust-zone arithmetic (SPEC §7): which judge may read text written where.

Pure: plain strings in, plain answers out; no Django, no litellm.
"""
from collections.abc import Iterable

# Most trusted first.
TRUST_ZONES = ("local", "private_hosted", "external_eu", "external_global")
# Least sensitive first.
DATA_CLASSES = (
    "public_content",
    "editor_content",
    "source_code",
    "internal_configuration",
    "system_diagnostics",
    "secret_adjacent",
)
CEILING = {
    "local": "secret_adjacent",
    "private_hosted": "system_diagnostics",
    "external_eu": "internal_configuration",
    "external_global": "editor_content",
}


def zone_rank(zone: str | None) -> int:
    """Rank of a zone for where data may GO: an unknown zone counts as the least trusted."""
    return TRUST_ZONES.index(zone) if zone in TRUST_ZONES else len(TRUST_ZONES) - 1


def least_trusted(zones: Iterable[str | None]) -> str:
    """The judging side's zone: the least trusted zone it can reach (SPEC §7)."""
    ranks = [zone_rank(z) for z in zones]
    return TRUST_ZONES[max(ranks)] if ranks else TRUST_ZONES[-1]


def written_zone(served_by_zone: str | None, configuration_zone: str | None) -> str:
    """The judged side's zone. Unknown counts as `local`, so only a local judge may read it."""
    for zone in (served_by_zone, configuration_zone):
        if zone:
            return zone if zone in TRUST_ZONES else "local"
    return "local"


def admits(judge_zone: str, data_classes: Iterable[str]) -> bool:
    """Whether a zone's ceiling admits every declared data class (blank is undeclared)."""
    ceiling = DATA_CLASSES.index(CEILING[judge_zone])
    for data_class in data_classes:
        if not data_class:
            continue
        if data_class not in DATA_CLASSES or DATA_CLASSES.index(data_class) > ceiling:
            return False
    return True


def may_judge(judge_zone: str, text_zone: str, data_classes: Iterable[str]) -> bool:
    """A judge never reads text in a less trusted place than where it was written."""
    return zone_rank(judge_zone) <= zone_rank(text_zone) and admits(judge_zone, data_classes)
