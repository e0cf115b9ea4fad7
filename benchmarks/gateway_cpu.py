"""CPU per OpenAI-gateway call, plain and as a held 40-chunk stream, through litellm's real HTTP path
(issue 19): what one call costs the process that serves it, beside what litellm alone costs for the
same call — the floor under any gateway built on it.

Run: .venv/bin/python benchmarks/gateway_cpu.py [--calls N] [--postgres URL]   (about a minute)

Real parts: Django's handler (test client) on a new PostgreSQL database, the consumer's token, a
configuration with a term list of 1,000 forbidden words (so a stream is held until screened), litellm
to the local provider server in a process of its own, answering at once with 40 words (a stream of 40
chunks). CPU is this process's (`time.process_time`: every thread, litellm's logging threads too),
total over N calls divided by N, so work a call leaves to a background thread is counted. Every
figure is printed as a ratio against its own baseline measured in the same run: bare
`litellm.completion` for the same call. Targets (issue 30): a plain gateway call <= 1.3x bare litellm,
a held 40-chunk stream <= 1.3x a plain gateway call (a held stream asks for the whole answer).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import consumer_client, provider_in_another_process, setup_django  # noqa: E402

WORDS = ("the harbour wakes before the town does gulls first then the ferry engines then the smell of coffee "
         "from the kiosk by the pier by six the fishing boats are in and the market is already loud with "
         "voices and crates").split()
ANSWER = " ".join(WORDS[:40])
MESSAGES = [{"role": "user", "content": "Write forty words about the harbour at dawn."}]
TARGET_PLAIN_RATIO, TARGET_STREAM_RATIO = 1.3, 1.3  # against bare litellm, against a plain gateway call


def cpu_per_call(work, calls: int) -> float:
    """Milliseconds of this process's CPU per call, over `calls` calls after 20 warm ones."""
    for _ in range(20):
        work()
    time.sleep(0.2)  # let the warm calls' background logging finish
    before = time.process_time()
    for _ in range(calls):
        work()
    time.sleep(0.2)  # ... and count the timed calls' own
    return (time.process_time() - before) * 1000 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per row (default 300)")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432",
                        help="PostgreSQL server for the benchmark's own database")
    args = parser.parse_args()
    assert len(WORDS) >= 40

    setup_django("gavel-gateway-cpu-", postgres=args.postgres)
    os.environ["BENCH_API_KEY"] = "bench-key"
    from governance.models import Configuration, Provider
    from judging.llm.loader import _litellm
    from termlists.models import TermList

    with provider_in_another_process({"text": ANSWER}) as base_url:
        provider = Provider.objects.create(name="local", route="openai", api_base=base_url,
                                           api_key_env="BENCH_API_KEY", trust_zone="local", timeout=10)
        configuration = Configuration.objects.create(identifier="newsletter", provider=provider, model="writer")
        terms = TermList.objects.create(name="forbidden", forbidden="\n".join(f"zarquon{i}" for i in range(1000)))
        terms.configurations.add(configuration)
        client = consumer_client([configuration])
        litellm = _litellm()

        def bare(stream: bool):
            def call():
                kwargs = {"model": "openai/writer", "messages": MESSAGES, "api_key": "bench-key",
                          "api_base": base_url, "timeout": 10.0, "max_retries": 0, "num_retries": 0}
                if stream:
                    text = "".join(chunk.choices[0].delta.content or "" for chunk in
                                   litellm.completion(stream=True, stream_options={"include_usage": True}, **kwargs)
                                   if chunk.choices)
                else:
                    text = litellm.completion(**kwargs).choices[0].message.content
                assert text.split() == ANSWER.split(), text
            return call

        def gateway(stream: bool):
            body = json.dumps({"model": "newsletter", "messages": MESSAGES, "stream": stream})

            def call():
                response = client.post("/openai/v1/chat/completions", body, content_type="application/json")
                assert response.status_code == 200, response.content
                if stream:
                    lines = b"".join(response.streaming_content).decode().split("\n\n")
                    deltas = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
                    text = "".join(d["choices"][0]["delta"].get("content") or "" for d in deltas if d["choices"])
                    assert response.headers.get("X-Gavel-Outcome", "allowed") == "allowed"
                else:
                    text = response.json()["choices"][0]["message"]["content"]
                assert text.split() == ANSWER.split(), text
            return call

        # Interleave the rows twice and keep each row's lower figure: a noisy neighbour only adds.
        rows = {}
        for _round in range(2):
            for name, work in [("litellm alone, plain", bare(False)), ("gateway, plain", gateway(False)),
                               ("litellm alone, 40-chunk stream", bare(True)),
                               ("gateway, held 40-chunk stream", gateway(True))]:
                value = cpu_per_call(work, args.calls)
                rows[name] = min(rows.get(name, value), value)

    report(rows, args.calls)


def report(rows: dict, calls: int) -> None:
    """Each row beside its baseline from the same run (bare litellm for the same call)."""
    plain, stream = rows["gateway, plain"], rows["gateway, held 40-chunk stream"]
    floor_plain, floor_stream = rows["litellm alone, plain"], rows["litellm alone, 40-chunk stream"]
    load = os.getloadavg()
    print(f"\nCPU per call through litellm to a local provider (instant, 40 words), {calls} calls per row, "
          f"best of two interleaved rounds; 1,000 forbidden words on the configuration; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'call':<34}{'CPU ms':>9}{'x bare litellm plain':>22}{'x bare litellm, same call':>27}")
    for name, value in rows.items():
        same = floor_stream if "stream" in name else floor_plain
        print(f"{name:<34}{value:>9.2f}{value / floor_plain:>21.2f}x{value / same:>26.2f}x")
    print(f"\nGavel's own share (gateway minus litellm alone): plain {plain - floor_plain:.2f} ms, "
          f"held stream {stream - floor_plain:.2f} ms over a plain litellm call")
    print(f"target plain call <= {TARGET_PLAIN_RATIO}x bare litellm: "
          f"{'met' if plain <= TARGET_PLAIN_RATIO * floor_plain else 'NOT met'} ({plain / floor_plain:.2f}x)")
    print(f"target held stream <= {TARGET_STREAM_RATIO}x a plain gateway call: "
          f"{'met' if stream <= TARGET_STREAM_RATIO * plain else 'NOT met'} ({stream / plain:.2f}x; "
          f"a streamed litellm call is {floor_stream / floor_plain:.2f}x a plain one)")


if __name__ == "__main__":
    main()
