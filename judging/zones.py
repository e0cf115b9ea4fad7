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
    """The judged side's zone (SPEC §7): where the text was written.

    Each argument is a provider's declared zone: None when that provider is not known,
    "" when it is known but declares no zone. The serving provider decides when it is
    known, else the configuration's own provider; when neither is known, or the deciding
    provider declares no (or no recognised) zone, the text counts as written in `local`,
    so only a local judge may read it. (For where data may *go* the usual default is the
    least trusted zone; here that default would let every judge through.)
    """
    zone = served_by_zone if served_by_zone is not None else configuration_zone
    return zone if zone in TRUST_ZONES else "local"


def _known(zone: str | None) -> str:
    """A zone data may go to; an unknown or undeclared one counts as the least trusted."""
    return zone if zone in TRUST_ZONES else TRUST_ZONES[-1]


def refused_data_classes(judge_zone: str | None, data_classes: Iterable[str]) -> list[str]:
    """The declared data classes a zone's ceiling does not admit, each once, in order.

    A blank class is undeclared and places no constraint; an unrecognised one is refused
    (it cannot be shown to sit under any ceiling).
    """
    ceiling = DATA_CLASSES.index(CEILING[_known(judge_zone)])
    refused: list[str] = []
    for data_class in data_classes:
        if not data_class or data_class in refused:
            continue
        if data_class not in DATA_CLASSES or DATA_CLASSES.index(data_class) > ceiling:
            refused.append(data_class)
    return refused


def admits(judge_zone: str | None, data_classes: Iterable[str]) -> bool:
    """Whether a zone's ceiling admits every declared data class (blank is undeclared)."""
    return not refused_data_classes(judge_zone, data_classes)


def may_read(judge_zone: str | None, text_zone: str) -> bool:
    """A judge never reads text in a less trusted place than where it was written."""
    return zone_rank(judge_zone) <= zone_rank(text_zone)

