"""Business steps behind the API, commands and admin: turn requests into screenings."""
from datetime import datetime

from django.utils.translation import gettext as _

from governance.errors import BadInput, NotGranted, UnknownRecord
from governance.models import Configuration, Consumer, PolicyVersion, Provider
from governance.screening import CallFacts, Output, ToolCall, run_pipeline


def resolve_configurations(identifier: str | None, also: list[str], consumer: Consumer | None):
    """Fetch the named configurations: 404 for an unknown one, 403 for one not granted."""
    names = [n for n in [identifier, *also] if n]
    found = {c.identifier: c for c in Configuration.objects.select_related("provider").filter(identifier__in=names)}
    for field, values in (("configuration", [identifier] if identifier else []), ("also", also)):
        missing = [n for n in values if n not in found]
        if missing:
            raise UnknownRecord(
                _("Unknown configuration: %(names)s") % {"names": ", ".join(missing)},
                code="unknown_configuration", fields={field: [_("Unknown configuration: %s") % n for n in missing]},
            )
    if consumer is not None:
        granted = set(consumer.configurations.filter(identifier__in=names).values_list("identifier", flat=True))
        refused = [n for n in names if n not in granted]
        if refused:
            raise NotGranted(
                _("This consumer was not granted: %(names)s") % {"names": ", ".join(refused)}, code="not_granted"
            )
    main = found.get(identifier) if identifier else None
    return main, [found[n] for n in also]


def resolve_provider(name: str | None) -> Provider | None:
    if not name:
        return None
    provider = Provider.objects.filter(name=name).first()
    if provider is None:
        raise BadInput(_("Unknown provider in served_by."), fields={"served_by": [_("Unknown provider: %s") % name]})
    return provider


def screen(data: dict, *, consumer: Consumer | None, actor: str, reader_language: str | None, correlation_id=None):
    """Screen a caller's output under the policy; return (screening, policy_version)."""
    configuration, also = resolve_configurations(data.get("configuration"), data.get("also") or [], consumer)
    facts = CallFacts(
        configuration=configuration,
        also=also,
        kind=data.get("kind", "completion"),
        offers_tools=data.get("offers_tools", False),
        read_tools=frozenset(data.get("read_tools") or ()),
        served_by=resolve_provider(data.get("served_by")),
        site=data.get("site", ""),
        language=data.get("language", ""),
        actor=actor,
        reader_language=reader_language,
    )
    if correlation_id:
        facts.correlation_id = correlation_id
    output = Output(
        text=data["text"],
        format=data.get("format", "text"),
        tool_calls=[ToolCall(name=c["name"], arguments=c["arguments"], id=c.get("id")) for c in data.get("tool_calls") or []],
    )
    version = PolicyVersion.current()
    return run_pipeline(output, facts), version


def purge_governance(days: int, *, now=None) -> tuple[int, datetime]:
    """Delete governance events older than `days` days; return (count, cutoff). N < 1 is refused."""
    from datetime import timedelta

    from django.utils import timezone

    from governance.models import GovernanceEvent

    if days < 1:
        raise ValueError("days must be at least 1")
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = GovernanceEvent.objects.filter(at__lt=cutoff).delete()
    return deleted, cutoff
