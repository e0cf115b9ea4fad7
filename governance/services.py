"""Business steps behind the API, commands and admin: turn requests into screenings."""
from datetime import datetime

from django.db.models import Exists, OuterRef, Subquery
from django.utils.translation import gettext as _

from governance.errors import BadInput, NotGranted, UnknownRecord
from governance.models import Configuration, Consumer, PolicyVersion, Provider
from governance.screening import CallFacts, Output, ToolCall, run_pipeline


def resolve_configurations(identifier: str | None, also: list[str], consumer: Consumer | None):
    """Fetch the named configurations: 404 for an unknown one, 403 for one not granted.

    One query reads the configurations, whether the consumer was granted each, and the policy version
    (as `policy_version` on each): the hot path of every screening (docs/operations.md).
    """
    names = [n for n in [identifier, *also] if n]
    query = Configuration.objects.select_related("provider").filter(identifier__in=names).annotate(
        policy_version=Subquery(PolicyVersion.objects.filter(pk=1).values("value")[:1]),
    )
    if consumer is not None:
        grants = Consumer.configurations.through.objects.filter(consumer_id=consumer.pk, configuration_id=OuterRef("pk"))
        query = query.annotate(granted=Exists(grants))
    found = {c.identifier: c for c in query} if names else {}
    for field, values in (("configuration", [identifier] if identifier else []), ("also", also)):
        missing = [n for n in values if n not in found]
        if missing:
            raise UnknownRecord(
                _("Unknown configuration: %(names)s") % {"names": ", ".join(missing)},
                code="unknown_configuration", fields={field: [_("Unknown configuration: %s") % n for n in missing]},
            )
    if consumer is not None:
        refused = [n for n in names if not found[n].granted]
        if refused:
            raise NotGranted(
                _("This consumer was not granted: %(names)s") % {"names": ", ".join(refused)}, code="not_granted"
            )
    main = found.get(identifier) if identifier else None
    return main, [found[n] for n in also]


def policy_version_of(configurations) -> int:
    """The policy version read with these configurations (resolve_configurations), or read now."""
    for configuration in configurations:
        if configuration is not None and hasattr(configuration, "policy_version"):
            return configuration.policy_version or 1  # no row yet: never bumped, version 1
    return PolicyVersion.current()


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
    version = facts.policy_version = policy_version_of([configuration, *also])
    output = Output(
        text=data["text"],
        format=data.get("format", "text"),
        tool_calls=[ToolCall(name=c["name"], arguments=c["arguments"], id=c.get("id")) for c in data.get("tool_calls") or []],
    )
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
