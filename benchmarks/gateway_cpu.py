"""CPU per OpenAI-gateway call, plain and as a held 40-chunk stream, through litellm's real HTTP path
(issue 19): what one call costs the process that serves it, beside what litellm alone costs for the
same call — the floor under any gateway built on it.

Run: .venv/bin/python benchmarks/gateway_cpu.py [--calls N] [--postgres URL]   (about a minute)
     .venv/bin/python benchmarks/gateway_cpu.py --metrics-overhead [--calls N] [--rounds R]
       (the separate section `metrics_overhead` below: CPU per plain call with metrics on against the
       same calls with the instruments turned into no-ops, tracing off in both; and the evidence insert;
       on the script's own stack, both sides alike)

Real parts: Django's handler (test client) on a new PostgreSQL database, the consumer's token, a
configuration with a term list of 1,000 forbidden words (so a stream is held until screened), litellm
to the local provider server in a process of its own, answering at once with 40 words (a stream of 40
chunks). CPU is this process's (`time.process_time`: every thread, litellm's logging threads too),
summed over each call's window (the call and a 3 ms wait in which work it left to a background thread
is done) and divided by N; the rows take turns call by call, so a drift in the machine's speed weighs
on all alike. Every figure is printed as a ratio against its own baseline measured in the same run: bare
`litellm.completion` for the same call. Targets (issue 30): a plain gateway call <= 1.3x bare litellm,
a held 40-chunk stream <= 1.3x a plain gateway call (a held stream asks for the whole answer). The row
"unlogged" is the bare call in the context Gavel calls litellm in (judging.llm.loader.unlogged: no
success-logging job for litellm's thread pool; price_unread: no pricing of an answer whose price Gavel
does not read, here a model litellm's map does not know), so Gavel's own code is the gateway minus that row.
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


SETTLE = 0.003  # seconds each timed call waits inside its own window: litellm's logging thread finishes there


def interleaved(works: dict, calls: int) -> dict:
    """Milliseconds of this process's CPU per call for each row, the rows taking turns call by call
    (the order rotating), after 20 warm calls of each: a machine whose speed drifts within the run
    (seen here by 1.5x within minutes) weighs on every row alike. Each call's window is the call and a
    short wait (no CPU of its own) in which work a call leaves to a background thread is done and
    counted (this process's CPU covers every thread)."""
    names = list(works)
    for name in names:
        for _ in range(20):
            works[name]()
    time.sleep(0.2)  # let the warm calls' background logging finish
    spent = dict.fromkeys(names, 0.0)
    for index in range(calls):
        for name in names[index % len(names):] + names[:index % len(names)]:
            before = time.process_time()
            works[name]()
            time.sleep(SETTLE)
            spent[name] += time.process_time() - before
    return {name: spent[name] * 1000 / calls for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per row (default 300)")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432",
                        help="PostgreSQL server for the benchmark's own database")
    parser.add_argument("--metrics-overhead", action="store_true",
                        help="measure what /metrics' counting costs a plain call instead (metrics_overhead)")
    parser.add_argument("--rounds", type=int, default=6, help="--metrics-overhead: rounds (default 6)")
    args = parser.parse_args()
    if args.metrics_overhead:
        metrics_overhead(args)
        return
    assert len(WORDS) >= 40

    setup_django("gavel-gateway-cpu-", postgres=args.postgres)
    os.environ["BENCH_API_KEY"] = "bench-key"
    from governance.models import Configuration, Provider
    from judging.llm import ModelTarget
    from judging.llm.loader import _litellm, price_unread, unlogged
    from termlists.models import TermList

    with provider_in_another_process({"text": ANSWER}) as base_url:
        provider = Provider.objects.create(name="local", route="openai", api_base=base_url,
                                           api_key_env="BENCH_API_KEY", trust_zone="local", timeout=10)
        configuration = Configuration.objects.create(identifier="newsletter", provider=provider, model="writer")
        terms = TermList.objects.create(name="forbidden", forbidden="\n".join(f"zarquon{i}" for i in range(1000)))
        terms.configurations.add(configuration)
        client = consumer_client([configuration])
        litellm = _litellm()

        def bare(stream: bool, quiet: bool = False):
            def call():
                if quiet:  # as Gavel asks: its target is the configuration's, without prices
                    with unlogged(), price_unread(ModelTarget(route="openai", model="writer", api_base=base_url)):
                        return plain_call()
                return plain_call()

            def plain_call():
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

        works = {"litellm alone, plain": bare(False), "gateway, plain": gateway(False),
                 "litellm alone, plain, unlogged": bare(False, quiet=True),
                 "litellm alone, 40-chunk stream": bare(True),
                 "gateway, held 40-chunk stream": gateway(True)}
        rows = interleaved(works, args.calls)

    report(rows, args.calls)


def report(rows: dict, calls: int) -> None:
    """Each row beside its baseline from the same run (bare litellm for the same call)."""
    plain, stream = rows["gateway, plain"], rows["gateway, held 40-chunk stream"]
    floor_plain, floor_stream = rows["litellm alone, plain"], rows["litellm alone, 40-chunk stream"]
    load = os.getloadavg()
    print(f"\nCPU per call through litellm to a local provider (instant, 40 words), {calls} calls per row, "
          f"the rows taking turns call by call; "
          f"1,000 forbidden words on the configuration; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'call':<34}{'CPU ms':>9}{'x bare litellm plain':>22}{'x bare litellm, same call':>27}")
    for name, value in rows.items():
        same = floor_stream if "stream" in name else floor_plain
        print(f"{name:<34}{value:>9.2f}{value / floor_plain:>21.2f}x{value / same:>26.2f}x")
    quiet = rows["litellm alone, plain, unlogged"]
    print(f"\nGavel's own share (gateway minus litellm alone): plain {plain - floor_plain:.2f} ms, "
          f"held stream {stream - floor_plain:.2f} ms over a plain litellm call; Gavel asks litellm as the "
          f"'unlogged' row does (no success-logging job, no unread price), so its own code costs {plain - quiet:.2f} ms a plain call")
    print(f"target plain call <= {TARGET_PLAIN_RATIO}x bare litellm: "
          f"{'met' if plain <= TARGET_PLAIN_RATIO * floor_plain else 'NOT met'} ({plain / floor_plain:.2f}x)")
    print(f"target held stream <= {TARGET_STREAM_RATIO}x a plain gateway call: "
          f"{'met' if stream <= TARGET_STREAM_RATIO * plain else 'NOT met'} ({stream / plain:.2f}x; "
          f"a streamed litellm call is {floor_stream / floor_plain:.2f}x a plain one)")


# --- metrics on against metrics off (issue 28): a section of its own -----------------------------------
METRICS_TARGET = 1.05  # CPU per call with metrics on, tracing off, at most 5 % above the same without


def metrics_overhead(args) -> None:
    """CPU per plain gateway call with metrics on (prometheus_client in multiprocess mode, as under
    gunicorn) and tracing off, against the same calls with every instrument of governance.evidence.metrics
    turned into a no-op, in one process. The two alternate call by call (on, off, off, on, …), so a
    neighbour's load falls on both alike; each call's CPU is this process's (every thread) while it ran.
    Then the instruments and the evidence record's INSERT alone, per call."""
    import os
    import statistics
    import tempfile

    # Multiprocess mode is chosen when prometheus_client is imported: before Django starts.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="gavel-bench-metrics-")
    os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    setup_django("gavel-metrics-cpu-", postgres=args.postgres)
    os.environ["BENCH_API_KEY"] = "bench-key"
    from governance.evidence import metrics, records, tracing
    from governance.models import Configuration, EvidenceRecord, Provider
    from termlists.models import TermList

    assert metrics.MULTIPROCESS and tracing.state["tracer"] is None
    instruments_of = ("run_finished", "screening_took", "provider_answered", "provider_failed", "evidence_written",
                      "reviewed")
    originals = {name: getattr(metrics, name) for name in instruments_of}

    def count_nothing(*args, **kwargs):
        return None

    def metrics_on(on: bool) -> None:
        for name in instruments_of:
            setattr(metrics, name, originals[name] if on else count_nothing)

    with provider_in_another_process({"text": ANSWER}) as base_url:
        provider = Provider.objects.create(name="local", route="openai", api_base=base_url,
                                           api_key_env="BENCH_API_KEY", trust_zone="local", timeout=10)
        configuration = Configuration.objects.create(identifier="newsletter", provider=provider, model="writer")
        terms = TermList.objects.create(name="forbidden", forbidden="\n".join(f"zarquon{i}" for i in range(1000)))
        terms.configurations.add(configuration)
        client = consumer_client([configuration])
        body = json.dumps({"model": "newsletter", "messages": MESSAGES})

        def call():
            response = client.post("/openai/v1/chat/completions", body, content_type="application/json")
            assert response.status_code == 200, response.content

        for _ in range(20):
            call()
        counted_before = _runs_counted(metrics)
        rounds = []
        try:
            for _round in range(args.rounds):
                spent = {True: 0.0, False: 0.0}
                for index in range(args.calls):
                    for on in ((True, False) if index % 2 == 0 else (False, True)):
                        metrics_on(on)
                        before = time.process_time()
                        call()
                        spent[on] += time.process_time() - before
                rounds.append((spent[True] * 1000 / args.calls, spent[False] * 1000 / args.calls))
        finally:
            metrics_on(True)
        counted = _runs_counted(metrics) - counted_before
        # The "on" calls did count, the "off" calls did not.
        assert counted == args.rounds * args.calls, counted

        # The evidence record alone: the INSERT each delivered text costs, metrics counted as usual.
        answer = {"id": "bench", "policy_version": 1, "outcome": "allowed", "text": ANSWER,
                  "checks": [{"check": name, "result": "passed"} for name in ("secret_redaction", "term_list",
                                                                            "pattern_rules", "rules_judge")],
                  "verification": {"status": "not_applicable"}}
        checks = answer["checks"]

        def instruments():  # what one plain call counts, without the call
            metrics.provider_answered("local", 3.0)
            metrics.screening_took(0.002)
            metrics.run_finished("openai_chat", "newsletter", "allowed", checks)
            metrics.evidence_written("openai_chat")

        instruments_ms = cpu_per_call(instruments, 20 * args.calls)
        before_rows = EvidenceRecord.objects.count()
        insert_ms = cpu_per_call(lambda: records.record(answer, surface="openai_chat", configuration="newsletter"),
                                 args.calls)
        assert EvidenceRecord.objects.count() - before_rows == args.calls + 20

    print(f"\nCPU per plain gateway call, metrics on (multiprocess mode) against metrics off, tracing off in "
          f"both; alternating call by call, {args.calls} calls of each per round, {args.rounds} rounds")
    print(f"{'round':<7}{'on ms':>9}{'off ms':>9}{'on/off':>9}")
    for index, (on_ms, off_ms) in enumerate(rounds, 1):
        print(f"{index:<7}{on_ms:>9.2f}{off_ms:>9.2f}{on_ms / off_ms:>9.3f}")
    total = sum(on for on, _ in rounds) / sum(off for _, off in rounds)
    median = statistics.median(on / off for on, off in rounds)
    print(f"ratio on/off: all calls together {total:.3f} (median of the rounds' ratios {median:.3f})")
    print(f"target on/off <= {METRICS_TARGET:.2f}: {'met' if total <= METRICS_TARGET else 'NOT met'}")
    off_ms = statistics.median(off for _, off in rounds)
    print(f"the instruments alone, as one plain call counts: {instruments_ms * 1000:.1f} µs CPU per call "
          f"(+{100 * instruments_ms / off_ms:.2f} % of a call's {off_ms:.2f} ms without metrics)")
    print(f"evidence record INSERT alone: {insert_ms:.3f} ms CPU per call ({args.calls} records)")


def _runs_counted(metrics) -> float:
    return sum(sample.value for family in metrics.RUNS.collect() for sample in family.samples
               if sample.name == "gavel_runs_total")


if __name__ == "__main__":
    main()
