"""Pinned tools (SPEC §14): what each upstream lists, what an administrator approved, what is offered.

A tool is offered by a configuration when its server is one of the configuration's `mcp_servers`, it is
not in `deny_tools`, an administrator approved it, and the upstream still lists it with exactly the
approved description and input schema. The client is always shown the approved text, never the
upstream's newer one. An upstream's list is read at most every GAVEL_MCP_TOOLS_SECONDS per process
(0: at every request); a change seen is written to the tool's row, where the admin shows the diff.
"""
from __future__ import annotations

import difflib
import json
import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from governance.models import Configuration, McpServer, McpTool
from governance.protocols.mcp import checks, upstream

# Per process: server id -> (read at, url, the upstream's tools, the approved pins by name), reused for
# GAVEL_MCP_TOOLS_SECONDS; and (policy version, server names) -> servers. A server is a policy record
# (every edit bumps the version); a pin approved in another process is seen here within the TTL.
logger = logging.getLogger("gavel.mcp")
_lists: dict[int, tuple[float, str, list, dict]] = {}
_servers: dict = {}
_lock = threading.Lock()


def forget_lists() -> None:
    with _lock:
        _lists.clear()
        _servers.clear()


@dataclass
class Refusal:
    code: str  # unknown_tool | denied | not_approved | changed
    message: str


def servers_of(configuration) -> list[McpServer]:
    names = tuple(getattr(configuration, "mcp_servers", None) or ())
    version = getattr(configuration, "policy_version", None)
    key = (version, names)
    held = _servers.get(key) if version is not None else None
    if held is None:
        found = {s.name: s for s in McpServer.objects.filter(name__in=names)}
        held = [found[n] for n in names if n in found]
        if version is not None:
            with _lock:
                if len(_servers) > 256:
                    _servers.clear()
                _servers[key] = held
    return held


def _entry(server: McpServer, *, fresh: bool = False) -> tuple[list, dict]:
    """(the upstream's tools as mcp_types.Tool, the approved pins by name), reused for
    GAVEL_MCP_TOOLS_SECONDS; a change seen upstream is recorded on the tool's row."""
    ttl = float(getattr(settings, "GAVEL_MCP_TOOLS_SECONDS", 5))
    now = time.monotonic()
    with _lock:
        held = _lists.get(server.pk)
    if not fresh and held and held[1] == server.url and now - held[0] < ttl:
        return held[2], held[3]
    tools = upstream.list_tools(server)
    _record(server, tools)
    pins = {row.name: row for row in McpTool.objects.filter(server=server, approved_at__isnull=False)}
    with _lock:
        _lists[server.pk] = (now, server.url, tools, pins)
    return tools, pins


def _seen(server: McpServer, *, fresh: bool = False) -> list:
    return _entry(server, fresh=fresh)[0]


def schema_of(tool) -> dict:
    return tool.input_schema if isinstance(tool.input_schema, dict) else {}


def _record(server: McpServer, tools: list) -> None:
    """Keep each listed tool's description and schema as last seen; write only what changed."""
    rows = {row.name: row for row in McpTool.objects.filter(server=server)}
    now = timezone.now()
    for tool in tools:
        row = rows.get(tool.name)
        description, schema = tool.description or "", schema_of(tool)
        if row is None:
            McpTool.objects.create(server=server, name=tool.name, description=description, input_schema=schema,
                                   seen_at=now)
        elif row.description != description or row.input_schema != schema:
            McpTool.objects.filter(pk=row.pk).update(description=description, input_schema=schema, seen_at=now)


def refresh(server: McpServer) -> list[McpTool]:
    """Read the upstream's list now and return the server's tool rows as last seen."""
    _seen(server, fresh=True)
    return list(McpTool.objects.filter(server=server).order_by("name"))


def change_message(tool: McpTool, changes: list[str]) -> str:
    what = {"description": _("its description"), "input_schema": _("its input schema")}
    return _("The tool %(tool)s was changed on its server since an administrator approved it (%(what)s); it is "
             "withheld until approved again.") % {"tool": tool.name, "what": ", ".join(str(what[c]) for c in changes)}


def _state(configuration, server: McpServer, listed: dict, row: McpTool | None, name: str) -> Refusal | None:
    if name in (configuration.deny_tools or []):
        return Refusal("denied", _("The tool %(tool)s is denied by this configuration.") % {"tool": name})
    if row is None or not row.approved:
        return Refusal("not_approved", _("The tool %(tool)s has not been approved by an administrator.")
                       % {"tool": name})
    tool = listed.get(name)
    if tool is None:
        return Refusal("unknown_tool", _("The server %(server)s no longer offers the tool %(tool)s.")
                       % {"server": server.name, "tool": name})
    changes = []
    if (tool.description or "") != row.approved_description:
        changes.append("description")
    if schema_of(tool) != row.approved_schema:
        changes.append("input_schema")
    if changes:
        return Refusal("changed", change_message(row, changes))
    return None


def offered(configuration) -> list[tuple[McpServer, McpTool]]:
    """The tools `configuration` offers now, each with its server, in server then name order."""
    result = []
    for server in servers_of(configuration):
        try:
            tools_now, rows = _entry(server)
        except upstream.UpstreamError as exc:
            # One unreachable server takes its own tools away, not the others' (its calls fail on their own).
            logger.warning("MCP tools of %s left out of tools/list: %s", server.name, exc)
            continue
        listed = {t.name: t for t in tools_now}
        for name in sorted(listed):
            if _state(configuration, server, listed, rows.get(name), name) is None:
                result.append((server, rows[name]))
    return result


def find(configuration, name: str) -> tuple[McpServer, McpTool] | Refusal:
    """The server and pin of the tool a call names, or why it may not be called."""
    servers = servers_of(configuration)
    for server in servers:
        tools_now, pins = _entry(server)
        if name in pins:
            refusal = _state(configuration, server, {t.name: t for t in tools_now}, pins[name], name)
            return refusal if refusal is not None else (server, pins[name])
    for server in servers:
        if any(t.name == name for t in _seen(server)):  # listed, never approved
            return _state(configuration, server, {}, None, name)
    return Refusal("unknown_tool", _("This configuration offers no tool named %(tool)s.") % {"tool": name})


def description_text(tool: McpTool) -> str:
    """What is screened and shown before a pin: the description and every string of the schema."""
    strings = []

    def walk(node):
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                strings.append(str(key))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(tool.input_schema)
    return "\n".join([tool.description, *strings])


def screen_tool(configuration, tool: McpTool):
    """The screening of a tool's description and schema under `configuration` (nothing is logged)."""
    return checks.screen_description(configuration, description_text(tool))


def diff(tool: McpTool) -> str:
    """The unified diff from the approved description and schema to the ones last seen ("" when equal)."""
    def lines(description, schema):
        return [*(description or "").splitlines(), "--- input schema ---",
                *json.dumps(schema or {}, indent=2, sort_keys=True).splitlines()]
    return "\n".join(difflib.unified_diff(lines(tool.approved_description, tool.approved_schema),
                                          lines(tool.description, tool.input_schema),
                                          "approved", "upstream now", lineterm=""))


class ApprovalRefused(Exception):
    pass


def approve(tool: McpTool, *, actor: str) -> McpTool:
    """Pin the tool's description and schema as last seen. Refused when its screening under a
    configuration using its server blocks, or when such a configuration already offers another
    server's approved tool of the same name (tools keep their upstream names, SPEC §14)."""
    for configuration in Configuration.objects.all():
        if tool.server.name not in (configuration.mcp_servers or []):
            continue
        screening = screen_tool(configuration, tool)
        if screening.block is not None:
            raise ApprovalRefused(_("The description of %(tool)s is stopped by the policy of %(configuration)s: "
                                    "%(message)s") % {"tool": tool.name, "configuration": configuration.identifier,
                                                      "message": screening.block.message})
        clash = (McpTool.objects.filter(name=tool.name, approved_at__isnull=False,
                                        server__name__in=configuration.mcp_servers)
                 .exclude(server=tool.server).select_related("server").first())
        if clash is not None:
            raise ApprovalRefused(_("The configuration %(configuration)s already offers a tool named %(tool)s from "
                                    "the server %(server)s.") % {"configuration": configuration.identifier,
                                                                 "tool": tool.name, "server": clash.server.name})
    McpTool.objects.filter(pk=tool.pk).update(approved_description=tool.description,
                                              approved_schema=tool.input_schema, approved_by=actor[:150],
                                              approved_at=timezone.now())
    tool.refresh_from_db()
    forget_lists()
    return tool


@dataclass
class ToolReport:
    """One upstream tool as an administrator reviews it before pinning (command and admin alike)."""

    server: McpServer
    tool: McpTool
    state: str  # approved | not_approved | changed | denied | gone
    findings: list[str]
    blocked: str
    diff: str


def report(configuration) -> list[ToolReport]:
    """Every tool of the configuration's servers, read from the upstream now, screened under its policy."""
    reports = []
    for server in servers_of(configuration):
        listed = {t.name for t in _seen(server, fresh=True)}
        for tool in McpTool.objects.filter(server=server).order_by("name"):
            if tool.name not in listed:
                state = "gone"
            elif tool.name in (configuration.deny_tools or []):
                state = "denied"
            elif not tool.approved:
                state = "not_approved"
            else:
                state = "changed" if tool.changes() else "approved"
            screening = screen_tool(configuration, tool)
            reports.append(ToolReport(server, tool, state, [h.get("message", "") for h in screening.hints],
                                      screening.block.message if screening.block else "", diff(tool)))
    return reports
