"""Benchmark of the MCP gateway (issue 40, SPEC §14): the time Gavel adds to a `tools/call` over a direct call
to the same upstream MCP server.

Run: .venv/bin/python benchmarks/mcp.py [--requests N]   (one table; under a minute)

The upstream is the tests' MCP server (tests/protocols/mcp_upstream.py: the SDK's MCPServer, Streamable
HTTP under uvicorn) in a child process, so its threads never compete with the timed request for the
interpreter lock. A direct call is `tools/call` in an open session from this process (the gateway's own
upstream client, so both paths speak to the upstream the same way); a call through Gavel is POST
/mcp/<configuration> on Django's test client in this process (a fresh in-memory SQLite database): token,
grant, the pinned tool, the arguments screened by a term list (which matches nothing), the upstream call,
the result masked and screened, the governance event, the evidence record, the metrics. No judge. The two
are interleaved call by call; the time added is the per-pair difference (through Gavel minus the direct
call it was paired with), reported at p50 and p99, and the ratio of the medians; beside it the same
difference of this thread's CPU time, which other processes on a shared machine cannot inflate. Target:
at most 5 ms added at p50. The HTTP hop from the agent to Gavel is not in it (in-process, as the other benchmarks).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import consumer_client, setup_django  # noqa: E402

TARGET_MS = 5.0
KEY = "bench-upstream-key"
ARGUMENTS = {"title": "Harbour at dawn", "body": "The ferry leaves at six; the market opens at seven."}


def upstream_in_another_process():
    code = ("import sys; from tests.protocols.mcp_upstream import Upstream; "
            f"u = Upstream({KEY!r}).start(); print(u.url, flush=True); sys.stdin.read(); u.stop()")
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    return child, child.stdout.readline().strip()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()
    os.environ["CMS_MCP_TOKEN"] = KEY
    setup_django("gavel-bench-mcp-", in_memory=True)
    child, url = upstream_in_another_process()
    try:
        run(url, args.requests)
    finally:
        child.stdin.close()
        child.wait(timeout=10)


def run(url: str, requests: int) -> None:
    from governance.models import Configuration, McpServer, Provider
    from governance.protocols.mcp import tools, upstream
    from termlists.models import TermList

    provider = Provider.objects.create(name="bench", route="openai", trust_zone="local")
    configuration = Configuration.objects.create(identifier="newsroom", provider=provider, model="m",
                                                 mcp_servers=["cms"], read_tools=["search_pages"])
    TermList.objects.create(name="Bench", forbidden="Zzyzxq").configurations.set([configuration])
    server = McpServer.objects.create(name="cms", url=url, trust_zone="local",
                                      headers_env={"X-Upstream-Key": "CMS_MCP_TOKEN"})
    for tool in tools.refresh(server):
        tools.approve(tool, actor="bench")
    client = consumer_client([configuration])
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "publish_page", "arguments": ARGUMENTS}})

    def through_gavel() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.thread_time()
        response = client.post("/mcp/newsroom", body, content_type="application/json",
                               HTTP_ACCEPT="application/json, text/event-stream")
        elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
        answer = response.json()
        assert response.status_code == 200 and not answer["result"].get("isError"), answer
        return elapsed, cpu

    def direct() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.thread_time()
        result = upstream.call_tool(server, "publish_page", ARGUMENTS)
        elapsed, cpu = time.perf_counter() - start, time.thread_time() - cpu
        assert not result.is_error
        return elapsed, cpu

    for _ in range(50):  # warm both paths (sessions, connections, caches)
        through_gavel()
        direct()
    gavel, plain, added, added_cpu = [], [], [], []
    for index in range(requests):
        if index % 2:
            d, g = direct(), through_gavel()
        else:
            g, d = through_gavel(), direct()
        gavel.append(g[0])
        plain.append(d[0])
        added.append(g[0] - d[0])
        added_cpu.append(g[1] - d[1])
    ms = 1000
    print(f"MCP tools/call, {requests} calls each, interleaved (upstream: the SDK's MCPServer in a child process)")
    print(f"{'':28}{'p50 ms':>10}{'p99 ms':>10}")
    print(f"{'direct to the upstream':28}{statistics.median(plain) * ms:>10.2f}{percentile(plain, .99) * ms:>10.2f}")
    print(f"{'through Gavel':28}{statistics.median(gavel) * ms:>10.2f}{percentile(gavel, .99) * ms:>10.2f}")
    print(f"{'added by Gavel (per pair)':28}{statistics.median(added) * ms:>10.2f}{percentile(added, .99) * ms:>10.2f}")
    print(f"{'added, this thread CPU':28}{statistics.median(added_cpu) * ms:>10.2f}"
          f"{percentile(added_cpu, .99) * ms:>10.2f}")
    ratio = statistics.median(gavel) / statistics.median(plain)
    verdict = "within" if statistics.median(added) * ms <= TARGET_MS else "OVER"
    print(f"ratio through Gavel / direct (p50): {ratio:.2f}x; added at p50 {statistics.median(added) * ms:.2f} ms, "
          f"{verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
