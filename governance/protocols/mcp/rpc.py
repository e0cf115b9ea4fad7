"""JSON-RPC for the MCP endpoint (SPEC §14): read one message, answer `initialize`, `ping`, `tools/list` and
`tools/call`, in the shapes of the SDK's own types (`mcp_types`). Everything else is "method not found" —
also `server/discover`, so a 2026-era client falls back to the `initialize` handshake, which every MCP
client speaks.
"""
from __future__ import annotations

import json

import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

from governance.protocols.mcp import calls, tools, upstream

SERVER_INFO = types.Implementation(name="gavel", version="1")
INSTRUCTIONS = ("Tools offered through Gavel: every call is screened under the configuration's policy, some wait "
                "for an editor's approval, results have their secrets masked.")


class RpcError(Exception):
    def __init__(self, code: int, message: str, request_id=None):
        super().__init__(message)
        self.code, self.message, self.request_id = code, message, request_id


def parse(body: bytes) -> dict:
    """One JSON-RPC message (a request, a notification or a response), or RpcError."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise RpcError(types.PARSE_ERROR, "Parse error: the body is not JSON.")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(types.INVALID_REQUEST, "Invalid request: send one JSON-RPC 2.0 message (no batches).",
                       message.get("id") if isinstance(message, dict) else None)
    return message


def response(request_id, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error(request_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _dump(model) -> dict:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def initialize(params: dict) -> dict:
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    version = asked if asked in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    return _dump(types.InitializeResult(
        protocol_version=version, capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False)),
        server_info=SERVER_INFO, instructions=INSTRUCTIONS))


def list_tools(configuration) -> dict:
    """The approved, unchanged, allowed tools, each with the description and schema an administrator pinned."""
    offered = [types.Tool(name=pin.name, description=pin.approved_description or None,
                          input_schema=pin.approved_schema or {"type": "object"})
               for _server, pin in tools.offered(configuration)]
    return _dump(types.ListToolsResult(tools=offered))


def call_tool(configuration, consumer, params) -> dict:
    try:
        request = types.CallToolRequestParams.model_validate(params)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()) or "params"
        raise RpcError(types.INVALID_PARAMS, f"Invalid params: {fields}.")
    return calls.call(configuration, consumer=consumer, name=request.name, arguments=request.arguments or {})


def handle(message: dict, *, configuration, consumer) -> dict | None:
    """The response to one message; None for a notification or a client's response (answered 202)."""
    if "method" not in message or "id" not in message:
        return None
    request_id, method, params = message["id"], message["method"], message.get("params") or {}
    try:
        if method == "initialize":
            return response(request_id, initialize(params))
        if method == "ping":
            return response(request_id, {})
        if method == "tools/list":
            return response(request_id, list_tools(configuration))
        if method == "tools/call":
            return response(request_id, call_tool(configuration, consumer, params))
        raise RpcError(types.METHOD_NOT_FOUND, f"Method not found: {method}")
    except RpcError as exc:
        return error(request_id, exc.code, exc.message)
    except upstream.UpstreamError as exc:
        return error(request_id, types.INTERNAL_ERROR, str(exc))  # names the server, never a credential
