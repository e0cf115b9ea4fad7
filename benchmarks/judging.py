"""Benchmark of the rule-set judge (issue 4, SPEC §6.3): what the judge prompt costs in tokens beyond
the rule lines and the text, and what time Gavel adds per judged screening.

Run: .venv/bin/python benchmarks/judging.py [--requests N] [--postgres postgres://postgres@127.0.0.1:5432]
     (prints three tables; under a minute; issue 10's target, at most 15 ms added, is on PostgreSQL)

1. Tokens, counted with litellm's token_counter (judging.llm.token_count) for gpt-4o-mini: the whole
   request's messages minus the rule lines alone minus the text alone (each counted as the content of one
   message, less an empty message's framing). What remains is the prompt Gavel adds: instructions,
   markers, numbering, message framing. The JSON schema sent as `response_format` is counted beside it
   (as its JSON text), since a provider may bill it as input too. Target: prompt overhead under 250.
2. Time: POST /api/v1/screenings in-process (Django test client, a fresh SQLite or PostgreSQL database), the
   provider server (tests/provider_server.py, in another process) answering the judge instantly with an allow.
   The same 60-word text
   and configuration with rule_mode `off` (no judge), `report` and `block`, interleaved run by run; medians.
3. Where the added time goes. Inside each judged screening the judge's provider call
   (judging.llm.complete: litellm and the HTTP round trip to the server) and the completion service's
   usage/budget writes are timed as they happen. "Gavel's own work" is, per judged request, its time
   less its own provider call less the median `off` screening; the table gives the median of those
   per-request values (each call is subtracted from the request it was part of, never a median of calls
   timed apart from a median of screenings).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import (  # noqa: E402
    consumer_client,
    provider_in_another_process,
    screening_timer,
    setup_django,
)

MODEL = "gpt-4o-mini"
TARGET = 250
ADDED_TARGET_MS = 15
RULES = [
    "Address the reader formally.",
    "Never promise a delivery date.",
    "Do not call a product free.",
    "Name prices with their currency.",
    "Do not compare the product with a named competitor.",
    "Use the product names exactly as written in the catalogue.",
    "Do not give medical or legal advice.",
    "Keep sentences under 25 words.",
]
WORDS = (
    "Our new travel kettle boils half a litre in three minutes and folds flat for the suitcase. The lid locks "
    "with one click, the cable stores in the base, and the handle stays cool. It comes in three colours and "
    "costs 39 euros in every shop of the chain and online. Descale it once a month with a little vinegar, rinse "
    "twice, and it will serve you for years on trains, in hotels and at campsites across the continent."
).split()


def text_of(words: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(words))


# --- 1. tokens ---
def token_rows() -> list[dict]:
    from judging import llm, prompts

    def content_tokens(content: str) -> int:
        # One message's content, without the framing every message carries (counted in the overhead).
        return llm.token_count(MODEL, [{"role": "user", "content": content}]) - llm.token_count(
            MODEL, [{"role": "user", "content": ""}])

    schema_tokens = content_tokens(json.dumps(prompts.RESPONSE_FORMAT))
    rows = []
    for rule_count, words in ((1, 40), (3, 60), (8, 300), (8, 1500)):
        rules = list(enumerate(RULES[:rule_count], start=1))
        text = text_of(words)
        prompt = prompts.judge_prompt(rules, text)
        total = llm.token_count(MODEL, prompt.messages)
        rule_tokens = content_tokens("\n".join(line for _, line in rules))
        text_tokens = content_tokens(text)
        overhead = total - rule_tokens - text_tokens
        rows.append({"rules": rule_count, "words": words, "total": total, "rule_tokens": rule_tokens,
                     "text_tokens": text_tokens, "overhead": overhead, "schema": schema_tokens})
    return rows


# --- 2. time ---
def screening_rows(requests: int, postgres: str | None) -> dict:
    os.environ["PROVIDER_BENCH_API_KEY"] = "bench-key"
    setup_django("gavel-bench-judging-", postgres=postgres)
    from django.db.models import Sum

    from governance.models import Configuration, Provider, UsageDay, set_links
    from judging import llm
    from snippets.models import Snippet

    # Every judge call: an instant allow, from a server in another process.
    with provider_in_another_process({"text": '{"violations": []}'}) as base_url:
        provider = Provider.objects.create(name="bench", route="openai", api_base=base_url,
                                           api_key_env="PROVIDER_BENCH_API_KEY", trust_zone="local", timeout=5)
        judge = Configuration.objects.create(identifier="judge", provider=provider, model="judge-model")
        Snippet.objects.create(identifier="house-style", name="House style", tags=["style"],
                               body="\n".join(RULES))
        modes = ("off", "report", "block")
        for mode in modes:
            set_links(Configuration.objects.create(identifier=mode, provider=provider, model="m", rule_mode=mode,
                                                   rule_tags=["style"]), "rule_judges", [judge])
        post = screening_timer(consumer_client(Configuration.objects.filter(identifier__in=modes)),
                               text_of(60))

        # Timed inside the pipeline, as it happens: the judge's provider call, and the completion
        # service's usage/budget writes (counted before the call, tokens and cost after it).
        from governance.runs import completions

        spent = {"call": 0.0, "writes": 0.0}

        def timed(function, part):
            def wrapper(*args, **kwargs):
                start = time.perf_counter()
                try:
                    return function(*args, **kwargs)
                finally:
                    spent[part] += time.perf_counter() - start
            return wrapper

        llm.complete = timed(llm.complete, "call")
        completions.claim_request = timed(completions.claim_request, "writes")
        completions._count_usage = timed(completions._count_usage, "writes")

        def measured(mode: str) -> tuple[float, float, float]:
            spent.update(call=0.0, writes=0.0)
            elapsed = post(mode)
            return elapsed, spent["call"], spent["writes"]

        for _ in range(20):  # warm up: litellm's import, connections, caches
            for mode in modes:
                post(mode)
        before = UsageDay.objects.filter(configuration=judge).aggregate(n=Sum("requests"))["n"] or 0
        timings: dict[str, list[tuple[float, float, float]]] = {mode: [] for mode in modes}
        for index in range(requests):
            order = modes[index % 3:] + modes[:index % 3]
            for mode in order:
                timings[mode].append(measured(mode))
        judge_calls = (UsageDay.objects.filter(configuration=judge).aggregate(n=Sum("requests"))["n"] or 0) - before
    result: dict = {"requests": requests, "judge_calls": judge_calls}
    for mode, rows in timings.items():
        totals = [total * 1000 for total, _call, _writes in rows]
        result[mode] = statistics.median(totals)
        result[f"{mode}_p90"] = statistics.quantiles(totals, n=10)[-1]
    off = result["off"]
    for mode in ("report", "block"):
        rows = [(total * 1000, call * 1000, writes * 1000) for total, call, writes in timings[mode]]
        result[f"{mode}_call"] = statistics.median(call for _total, call, _writes in rows)
        result[f"{mode}_own"] = statistics.median(total - call - off for total, call, _writes in rows)
        result[f"{mode}_writes"] = statistics.median(writes for _total, _call, writes in rows)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="screenings per mode (default 200)")
    parser.add_argument("--postgres", metavar="SERVER_URL", default=None,
                        help="time on a new database of this PostgreSQL server (e.g. postgres://postgres@127.0.0.1:5432)"
                             " instead of SQLite; issue 10's target is measured so")
    args = parser.parse_args()
    os.environ.setdefault("GAVEL_TESTING", "1")

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print()
    print(f"1. judge prompt tokens ({MODEL}, litellm token_counter)")
    header = (f"{'rules':>5} | {'text words':>10} | {'request':>7} | {'rule lines':>10} | {'text':>5} | "
              f"{'prompt overhead':>15} | {'+ schema':>8} | {'overhead / target':>17}")
    print(header)
    print("-" * len(header))
    for row in token_rows():
        print(f"{row['rules']:>5} | {row['words']:>10,} | {row['total']:>7,} | {row['rule_tokens']:>10} | "
              f"{row['text_tokens']:>5,} | {row['overhead']:>15} | {row['schema']:>8} | "
              f"{row['overhead'] / TARGET:>16.0%} ")
    print(f"(prompt overhead = request - rule lines - text; target < {TARGET}; the schema goes as response_format)")

    result = screening_rows(args.requests, args.postgres)
    off = result["off"]
    print()
    print(f"2. POST /api/v1/screenings on {'PostgreSQL' if args.postgres else 'SQLite'}, 60 words, {len(RULES)} rules, "
          f"judge answering instantly; "
          f"median of {result['requests']} per row ({result['judge_calls']} judge calls seen)")
    header = f"{'mode':<22} | {'median ms':>9} | {'p90 ms':>7} | {'vs off':>8} | {'added ms':>8}"
    print(header)
    print("-" * len(header))
    for mode, label in (("off", "off (no judge)"), ("report", "report (judged)"), ("block", "block (judged)")):
        print(f"{label:<22} | {result[mode]:>9.2f} | {result[mode + '_p90']:>7.2f} | {result[mode] / off:>7.2f}x | "
              f"{result[mode] - off:>8.2f}")
    added = max(result["report"], result["block"]) - off
    print(f"target (issue 10): a judged screening adds at most {ADDED_TARGET_MS} ms over off, on PostgreSQL -- "
          f"{'met' if added <= ADDED_TARGET_MS else 'NOT met'} ({added:.2f} ms"
          f"{'' if args.postgres else '; this run is on SQLite, rerun with --postgres'})")
    print()
    print("3. where the added time goes, per judged request (medians)")
    own_work = "Gavel's own work"
    header = (f"{'mode':<16} | {'judged ms':>9} | {'off ms':>6} | {'added ms':>8} | {'provider call':>13} | "
              f"{own_work:>16} | {'of which usage writes':>21}")
    print(header)
    print("-" * len(header))
    for mode, label in (("report", "report (judged)"), ("block", "block (judged)")):
        print(f"{label:<16} | {result[mode]:>9.2f} | {off:>6.2f} | {result[mode] - off:>8.2f} | "
              f"{result[mode + '_call']:>13.2f} | {result[mode + '_own']:>16.2f} | {result[mode + '_writes']:>21.2f}")
    print("(provider call: judging.llm.complete timed inside the pipeline, litellm and HTTP to the local server;")
    print(" Gavel's own work: per request, judged time - its provider call - the off median; usage writes: the")
    print(" completion service's request count before the call and tokens/cost after it, part of Gavel's own work)")


if __name__ == "__main__":
    main()
