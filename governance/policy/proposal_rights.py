"""What only an administrator may publish: a draft's changes to the fields only administrators write, and
its removals of records (SPEC §12.5, amended by issue 41).

A policy editor's admin form never offers those fields, but a draft can still carry them: a restored
version, or a file imported with `import_policy --draft`. Publishing such a draft writes them, so an
approver who is not an administrator (a user with *publish policy* only) may not publish it. Read in
policy-file terms against the live policy, the same list as every other write path
(`governance.records.permissions.ADMIN_ONLY_FIELDS`).
"""
from __future__ import annotations

from governance.models import Configuration
from governance.policy.format import NAME_KEYS

# Policy-file keys of a configuration that hold admin-only fields (`rules.*` is a nested mapping).
CONFIGURATION_KEYS = ("context_tags", "read_tools", "escalation", "rules.mode", "rules.tags", "rules.judges",
                      "rules.default", "rules.min_confidence",
                      "mcp_servers", "approve_tools", "deny_tools", "mcp_results")
# Admin-only only while another configuration names this one as a judge or its escalation: its budget caps
# (§2.3), and where it sends the text it judges — its provider and fallbacks (docs/permissions.md, issue 11:
# "giving such a configuration another provider" is an administrator's change).
WHILE_JUDGING_KEYS = ("provider", "fallbacks", "budget.daily_requests", "budget.daily_tokens", "budget.daily_cost")
# §2.3's provider fields, and its kind (a chat or a decision judge: which configurations may judge through it).
PROVIDER_KEYS = ("route", "api_base", "api_key_env", "trust_zone", "kind")
MCP_SERVER_KEYS = ("url", "headers_env", "trust_zone")  # where tool calls go, with which credentials


def _field_default(name: str):
    default = Configuration._meta.get_field(name).default
    return default() if callable(default) else default


def _new_configuration() -> dict:
    """What a configuration added without the admin-only fields holds (their model defaults)."""
    return {"context_tags": [], "read_tools": [], "escalation": None, "mcp_servers": [], "approve_tools": [],
            "deny_tools": [], "mcp_results": _field_default("mcp_results"),
            "rules": {"mode": _field_default("rule_mode"), "tags": [], "judges": [],
                      "default": _field_default("rule_default"), "min_confidence": _field_default("min_confidence")},
            "budget": {"daily_requests": 0, "daily_tokens": 0, "daily_cost": 0}}


def _value(record: dict | None, dotted: str):
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def find_record(document: dict, section: str, name: str) -> dict | None:
    key = NAME_KEYS[section]
    return next((r for r in (document.get(section) or ()) if r.get(key) == name), None)


def _judges_for_others(document: dict, identifier: str) -> bool:
    for other in document.get("configurations") or ():
        if other.get("identifier") == identifier:
            continue
        rules = other.get("rules") or {}
        if identifier in (rules.get("judges") or ()) or other.get("escalation") == identifier:
            return True
    return False


def admin_only_changes(changes, live: dict, drafted: dict) -> list[str]:
    """`section:name key` for each admin-only field the changes write, and `section:name removed` for each
    record they remove (empty: any approver may publish).

    A removal is an administrator's in every section: removing a provider or a configuration takes every
    consumer's grant to it, and removing a list, a rule or an example switches a check (or its test) off."""
    found = []
    for change in changes or ():
        section, name, record = change["section"], change["name"], change.get("record")
        before = find_record(live, section, name)
        if record is None:
            if before is not None or change.get("base") is not None:
                found.append(f"{section}:{name} removed")
            continue
        if section == "providers":
            keys = PROVIDER_KEYS
        elif section == "mcp_servers":
            keys = MCP_SERVER_KEYS
        elif section == "configurations":
            before = before if before is not None else _new_configuration()
            judging = _judges_for_others(live, name) or _judges_for_others(drafted, name)
            keys = CONFIGURATION_KEYS + (WHILE_JUDGING_KEYS if judging else ())
        else:
            continue
        for key in keys:
            if _value(record, key) != _value(before, key) and not (before is None and _value(record, key) is None):
                found.append(f"{section}:{name} {key}")
    return found
