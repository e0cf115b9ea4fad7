"""The `mcp_servers:` section (SPEC §14): upstream MCP servers (name, url, header variables, zone, timeout).

A configuration names the servers it may use (`mcp_servers`); the header variables follow the provider-key
allow-list (governance/models/mcp.py), so a document cannot make Gavel send one of its own settings.
"""
from __future__ import annotations

from governance.models import McpServer, headers_env_problems
from governance.policy.format import MCP_SERVER_KEYS
from governance.policy.reading import MISSING, Errors, Reader, Record, default_of


def export() -> list[dict]:
    """Every MCP server, by name."""
    return [
        {"name": s.name, "url": s.url, "headers_env": dict(s.headers_env or {}), "trust_zone": s.trust_zone,
         "timeout": s.timeout}
        for s in McpServer.objects.order_by("name")
    ]


def read(errors: Errors, path: str, data: dict) -> Record:
    r = Reader(errors, path, data, MCP_SERVER_KEYS)
    name = r.string("name", required=True)
    headers = r.raw("headers_env")
    headers = {} if headers is MISSING or headers is None else headers
    for problem in headers_env_problems(headers):
        r.fail("headers_env", problem)
    values = {
        "name": name,
        "url": r.string("url", required=True),
        "headers_env": headers if isinstance(headers, dict) else {},
        "trust_zone": r.choice("trust_zone", [z for z, _label in McpServer._meta.get_field("trust_zone").choices],
                               default_of(McpServer, "trust_zone")),
        "timeout": r.integer("timeout", default_of(McpServer, "timeout"), minimum=1),
    }
    return Record("mcp_servers", path, name, values, paths={f: f for f in values}, failed=set(r.failed))
