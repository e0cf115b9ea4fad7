"""Benchmark of the rule-set judge (issue 4, SPEC §6.3): what the judge prompt costs in tokens beyond
the rule lines and the text, and what time Gavel adds per judged screening.

Run: .venv/bin/python benchmarks/judging.py [--requests N]   (prints two tables; under a minute)

1. Tokens, counted with litellm's token_counter (judging.llm.token_count) for gpt-4o-mini: the whole
   request's messages minus the rule lines alone minus the text alone (each counted as the content of one
   message, less an empty message's framing). What remains is the prompt Gavel adds: instructions,
   markers, numbering, message framing. The JSON schema sent as `response_format` is counted beside it
   (as its JSON text), since a provider may bill it as input too. Target: prompt overhead under 250.
2. Time: POST /api/v1/screenings in-process (Django test client, a fresh SQLite database), the provider
   server (tests/provider_server.py) answering the judge instantly with an allow. The same 60-word text
   and configuration with rule_mode `off` (no judge), `report` and `block`, interleaved run by run; medians.
   "litellm call alone" is judging.llm.complete against the same server with the same messages, to
   show how much of the overhead is the HTTP call to the judge rather than Gavel's own work.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODEL = "gpt-4o-mini"
TARGET = 250
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
def screening_rows(requests: int) -> dict:
    workdir = tempfile.mkdtemp(prefix="gavel-bench-judging-")
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir}/bench.sqlite3"
    os.environ.setdefault("GAVEL_TESTING", "1")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_SETTINGS_MODULE"] = "governance.settings"
    os.environ["GAVEL_BENCH_KEY"] = "bench-key"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from governance.models import Configuration, Consumer, Provider
    from judging import llm, prompts
    from snippets.models import Snippet
    from tests.provider_server import ProviderServer

    call_command("migrate", verbosity=0)
    server = ProviderServer().start()
    server.set_default({"text": '{"violations": []}'})  # every judge call: an instant allow
    try:
        provider = Provider.objects.create(name="bench", route="openai", api_base=server.base_url,
                                           api_key_env="GAVEL_BENCH_KEY", trust_zone="local", timeout=5)
        judge = Configuration.objects.create(identifier="judge", provider=provider, model="judge-model")
        Snippet.objects.create(identifier="house-style", name="House style", tags=["style"],
                               body="\n".join(RULES))
        modes = ("off", "report", "block")
        for mode in modes:
            Configuration.objects.create(identifier=mode, provider=provider, model="m", rule_mode=mode,
                                         rule_tags=["style"], rule_judges=[judge.identifier])
        consumer = Consumer(name="bench", throttle_rate="1000000/min")
        token = consumer.issue_token()
        consumer.save()
        consumer.configurations.set(Configuration.objects.filter(identifier__in=modes))
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        text = text_of(60)

        def post(mode: str) -> float:
            body = {"text": text, "configuration": mode}
            start = time.perf_counter()
            response = client.post("/api/v1/screenings", body, content_type="application/json")
            elapsed = time.perf_counter() - start
            assert response.status_code == 200, response.content
            assert response.json()["outcome"] == "allowed", response.json()
            return elapsed

        target = llm.ModelTarget(route="openai", model="judge-model", api_base=server.base_url, api_key="bench-key",
                                 timeout=5)
        messages = prompts.judge_prompt(list(enumerate(RULES, start=1)), text).messages

        def bare_call() -> float:
            start = time.perf_counter()
            llm.complete(target, messages, temperature=0, response_format=prompts.RESPONSE_FORMAT)
            return time.perf_counter() - start

        # The completion service counts every judge call against the judging configuration's budget
        # (two database writes). Timed apart, so the table can say how much of the overhead they are.
        from governance import completions

        accounting: list[float] = []

        def timed(function):
            def wrapper(*args, **kwargs):
                start = time.perf_counter()
                try:
                    return function(*args, **kwargs)
                finally:
                    accounting[-1] += time.perf_counter() - start
            return wrapper

        completions._count_request = timed(completions._count_request)
        completions._count_usage = timed(completions._count_usage)

        for _ in range(20):  # warm up: litellm's import, connections, caches
            for mode in modes:
                accounting.append(0.0)
                post(mode)
            bare_call()
        before = len(server.chat_requests)
        timings: dict[str, list[float]] = {mode: [] for mode in (*modes, "bare", "accounting")}
        for index in range(requests):
            order = modes[index % 3:] + modes[:index % 3]
            for mode in order:
                accounting.append(0.0)
                timings[mode].append(post(mode))
                if mode == "report":
                    timings["accounting"].append(accounting[-1])
            timings["bare"].append(bare_call())
        judge_calls = len(server.chat_requests) - before - requests  # less the bare calls
    finally:
        server.stop()
    return {"requests": requests, "judge_calls": judge_calls,
            **{mode: statistics.median(values) * 1000 for mode, values in timings.items()},
            **{f"{mode}_p90": statistics.quantiles(values, n=10)[-1] * 1000 for mode, values in timings.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="screenings per mode (default 200)")
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

    result = screening_rows(args.requests)
    off = result["off"]
    print()
    print(f"2. POST /api/v1/screenings, 60 words, {len(RULES)} rules, judge answering instantly; "
          f"median of {result['requests']} per row ({result['judge_calls']} judge calls seen)")
    header = f"{'mode':<22} | {'median ms':>9} | {'p90 ms':>7} | {'vs off':>8} | {'added ms':>8}"
    print(header)
    print("-" * len(header))
    for mode, label in (("off", "off (no judge)"), ("report", "report (judged)"), ("block", "block (judged)")):
        print(f"{label:<22} | {result[mode]:>9.2f} | {result[mode + '_p90']:>7.2f} | {result[mode] / off:>7.2f}x | "
              f"{result[mode] - off:>8.2f}")
    bare = result["bare"]
    print(f"{'litellm call alone':<22} | {bare:>9.2f} | {result['bare_p90']:>7.2f} | {'':>8} | {'':>8}")
    accounting = result["accounting"]
    print(f"{'usage writes (report)':<22} | {accounting:>9.2f} | {result['accounting_p90']:>7.2f} | {'':>8} | {'':>8}")
    own = result["report"] - off - bare - accounting
    print()
    print(f"report judged vs off: +{result['report'] - off:.2f} ms = litellm call {bare:.2f} + usage/budget writes "
          f"of the completion service {accounting:.2f} + the rest {own:.2f} (rule set, zones, prompt, verdict, "
          f"judge lookups)")


if __name__ == "__main__":
    main()
