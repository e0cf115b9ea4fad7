"""Benchmark of the OpenAI-compatible gateway (issue 12, SPEC §11.5): the time POST
/openai/v1/chat/completions adds over POST /api/v1/completions for the same call.

Run: .venv/bin/python benchmarks/gateway.py [--requests N]   (prints three tables; a few minutes)

The third table (benchmarks/protocols.py) is the time Gavel adds per call in each protocol, Responses
and Anthropic Messages beside Chat Completions, plain and as a held stream, with its ratio to Chat
Completions'.

Both endpoints run in-process (Django test client, a fresh in-memory SQLite database) on the same configuration,
messages and answer, interleaved request by request (which goes first alternates). The provider answers
instantly: judging.llm.complete / stream / whole_answer are replaced by functions that return the same
reply at once, so what is timed is Gavel alone — parsing, authorisation, budget and usage writes, the
screening, rendering — and the difference is the gateway's translation. The overhead is the median of the
per-pair differences (each gateway request minus the completions request it was paired with), not a
difference of two medians; beside it the same median of this thread's CPU time, which other processes on a
shared machine cannot inflate. Target: under 1 ms.

On a busy shared machine the end-to-end difference is noise around a small number; the second table times
the gateway's own steps in a loop — reading the OpenAI request beyond the completions serializer both
endpoints run, and writing the answer as a chat.completion or a chunk stream — which is what it adds.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import consumer_client, setup_django  # noqa: E402
from benchmarks.protocols import by_protocol, print_rows  # noqa: E402

TARGET_MS = 1.0
MESSAGES = [{"role": "system", "content": "You write for the harbour newsletter."},
            {"role": "user", "content": "Write two sentences about the harbour at dawn."}]
ANSWER = ("The harbour wakes before the town does: gulls first, then the ferry engines, then the smell of "
          "coffee from the kiosk by the pier. By six the fishing boats are in, and the market is already loud.")


def instant_provider():
    """Replace the one door to models with replies that cost nothing (same reply for both endpoints)."""
    from judging import llm

    def reply():
        return llm.ModelReply(text=ANSWER, tool_calls=[], usage={"prompt_tokens": 30, "completion_tokens": 45,
                                                                 "total_tokens": 75},
                              cost=0.0, model="bench-model", raw_finish_reason="stop")

    class Handle:
        def __init__(self):
            self.reply = None

        def __iter__(self):
            yield from ANSWER.split(" ")
            self.reply = reply()

    llm.complete = lambda target, messages, **options: reply()
    llm.stream = lambda target, messages, **options: Handle()
    # A held stream asks for the whole answer (governance/runs/completions.py: open_stream).
    llm.whole_answer = lambda target, messages, **options: llm.WholeAnswer(reply())


def timed(client, path: str, body: dict, stream: bool) -> tuple[float, float]:
    """(wall seconds, this thread's CPU seconds) of one request, its stream read to the end."""
    wall, cpu = time.perf_counter(), time.thread_time()
    response = client.post(path, json.dumps(body), content_type="application/json")
    if stream:
        b"".join(response.streaming_content)
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    assert response.status_code == 200, response.content
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000, help="pairs of requests per row (default 1000)")
    args = parser.parse_args()

    setup_django("gavel-gateway-bench-", in_memory=True)
    instant_provider()
    from governance.models import Configuration, Provider

    provider = Provider.objects.create(name="instant", kind="chat", route="openai", api_base="http://127.0.0.1:9")
    configuration = Configuration.objects.create(identifier="newsletter", provider=provider, model="bench-model")
    client = consumer_client([configuration])

    rows = []
    for stream in (False, True):
        native = ("/api/v1/completions", {"configuration": "newsletter", "messages": MESSAGES, "stream": stream})
        gateway = ("/openai/v1/chat/completions", {"model": "newsletter", "messages": MESSAGES, "stream": stream})
        for _ in range(50):  # warm both paths (imports, caches, first queries)
            timed(client, *native, stream)
            timed(client, *gateway, stream)
        pairs = []
        for index in range(args.requests):
            if index % 2:
                g = timed(client, *gateway, stream)
                n = timed(client, *native, stream)
            else:
                n = timed(client, *native, stream)
                g = timed(client, *gateway, stream)
            pairs.append((n, g))
        ms = lambda values: statistics.median(values) * 1000  # noqa: E731
        rows.append(("streamed" if stream else "plain",
                     ms([n[0] for n, _ in pairs]), ms([g[0] for _, g in pairs]), ms([g[0] - n[0] for n, g in pairs]),
                     ms([g[1] - n[1] for n, g in pairs])))

    translation = translation_alone(args.requests)
    print(f"OpenAI gateway overhead, provider answering instantly, {args.requests} interleaved pairs per row")
    print(f"{'call':<10}{'completions ms':>16}{'gateway ms':>12}{'overhead ms':>13}{'(CPU ms)':>10}{'ratio':>8}"
          f"   target < {TARGET_MS} ms")
    for name, native_ms, gateway_ms, overhead_ms, cpu_ms in rows:
        verdict = "met" if overhead_ms < TARGET_MS else "NOT met"
        print(f"{name:<10}{native_ms:>16.3f}{gateway_ms:>12.3f}{overhead_ms:>13.3f}{cpu_ms:>10.3f}"
              f"{gateway_ms / native_ms:>8.3f}   {verdict}")
    print()
    print("The translation alone (what the gateway runs that /api/v1/completions does not), median per call:")
    for name, value_ms in translation:
        print(f"  {name:<58}{value_ms:>8.3f} ms   {'met' if value_ms < TARGET_MS else 'NOT met'}")
    print()
    print_rows(by_protocol(client, timed, "newsletter", MESSAGES, args.requests), args.requests)


def translation_alone(requests: int) -> list[tuple[str, float]]:
    """Time the gateway's own steps in a loop: reading the OpenAI request (less the completions
    serializer both endpoints run) and writing the answer, plain and as a chunk stream."""
    from governance.api.serializers import CompletionRequestSerializer
    from governance.protocols.openai_chat.serializers import parse_chat_request
    from governance.runs.completions import sse
    from governance.protocols.openai_chat.translate import chat_completion, chunk_stream

    body = {"model": "newsletter", "messages": MESSAGES, "temperature": 0.7, "max_tokens": 300, "user": "u-1",
            "gavel": {"site": "harbour"}}
    answer = {"id": "0" * 32, "policy_version": 3, "outcome": "allowed", "text": ANSWER, "tool_calls": [], "hints": [],
              "block": None, "verification": {"status": "not_applicable", "checks": []},
              "checks": [{"check": name, "result": "passed"} for name in
                         ("secret_redaction", "term_list", "pattern_rules", "citations", "rules_judge")],
              "completion": {"provider": "instant", "model": "bench-model", "cost": 0.0,
                             "usage": {"prompt_tokens": 30, "completion_tokens": 45, "total_tokens": 75}}}
    done = {key: value for key, value in answer.items() if key != "text"}
    steps = [("delta", {"text": word + " "}) for word in ANSWER.split(" ")] + [("done", done)]

    def median_ms(work) -> float:
        times = []
        for _ in range(requests):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    parse = median_ms(lambda: parse_chat_request(body))
    native = median_ms(lambda: CompletionRequestSerializer(data={
        "configuration": "newsletter", "messages": MESSAGES, "site": "harbour"}).is_valid())
    return [
        (f"read the request ({parse:.3f} ms less the {native:.3f} ms both run)", parse - native),
        ("write a chat.completion", median_ms(lambda: json.dumps(chat_completion(answer, model="n", created=1)))),
        (f"write a chunk stream ({len(steps) - 1} deltas) instead of Gavel's SSE",
         median_ms(lambda: list(chunk_stream(steps, correlation_id="0", model="n", created=1)))
         - median_ms(lambda: [sse(name, data) for name, data in steps])),
    ]


if __name__ == "__main__":
    main()
