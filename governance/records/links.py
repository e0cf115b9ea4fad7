"""Judge chains and fallbacks as a graph: what the policy refuses, and what an edit changes for others.

`link_problems` is pure (plain data in, plain data out) and serves the admin, the service layer
and the policy import alike; `graph_from_database`, `referrers`, `configuration_effects` and
`provider_effects` read the records.
Decisions: docs/decisions.md, "Judge chains and fallbacks are relations".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance.models import Configuration, FallbackLink, JudgeLink

# --- Messages a person reads (tests assert on them) ---

MSG_FALLBACK_KIND = gettext_lazy(
    "“%(target)s” is a %(target_kind)s configuration and “%(source)s” a %(source_kind)s one: a fallback must be "
    "of the same kind. Choose a %(source_kind)s configuration."
)
MSG_FALLBACK_LOOP = gettext_lazy(
    "“%(target)s” already falls back to “%(source)s”: fallbacks are one hop, and a loop is refused. Remove one "
    "of the two."
)
MSG_MUTUAL_JUDGES = gettext_lazy(
    "“%(target)s” already has “%(source)s” as a judge: two configurations that judge each other in block mode "
    "could stop each other's judges. Remove one of the two, or leave block mode."
)
MSG_SELF = gettext_lazy("A configuration cannot name itself. Remove “%(source)s” from this list.")
MSG_TWICE = gettext_lazy("“%(target)s” is named twice. A configuration is asked at most once; remove the repeat.")

# What an edit changes for another configuration (SPEC §2.3: judging is the administrator's alone).
EFFECT_RENAME = gettext_lazy("Configuration “%(other)s” names “%(target)s” as %(role)s: its policy would name the "
                             "new identifier.")
EFFECT_PROVIDER = gettext_lazy("Configuration “%(other)s” names “%(target)s” as %(role)s: a new provider changes "
                               "where its texts are sent and which texts it may read (trust zone, kind).")
EFFECT_FALLBACKS = gettext_lazy("Configuration “%(other)s” has “%(target)s” as a judge: its fallbacks count towards "
                                "the judge's trust zone.")
EFFECT_PROVIDER_FIELD = gettext_lazy("Configuration “%(other)s” names “%(target)s” (provider %(provider)s) as "
                                     "%(role)s: the provider's %(fields)s decide where its texts are sent and "
                                     "whether its judges may run.")
EFFECT_OWN_JUDGES = gettext_lazy("Configuration “%(other)s” runs on provider %(provider)s and has judges: the "
                                 "provider's %(fields)s decide which of its judges may read its texts.")
MSG_ADMIN_MUST = gettext_lazy("%(effect)s An administrator must make this change.")

ROLES = {
    "judge": gettext_lazy("a judge"),
    "fallback": gettext_lazy("a fallback"),
    "escalation": gettext_lazy("its escalation"),
}


@dataclass
class Node:
    """One configuration as the link checks see it."""

    kind: str  # the provider's kind: chat | decision
    mode: str  # rule_mode
    judges: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Problem:
    source: str  # the configuration whose list holds the link
    field: str  # fallbacks | rule_judges
    index: int  # the place in that list
    target: str
    code: str  # self | twice | fallback_kind | fallback_loop | mutual_judges
    message: str


def link_problems(graph: dict[str, Node], only: set[str] | None = None) -> list[Problem]:
    """Every refused link in `graph`: self-reference, repeats, fallbacks of another kind, fallback loops,
    and two configurations judging each other while one of them blocks. With `only`, the links whose
    source or target is one of those names."""
    problems: list[Problem] = []
    for source in sorted(graph):
        node = graph[source]
        for list_field, names in (("fallbacks", node.fallbacks), ("rule_judges", node.judges)):
            seen: set[str] = set()
            for index, target in enumerate(names):
                if only is not None and source not in only and target not in only:
                    continue
                facts = {"source": source, "target": target}
                code = None
                if target == source:
                    code, message = "self", _(str(MSG_SELF)) % facts
                elif target in seen:
                    code, message = "twice", _(str(MSG_TWICE)) % facts
                elif (other := graph.get(target)) is not None:
                    if list_field == "fallbacks" and other.kind != node.kind:
                        code, message = "fallback_kind", _(str(MSG_FALLBACK_KIND)) % {
                            **facts, "target_kind": _(other.kind), "source_kind": _(node.kind)}
                    elif list_field == "fallbacks" and source in other.fallbacks:
                        code, message = "fallback_loop", _(str(MSG_FALLBACK_LOOP)) % facts
                    elif (list_field == "rule_judges" and source in other.judges
                          and "block" in (node.mode, other.mode)):
                        code, message = "mutual_judges", _(str(MSG_MUTUAL_JUDGES)) % facts
                seen.add(target)
                if code:
                    problems.append(Problem(source, list_field, index, target, code, message))
    return problems


def graph_from_database() -> dict[str, Node]:
    """Every configuration's kind, mode, judges and fallbacks: three queries."""
    graph = {identifier: Node(kind, mode) for identifier, kind, mode in
             Configuration.objects.values_list("identifier", "provider__kind", "rule_mode")}
    for source, target in JudgeLink.objects.order_by("configuration", "position", "pk").values_list(
            "configuration__identifier", "judge__identifier"):
        graph[source].judges.append(target)
    for source, target in FallbackLink.objects.order_by("configuration", "position", "pk").values_list(
            "configuration__identifier", "fallback__identifier"):
        graph[source].fallbacks.append(target)
    return graph


def new_problems(stored_name: str | None, proposed_name: str, node: Node,
                 graph: dict[str, Node] | None = None) -> list[Problem]:
    """The problems a configuration's proposed state adds to the stored graph (old ones are not blamed on
    an unrelated edit). `stored_name` is its identifier as stored (None when it is new)."""
    before = graph if graph is not None else graph_from_database()
    after = {name: Node(n.kind, n.mode, list(n.judges), list(n.fallbacks)) for name, n in before.items()}
    if stored_name is not None and stored_name != proposed_name:
        after.pop(stored_name, None)
        for other in after.values():
            other.judges = [proposed_name if n == stored_name else n for n in other.judges]
            other.fallbacks = [proposed_name if n == stored_name else n for n in other.fallbacks]
    after[proposed_name] = node

    def renamed(name):
        return proposed_name if name == stored_name else name

    old = {(renamed(p.source), p.field, renamed(p.target), p.code) for p in link_problems(before)}
    return [p for p in link_problems(after, only={proposed_name}) if (p.source, p.field, p.target, p.code) not in old]


# --- What an edit changes for other configurations ---


def referrers(configuration) -> list[tuple[str, str]]:
    """(other configuration, role) for every configuration naming this one as judge, fallback or escalation."""
    if configuration.pk is None:
        return []
    found = [(name, "judge") for name in JudgeLink.objects.filter(judge=configuration)
             .values_list("configuration__identifier", flat=True)]
    found += [(name, "fallback") for name in FallbackLink.objects.filter(fallback=configuration)
              .values_list("configuration__identifier", flat=True)]
    found += [(name, "escalation") for name in Configuration.objects.filter(escalation=configuration)
              .exclude(pk=configuration.pk).values_list("identifier", flat=True)]
    return sorted(set(found))


def configuration_effects(stored, proposed: dict) -> list[tuple[str, str]]:
    """(affected configuration, sentence) for each way saving `proposed` over `stored` changes how another
    configuration's judges, zones or fallbacks behave. `proposed` maps field names to new values
    (`provider` a Provider, `fallbacks` a list of configurations)."""
    if stored is None or stored.pk is None:
        return []
    effects: list[tuple[str, str]] = []
    others = referrers(stored)
    target = stored.identifier
    renamed = "identifier" in proposed and proposed["identifier"] != stored.identifier
    provider = proposed.get("provider", stored.provider)
    new_provider = provider is not None and getattr(provider, "pk", None) != stored.provider_id
    fallbacks_changed = ("fallbacks" in proposed
                         and [c.pk for c in proposed["fallbacks"]] != [c.pk for c in stored.ordered_fallbacks()])
    for other, role in others:
        facts = {"other": other, "target": target, "role": _(str(ROLES[role]))}
        if renamed:
            effects.append((other, _(str(EFFECT_RENAME)) % facts))
        if new_provider:
            effects.append((other, _(str(EFFECT_PROVIDER)) % facts))
        if fallbacks_changed and role == "judge":
            effects.append((other, _(str(EFFECT_FALLBACKS)) % facts))
    return effects


# A provider's fields that decide kind and trust zone of everything that runs on it.
PROVIDER_EFFECT_FIELDS = ("kind", "route", "trust_zone")


def provider_effects(stored, proposed: dict) -> list[tuple[str, str]]:
    """(affected configuration, sentence) for each configuration whose judges, zones or fallbacks change
    when provider `stored` takes the values in `proposed` (kind, route, trust zone)."""
    if stored is None or stored.pk is None:
        return []
    changed = [name for name in PROVIDER_EFFECT_FIELDS
               if name in proposed and (proposed[name] or "") != (getattr(stored, name) or "")]
    if not changed:
        return []
    labels = ", ".join(str(stored._meta.get_field(name).verbose_name) for name in changed)
    effects: list[tuple[str, str]] = []
    for configuration in Configuration.objects.filter(provider=stored).order_by("identifier"):
        for other, role in referrers(configuration):
            effects.append((other, _(str(EFFECT_PROVIDER_FIELD)) % {
                "other": other, "target": configuration.identifier, "provider": stored.name,
                "role": _(str(ROLES[role])), "fields": labels}))
        if "trust_zone" in changed and configuration.judge_links.exists():
            effects.append((configuration.identifier, _(str(EFFECT_OWN_JUDGES)) % {
                "other": configuration.identifier, "provider": stored.name, "fields": labels}))
    return effects


def refusal_text(effects: list[tuple[str, str]]) -> str:
    """The refusal a non-administrator reads: each effect, then who must make the change."""
    return " ".join(_(str(MSG_ADMIN_MUST)) % {"effect": sentence} for _other, sentence in effects)
