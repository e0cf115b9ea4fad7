"""The `configurations:` section: what a call names, with its budget, rule fields, fallbacks and judges.

Also the checks that need the configurations as they will stand: links between them and model families.
"""
from __future__ import annotations

from decimal import Decimal

from governance.records import links
from governance.models import Configuration, Provider, normalise_tags, normalise_tool_names
from governance.policy.format import BUDGET_KEYS, CONFIGURATION_KEYS, CONFIGURATION_PATHS, RULES_KEYS
from governance.policy.messages import MSG_SELF_REFERENCE
from governance.policy.reading import Document, Errors, Reader, Record, default_of, identifiers, number
from governance.models.families import family_faults


def _mcp_keys(c) -> dict:
    """The MCP gateway's keys (SPEC §14), written only for a configuration that uses them: a policy without
    MCP exports exactly as the example writes it (docs/mcp.md)."""
    if not (c.mcp_servers or c.approve_tools or c.deny_tools
            or c.mcp_results != default_of(Configuration, "mcp_results")):
        return {}
    return {"mcp_servers": list(c.mcp_servers), "approve_tools": list(c.approve_tools),
            "deny_tools": list(c.deny_tools), "mcp_results": c.mcp_results}


def export() -> list[dict]:
    """Every configuration, by identifier, with its relations by identifier."""
    return [
        {
            "identifier": c.identifier,
            "provider": c.provider.name,
            "model": c.model,
            "system_prompt": c.system_prompt,
            "temperature": c.temperature,
            "max_tokens": c.max_tokens,
            "timeout": c.timeout,
            "fallbacks": c.fallback_identifiers(),
            "budget": {
                "daily_requests": c.budget_daily_requests,
                "daily_tokens": c.budget_daily_tokens,
                "daily_cost": number(c.budget_daily_cost),
            },
            "context_tags": list(c.context_tags),
            "read_tools": list(c.read_tools),
            "escalation": c.escalation.identifier if c.escalation_id else None,
            "rules": {
                "mode": c.rule_mode,
                "tags": list(c.rule_tags),
                "judges": c.judge_identifiers(),
                "default": c.rule_default,
                "min_confidence": c.min_confidence,
            },
            **_mcp_keys(c),
        }
        for c in Configuration.objects.select_related("provider", "escalation")
        .prefetch_related("judge_links__judge", "fallback_links__fallback").order_by("identifier")
    ]


def read(errors: Errors, path: str, data: dict) -> Record:
    r = Reader(errors, path, data, CONFIGURATION_KEYS)
    identifier = r.string("identifier", required=True)
    budget = r.mapping("budget", BUDGET_KEYS)
    rules = r.mapping("rules", RULES_KEYS)
    values = {
        "identifier": identifier,
        "model": r.string("model", required=True),
        "system_prompt": r.string("system_prompt", nullable=True),
        "temperature": r.number("temperature", None, minimum=0, maximum=2, nullable=True),
        "max_tokens": r.integer("max_tokens", None, minimum=0, nullable=True),
        "timeout": r.integer("timeout", default_of(Configuration, "timeout"), minimum=0, nullable=False),
        "budget_daily_requests": budget.integer("daily_requests", 0, minimum=0),
        "budget_daily_tokens": budget.integer("daily_tokens", 0, minimum=0, maximum=2**63 - 1),  # a big integer
        "budget_daily_cost": budget.decimal("daily_cost", Decimal("0")),
        "context_tags": normalise_tags(r.strings("context_tags")),
        "read_tools": normalise_tool_names(r.strings("read_tools")),
        "mcp_servers": normalise_tool_names(r.strings("mcp_servers")),
        "approve_tools": normalise_tool_names(r.strings("approve_tools")),
        "deny_tools": normalise_tool_names(r.strings("deny_tools")),
        "mcp_results": r.choice("mcp_results", Configuration.RuleMode.values, default_of(Configuration, "mcp_results")),
        "rule_mode": rules.choice("mode", Configuration.RuleMode.values, default_of(Configuration, "rule_mode")),
        "rule_tags": normalise_tags(rules.strings("tags")),
        "rule_default": rules.choice("default", Configuration.RuleDefault.values,
                                     default_of(Configuration, "rule_default")),
        "min_confidence": rules.number("min_confidence", default_of(Configuration, "min_confidence"),
                                       minimum=0, maximum=1),
    }
    refs = {"provider": r.string("provider", required=True), "escalation": r.string("escalation", nullable=True),
            # Relations (JudgeLink, FallbackLink): written once every configuration of the document exists.
            "fallbacks": identifiers(r, "fallbacks", errors, own=identifier),
            "rule_judges": identifiers(rules, "judges", errors, own=identifier)}
    if refs["escalation"] and refs["escalation"] == identifier:
        r.fail("escalation", MSG_SELF_REFERENCE)
    paths = {f: CONFIGURATION_PATHS.get(f, f) for f in [*values, "fallbacks", "rule_judges"]}
    failed = set(r.failed) | {f"budget_{k}" for k in budget.failed} | {
        {"mode": "rule_mode", "tags": "rule_tags", "judges": "rule_judges", "default": "rule_default"}.get(k, k)
        for k in rules.failed
    }
    return Record("configurations", path, identifier, values, refs=refs, paths=paths, failed=failed)


def check_links(doc: Document, errors: Errors, *, prune: bool) -> None:
    """Fallbacks of another kind, fallback loops, judges judging each other in block mode (governance.records.links),
    on the policy as it would stand after the import, reported at the document's paths."""
    stored = links.graph_from_database()
    old = {(p.source, p.field, p.target, p.code) for p in links.link_problems(stored)}
    graph = {} if (prune and doc.present("configurations")) else stored
    kinds = dict(Provider.objects.values_list("name", "kind"))
    kinds.update({r.name: r.values["kind"] for r in doc.records("providers") if r.name})
    stored_providers = dict(Configuration.objects.values_list("identifier", "provider__name"))
    paths = {}
    for record in doc.records("configurations"):
        if not record.name:
            continue
        provider = record.refs.get("provider") or stored_providers.get(record.name)
        graph[record.name] = links.Node(
            kind=kinds.get(provider, "chat"), mode=record.values.get("rule_mode") or "off",
            judges=[n for n in record.refs["rule_judges"] if n], fallbacks=[n for n in record.refs["fallbacks"] if n])
        paths[record.name] = record.path
    if doc.present("providers"):
        # A provider's new kind reaches the stored configurations that run on it.
        for identifier, node in graph.items():
            if identifier not in paths and stored_providers.get(identifier) in kinds:
                node.kind = kinds[stored_providers[identifier]]
    for problem in links.link_problems(graph):
        if problem.code in ("self", "twice"):
            continue  # reported by identifiers, at the same path
        if problem.code == "fallback_kind" and problem.source in paths:
            continue  # reported by _check_families, at the same path
        if (problem.source, problem.field, problem.target, problem.code) in old:
            continue  # already so before the import: not this document's doing
        key = "fallbacks" if problem.field == "fallbacks" else "rules.judges"
        where = paths.get(problem.source)
        path = f"{where}.{key}[{problem.index}]" if where else "configurations"
        errors.add(path, problem.message)


def check_families(doc: Document, errors: Errors) -> None:
    """Chat and decision configurations never mix (SPEC §6.4), judged on the records as they will stand."""
    provider_kinds = dict(Provider.objects.values_list("name", "kind"))
    provider_kinds.update({r.name: r.values["kind"] for r in doc.records("providers") if r.name})
    kinds = {name: provider_kinds.get(provider)
             for name, provider in Configuration.objects.values_list("identifier", "provider__name")}
    kinds.update({r.name: provider_kinds.get(r.refs.get("provider")) for r in doc.records("configurations") if r.name})
    for record in doc.records("configurations"):
        provider = record.refs.get("provider")
        kind = provider_kinds.get(provider)
        if kind is None:
            continue  # an unknown provider is reported by the reference check
        values = {**record.values, "escalation": record.refs.get("escalation"), "fallbacks": record.refs.get("fallbacks")}
        known = {name: k for name, k in kinds.items() if k is not None}
        for fault in family_faults(kind, provider, values, kinds=known):
            path = f"{record.path}.{record.paths.get(fault.field, fault.field)}"
            errors.add(f"{path}[{fault.index}]" if fault.index is not None else path, fault.message)
