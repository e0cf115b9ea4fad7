"""A small upstream MCP server for the gateway's tests and benchmark, written with the SDK's own server
(`MCPServer`, Streamable HTTP under uvicorn) on 127.0.0.1 in a thread.

Four tools: two reads (`search_pages`, `get_page`), one write (`publish_page`), one needing approval
(`send_newsletter`). Every call is logged in `calls`, so a test can say the upstream never saw one.
A header must carry the key (`X-Upstream-Key`), as a real server's credentials would; `get_page`
answers with a text holding an API key, to be masked on the way back.
"""
from __future__ import annotations

import threading
import time

import uvicorn
from mcp.server.mcpserver import MCPServer

from tests.provider_server import unused_port

KEY_HEADER = "x-upstream-key"
LEAKED_KEY = "sk-proj-Zq9xT4mW2vK8rL1nB6cJ3hF5dS7aG0pY"
DESCRIPTIONS = {
    "search_pages": "Search the newsroom's pages by words; returns titles.",
    "get_page": "Read one page by its id.",
    "publish_page": "Publish a page on the public site.",
    "send_newsletter": "Send the newsletter to every subscriber.",
}


class Upstream:
    def __init__(self, key: str, *, json_response: bool = False):
        self.key = key
        self.calls: list[tuple[str, dict]] = []
        self.refused = 0
        self.server = MCPServer("newsroom-tools")
        for name, fn in self._tools().items():
            self.server.add_tool(fn, name=name, description=DESCRIPTIONS[name])
        self.port = unused_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._app = self.server.streamable_http_app(json_response=json_response)
        self._uvicorn = None
        self._thread = None

    def _tools(self) -> dict:
        def search_pages(query: str) -> str:
            self.calls.append(("search_pages", {"query": query}))
            return f"3 pages match {query}"

        def get_page(page_id: str) -> str:
            self.calls.append(("get_page", {"page_id": page_id}))
            return f"Page {page_id}: deploy with OPENAI key {LEAKED_KEY} and nothing else."

        def publish_page(title: str, body: str) -> str:
            self.calls.append(("publish_page", {"title": title, "body": body}))
            return f"published {title}"

        def send_newsletter(subject: str) -> str:
            self.calls.append(("send_newsletter", {"subject": subject}))
            return f"sent {subject}"

        return {"search_pages": search_pages, "get_page": get_page, "publish_page": publish_page,
                "send_newsletter": send_newsletter}

    def change_description(self, name: str, description: str) -> None:
        """A "rug pull": the same tool, described differently from now on."""
        fn = self._tools()[name]
        self.server.remove_tool(name)
        self.server.add_tool(fn, name=name, description=description)

    async def _guarded(self, scope, receive, send):
        """The server's own credential check: without the key, 401 and nothing runs."""
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(KEY_HEADER.encode()) != self.key.encode():
                self.refused += 1
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await self._app(scope, receive, send)

    def start(self) -> "Upstream":
        config = uvicorn.Config(self._guarded, host="127.0.0.1", port=self.port, log_level="warning", interface="asgi3",
                                lifespan="on")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._uvicorn.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the upstream MCP server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
            self._thread.join(timeout=10)
