"""The upstream side of the MCP gateway: a small synchronous Streamable HTTP client, one per process.

Why not the SDK's own `mcp.Client` here (docs/mcp.md, "Why a view and a small client"): it is async, and
a Django worker serving one request per thread would open an event loop, an HTTP client, the
`server/discover` probe and the `initialize` handshake on every call — four round trips before the one
that matters. This client keeps one HTTP connection pool and one session per upstream server for the
life of the process, and speaks the same messages with the SDK's own types (`mcp_types`): requests are
built from them and answers validated by them. A session the upstream forgot (HTTP 404) is opened again
once. Credentials are read from the environment at each request (`headers_env`, the provider-key
allow-list) and never leave this module: errors name the server, never a header or the URL's userinfo.
"""
from __future__ import annotations

import itertools
import json
import os
import threading

import httpx
import mcp_types as types
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

from governance.models import McpServer, headers_env_problems

CLIENT_INFO = {"name": "gavel-mcp-gateway", "version": "1"}
_ids = itertools.count(1)
_sessions: dict[tuple[int, str], dict] = {}
_lock = threading.Lock()
_http: dict = {}


class UpstreamError(Exception):
    """The upstream could not be reached or answered with something that is not MCP. The message names
    the server and what went wrong, never a credential."""


class UpstreamRefused(UpstreamError):
    """The upstream answered the request with a JSON-RPC error (code and message kept)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def _client() -> httpx.Client:
    client = _http.get("client")
    if client is None:
        client = _http["client"] = httpx.Client(follow_redirects=False, limits=httpx.Limits(max_keepalive_connections=32))
    return client


def credential_headers(server: McpServer) -> dict[str, str]:
    """The headers `headers_env` names, read now; a name the allow-list refuses is never read (fail closed)."""
    mapping = server.headers_env or {}
    if headers_env_problems(mapping):
        raise UpstreamError(f"MCP server {server.name}: its header variables are not allowed; an administrator "
                            f"fixes headers_env.")
    headers = {}
    for header, env in mapping.items():
        value = os.environ.get(env)
        if value is None:
            raise UpstreamError(f"MCP server {server.name}: the environment variable {env} is not set.")
        headers[header] = value
    return headers


def forget_sessions() -> None:
    """Drop every upstream session of this process (tests; a server restarted under the same address)."""
    with _lock:
        _sessions.clear()


def _post(server: McpServer, message: dict, session: dict | None) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               **credential_headers(server)}
    if session:
        if session.get("id"):
            headers["Mcp-Session-Id"] = session["id"]
        headers["MCP-Protocol-Version"] = session["version"]
    try:
        return _client().post(server.url, content=json.dumps(message), headers=headers, timeout=server.timeout or 30)
    except httpx.TimeoutException as exc:
        raise UpstreamError(f"MCP server {server.name} did not answer within {server.timeout} seconds.") from exc
    except httpx.HTTPError as exc:
        raise UpstreamError(f"MCP server {server.name} could not be reached ({type(exc).__name__}).") from exc


def _answer(server: McpServer, response: httpx.Response, request_id: int) -> dict:
    """The JSON-RPC response to `request_id`, from a JSON body or an SSE stream of messages."""
    if response.status_code >= 400:
        raise UpstreamError(f"MCP server {server.name} answered HTTP {response.status_code}.")
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    messages = []
    try:
        if kind == "text/event-stream":
            for line in response.text.splitlines():
                if line.startswith("data:"):
                    messages.append(json.loads(line[5:].strip()))
        else:
            body = response.json()
            messages = body if isinstance(body, list) else [body]
    except ValueError as exc:
        raise UpstreamError(f"MCP server {server.name} answered with something that is not JSON.") from exc
    for message in messages:
        if isinstance(message, dict) and message.get("id") == request_id:
            if "error" in message:
                error = types.ErrorData.model_validate(message["error"])
                raise UpstreamRefused(f"MCP server {server.name}: {error.message}", error.code)
            return message.get("result") or {}
    raise UpstreamError(f"MCP server {server.name} sent no answer to the request.")


def _open(server: McpServer) -> dict:
    """The legacy `initialize` handshake (every MCP server speaks it), then `notifications/initialized`."""
    request_id = next(_ids)
    params = types.InitializeRequestParams(protocol_version=LATEST_HANDSHAKE_VERSION,
                                           capabilities=types.ClientCapabilities(),
                                           client_info=types.Implementation(**CLIENT_INFO))
    message = {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
               "params": params.model_dump(by_alias=True, exclude_none=True, mode="json")}
    response = _post(server, message, None)
    try:
        result = types.InitializeResult.model_validate(_answer(server, response, request_id))
    except ValidationError as exc:
        raise UpstreamError(f"MCP server {server.name} answered initialize with something else.") from exc
    session = {"id": response.headers.get("mcp-session-id"), "version": result.protocol_version}
    _post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def _session(server: McpServer, *, fresh: bool = False) -> dict:
    key = (server.pk, server.url)
    with _lock:
        session = None if fresh else _sessions.get(key)
    if session is None:
        session = _open(server)
        with _lock:
            _sessions[key] = session
    return session


def request(server: McpServer, method: str, params: dict | None = None) -> dict:
    """Send one request in the server's session (opened once per process) and return its result."""
    for attempt in range(2):
        session = _session(server, fresh=attempt > 0)
        request_id = next(_ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        response = _post(server, message, session)
        if response.status_code == 404 and session.get("id") and attempt == 0:
            continue  # the upstream forgot the session (restarted): open a new one, once
        return _answer(server, response, request_id)
    raise UpstreamError(f"MCP server {server.name} refused its session.")


def list_tools(server: McpServer) -> list[types.Tool]:
    """Every tool the server lists, following its pages."""
    tools, cursor = [], None
    for _page in range(100):
        result = request(server, "tools/list", {"cursor": cursor} if cursor else None)
        try:
            page = types.ListToolsResult.model_validate(result)
        except ValidationError as exc:
            raise UpstreamError(f"MCP server {server.name} listed its tools in a shape MCP does not know.") from exc
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def call_tool(server: McpServer, name: str, arguments: dict) -> types.CallToolResult:
    result = request(server, "tools/call", {"name": name, "arguments": arguments})
    try:
        return types.CallToolResult.model_validate(result)
    except ValidationError as exc:
        raise UpstreamError(f"MCP server {server.name} answered the call in a shape MCP does not know.") from exc
