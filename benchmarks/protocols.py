"""The time Gavel adds per call in each protocol it speaks, beside Chat Completions (issue 26): one
row per protocol (Chat Completions, Responses, Anthropic Messages), plain and as a held stream, in-process
with a provider that answers instantly, so a call's whole time is the time Gavel adds; the ratio is that
time over Chat Completions' (wall and this thread's CPU).

Used by benchmarks/gateway.py (which prints it after its own tables). A protocol joins with one entry
of PROTOCOLS: its path and the body of the same call. Target: each adds at most 1.2× what Chat
Completions adds.
"""
from __future__ import annotations

import statistics

TARGET_RATIO = 1.2


def _chat(model, messages, stream):
    return "/openai/v1/chat/completions", {"model": model, "messages": messages, "stream": stream}


def _responses(model, messages, stream):
    system = [m["content"] for m in messages if m["role"] == "system"]
    items = [{"role": m["role"], "content": [{"type": "input_text", "text": m["content"]}]}
             for m in messages if m["role"] != "system"]
    return "/openai/v1/responses", {"model": model, "instructions": "\n".join(system) or None, "input": items,
                                    "stream": stream}


def _messages(model, messages, stream):
    system = [m["content"] for m in messages if m["role"] == "system"]
    turns = [{"role": m["role"], "content": [{"type": "text", "text": m["content"]}]}
             for m in messages if m["role"] != "system"]
    body = {"model": model, "max_tokens": 300, "messages": turns, "stream": stream}
    if system:
        body["system"] = "\n".join(system)
    return "/anthropic/v1/messages", body


# (name, body builder); the first is the baseline.
PROTOCOLS = (("chat completions", _chat), ("responses", _responses), ("anthropic messages", _messages))


def by_protocol(client, timed, model: str, messages: list, requests: int) -> list[tuple]:
    """[(protocol, call, median wall ms, median CPU ms, ratio to Chat Completions)] — requests
    interleaved round-robin (the order rotates), so a busy machine slows every protocol alike.
    A term list that matches nothing applies to the configuration, so the stream is held."""
    from governance.models import Configuration
    from termlists.models import TermList

    term_list = TermList.objects.create(name="Bench hold", forbidden="Zzyzxq")
    term_list.configurations.set([Configuration.objects.get(identifier=model)])
    rows = []
    for stream in (False, True):
        calls = [(name, *build(model, messages, stream)) for name, build in PROTOCOLS]
        for _ in range(50):
            for _name, path, body in calls:
                timed(client, path, body, stream)
        samples = {name: [] for name, *_ in calls}
        for index in range(requests):
            shift = index % len(calls)
            for name, path, body in calls[shift:] + calls[:shift]:
                samples[name].append(timed(client, path, body, stream))
        base = None
        for name, *_ in calls:
            wall = statistics.median(s[0] for s in samples[name]) * 1000
            cpu = statistics.median(s[1] for s in samples[name]) * 1000
            base = base if base is not None else (wall, cpu)
            rows.append((name, "held stream" if stream else "plain", wall, cpu, wall / base[0], cpu / base[1]))
    term_list.delete()
    return rows


def print_rows(rows: list[tuple], requests: int) -> None:
    print(f"Time Gavel adds per call by protocol, ratio to Chat Completions (provider answering instantly, "
          f"a term list holding streams), "
          f"{requests} rounds")
    print(f"{'protocol':<20}{'call':<13}{'ms':>9}{'CPU ms':>9}{'ratio':>8}{'CPU ratio':>11}   target ≤ {TARGET_RATIO}×")
    for name, call, wall, cpu, ratio, cpu_ratio in rows:
        verdict = "baseline" if name == PROTOCOLS[0][0] else ("met" if cpu_ratio <= TARGET_RATIO else "NOT met")
        print(f"{name:<20}{call:<13}{wall:>9.3f}{cpu:>9.3f}{ratio:>8.3f}{cpu_ratio:>11.3f}   {verdict}")
