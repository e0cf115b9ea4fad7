"""Business steps behind the API, commands and admin: turn requests into screenings."""
import copy
from datetime import datetime

from django.db import connection
from django.utils.translation import gettext as _

from governance.errors import BadInput, NotGranted, UnknownRecord
from governance.evidence.records import record_screening
from governance.models import (
    GRANTABLE_KINDS, Configuration, Consumer, PolicyVersion, Provider, forget_links, GovernanceEvent,
)
from governance.screening.pipeline import CallFacts, Output, ToolCall, run_pipeline


def require_kind(consumer: Consumer | None, kind) -> None:
    """Refuse a kind the consumer's record does not grant (SPEC §3), before anything runs: 403
    `kind_not_granted`. The free kinds need no grant; an unknown kind is left to the request's check."""
    if consumer is None or kind not in GRANTABLE_KINDS or consumer.may_state(kind):
        return
    message = _("This consumer may not state the kind %(kind)s: an administrator grants it "
                "(create_consumer --kinds, or the consumer's page in the admin).") % {"kind": kind}
    raise NotGranted(message, code="kind_not_granted", fields={"kind": [message]})


def resolve_configurations(identifier: str | None, also: list[str], consumer: Consumer | None):
    """Fetch the named configurations: 404 for an unknown one, 403 for one not granted.

    The hot path of every screening (docs/operations.md): one query reads the policy version, the
    named configurations' ids and whether the consumer was granted each; the configurations (with
    their providers) come from this process's copy for that policy version, read once per version.
    Each caller gets its own copies, carrying `policy_version` and `granted`.
    """
    names = [n for n in [identifier, *also] if n]
    found = {}
    if names:
        version, rows = _from_snapshot(names, consumer) or _version_and_grants(names, consumer)
        cached = _configurations_at(version, {name: pk for name, pk, _ in rows})
        for name, _pk, granted in rows:
            if name not in cached:
                continue  # deleted since the first statement: unknown, as if read a moment later
            configuration = copy.copy(cached[name])
            configuration.policy_version = version
            configuration.granted = bool(granted)
            found[name] = configuration
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


def _from_snapshot(names: list[str], consumer: Consumer | None):
    """(policy version, [(identifier, id, True)]) from what the token's statement read with the consumer
    (governance.api.auth.consumer_by_token_hash), when every name is granted; else None, and the names
    are read afresh (an unknown or refused one gets its error there). Never inside a transaction: it may
    have changed the policy since (a draft is tried in one that is rolled back)."""
    snapshot = getattr(consumer, "grants_snapshot", None)
    # (A test's own transaction is marked by Django's TestCase and does not count.)
    if snapshot is None or any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks):
        return None
    version, granted = snapshot
    if not all(name in granted for name in names):
        return None
    return version, [(name, granted[name], True) for name in dict.fromkeys(names)]


def _version_and_grants(names: list[str], consumer: Consumer | None) -> tuple[int, list[tuple[str, int, bool]]]:
    """(policy version, [(identifier, id, granted)]) in one statement, written out so that no
    queryset is built and compiled on every screening. No version row yet means version 1."""
    config = connection.ops.quote_name(Configuration._meta.db_table)
    version_table = connection.ops.quote_name(PolicyVersion._meta.db_table)
    grants = connection.ops.quote_name(Consumer.configurations.through._meta.db_table)
    placeholders = ", ".join(["%s"] * len(names))
    sql = (
        f"SELECT (SELECT value FROM {version_table} WHERE id = 1), c.identifier, c.id, "
        f"EXISTS (SELECT 1 FROM {grants} g WHERE g.configuration_id = c.id AND g.consumer_id = %s) "
        f"FROM {config} c WHERE c.identifier IN ({placeholders})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [consumer.pk if consumer is not None else None, *names])
        rows = cursor.fetchall()
    version = (rows[0][0] if rows else None) or 1
    return version, [(name, pk, granted) for _v, name, pk, granted in rows]


# (policy version, {identifier: Configuration with its provider}), in this process. Every edit of a
# configuration or provider bumps the version, which each request reads in _version_and_grants: an
# entry read under version V is only used by requests that read V, and is at least as new as V.
# A request that finds another version starts a new dict and keeps working on its own one, so two
# threads on different versions never mix. A record deleted and made again (another id) is read afresh.
_configurations: dict = {"entry": (None, {})}


def _configurations_at(version: int, ids: dict[str, int]) -> dict[str, Configuration]:
    held_version, held = _configurations["entry"]
    if held_version != version:
        held = {}
        _configurations["entry"] = (version, held)
    stale = [name for name, pk in ids.items() if name not in held or held[name].pk != pk]
    if stale:
        for configuration in Configuration.objects.select_related("provider").filter(identifier__in=stale):
            held[configuration.identifier] = configuration
    return held


def forget_configurations() -> None:
    """Drop this process's copies and their links (tests: a rolled-back database reuses version numbers)."""
    _configurations["entry"] = (None, {})
    forget_links()


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
        # A name that keeps the schema but names no record: 404, as an unknown configuration (issue 41).
        raise UnknownRecord(_("Unknown provider in served_by."), code="unknown_provider",
                            fields={"served_by": [_("Unknown provider: %s") % name]})
    return provider


def screen(data: dict, *, consumer: Consumer | None, actor: str, reader_language: str | None, correlation_id=None):
    """Screen a caller's output under the policy; return (screening, policy_version)."""
    require_kind(consumer, data.get("kind", "completion"))
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
    screening = run_pipeline(output, facts)
    record_screening(screening, version)  # SPEC §13.1
    return screening, version


def purge_governance(days: int, *, now=None) -> tuple[int, datetime]:
    """Delete governance events older than `days` days; return (count, cutoff). N < 1 is refused."""
    from datetime import timedelta

    from django.utils import timezone

    if days < 1:
        raise ValueError("days must be at least 1")
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = GovernanceEvent.objects.filter(at__lt=cutoff).delete()
    return deleted, cutoff
