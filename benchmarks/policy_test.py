"""Benchmark of policy releases (issue 18, SPEC §12): a policy test of 1,000 examples against a
10,000-term list and 47 pattern rules with judges skipped, and the replay of 500 retained task texts
under the current policy and a draft (what a dry run adds).

Run: .venv/bin/python benchmarks/policy_test.py [--postgres postgres://postgres@127.0.0.1:5432]
(prints a table; about a minute). Targets: at least 500 examples per second, a 500-task replay under 5 s.

Everything goes through the real code: the policy is imported from a document, examples are screened by
`run_pipeline` (term lists, pattern rules, citations; judges skipped), the replay reads the tasks' answers
and screens each twice, the second time inside the rolled-back draft. The first pass over the examples
compiles the 10,000-term matcher and the patterns once for the version; it is timed separately ("cold").
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.inprocess import setup_django  # noqa: E402

SEED = 20261202
TERMS, RULES, EXAMPLES, TASKS = 10_000, 47, 1_000, 500
TARGET_EXAMPLES_PER_S, TARGET_REPLAY_S = 500, 5.0
SYLLABLES = ("ka un de rab att pre ver trag an ge bot lie fer ung kos ten frei haus markt stra mül ler bau "
             "wer sen ko no mi tal ber gen sta lan ri vo pa ne to mo sa li re be al ex or um in ter hof feld "
             "wald berg see bach dorf burg stein brun kir schu tür tisch stuhl bett lam buch heft blatt").split()
FILLER = ("The harbour office opens on Monday and the mayor welcomes forty guests to the new building, where "
          "twelve people from the region will work on planning, logistics and the ferry timetable for the coming "
          "year, with a small exhibition about rivers and weather in the entrance hall").split()


def word(rng: random.Random, syllables=(2, 3, 4)) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.choice(syllables)))


def policy_document(rng: random.Random) -> tuple[dict, list[str], list[str]]:
    terms = sorted({word(rng) for _ in range(TERMS * 2)})[:TERMS]
    rng.shuffle(terms)
    markers = [f"zq{index:02d}{word(rng, (2,))}" for index in range(RULES)]
    document = {
        "providers": [{"name": "bench", "route": "openai", "api_base": "http://127.0.0.1:9/v1", "trust_zone": "local"}],
        "configurations": [{"identifier": "newsroom", "provider": "bench", "model": "bench-model",
                            "rules": {"mode": "report", "tags": ["bench"]}}],
        "term_lists": [{"name": "Bench words", "configurations": ["newsroom"], "forbidden": terms, "mode": "block"}],
        "pattern_rules": [{
            "identifier": f"bench.rule-{index:02d}", "statement": f"Never write {marker}.", "tags": ["bench"],
            "violation_pattern": rf"(?i)\b{marker}\b", "wrong_samples": [f"We write {marker} here."],
            "correct_samples": ["A plain sentence."]} for index, marker in enumerate(markers)],
    }
    return document, terms, markers


def text_with(rng: random.Random, insert: str | None = None) -> str:
    words = [rng.choice(FILLER) for _ in range(60)]
    if insert:
        words.insert(rng.randrange(len(words)), insert)
    return " ".join(words) + "."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="a PostgreSQL server URL (default: a new SQLite file)")
    args = parser.parse_args()
    setup_django("gavel-bench-policy-", postgres=args.postgres)

    from django.utils import timezone

    from governance import policy
    from governance.models import PolicyExample, Task
    from governance.policy import release
    from governance.policy import replay as replaying
    from governance.policy.drafts import draft_policy

    rng = random.Random(SEED)
    document, terms, markers = policy_document(rng)
    started = time.perf_counter()
    policy.import_policy(document)
    import_s = time.perf_counter() - started

    examples = []
    for index in range(EXAMPLES):
        kind = index % 10
        if kind == 0:  # a forbidden term: blocked
            examples.append(PolicyExample(name=f"ex-{index:04d}", configuration="newsroom", text=text_with(rng, rng.choice(terms)),
                                          expect_outcome="blocked"))
        elif kind == 1:  # a pattern rule: delivered with a hint
            marker = rng.randrange(RULES)
            examples.append(PolicyExample(
                name=f"ex-{index:04d}", configuration="newsroom", text=text_with(rng, markers[marker]),
                expect_outcome="allowed_with_hints",
                expect_findings=[{"check": "pattern_rules", "rule": f"bench.rule-{marker:02d}"}]))
        else:
            examples.append(PolicyExample(name=f"ex-{index:04d}", configuration="newsroom", text=text_with(rng),
                                          expect_outcome="allowed"))
    PolicyExample.objects.bulk_create(examples)

    started = time.perf_counter()
    cold = release.test_policy(judges="skip")
    cold_s = time.perf_counter() - started
    warm_runs = []
    for _ in range(3):  # the best of three: the machine is shared, the slowest runs measure the others
        started = time.perf_counter()
        warm = release.test_policy(judges="skip")
        warm_runs.append(time.perf_counter() - started)
    warm_s = min(warm_runs)
    assert warm.passed == EXAMPLES, (warm.passed, warm.failed)

    now = timezone.now()
    new_term = "zzbenchneu"
    hit = set(rng.sample(range(TASKS), 37))
    Task.objects.bulk_create([Task(configuration="newsroom", status="ready", outcome="allowed",
                                   answer=text_with(rng, new_term if i in hit else None),
                                   created=now - timezone.timedelta(seconds=i)) for i in range(TASKS)])
    draft = policy.export_policy()
    draft["term_lists"][0]["forbidden"].append(new_term)
    draft.pop("examples")  # the draft's other sections as exported; examples stay as stored

    started = time.perf_counter()
    texts = replaying.retained_texts(TASKS)
    before = replaying.screen_all(texts)
    with draft_policy(draft, prune=False):
        after = replaying.screen_all(texts)
    replay_report = replaying.compare(before, after, judges=False)
    replay_s = time.perf_counter() - started
    assert replay_report.counts == {"allowed→blocked": len(hit)}, replay_report.counts

    rate = EXAMPLES / warm_s
    print(f"policy: {TERMS:,} terms in one list, {RULES} pattern rules (import {import_s:.1f} s)")
    print(f"{'measure':<44}{'time':>10}{'rate':>16}{'target':>16}{'ratio':>8}")
    print(f"{'test run, 1,000 examples, cold (compiles)':<44}{cold_s:>9.2f}s{EXAMPLES / cold_s:>12.0f} ex/s{'':>16}{'':>8}")
    print(f"{'test run, 1,000 examples, judges skipped *':<44}{warm_s:>9.2f}s{rate:>12.0f} ex/s"
          f"{'>= ' + str(TARGET_EXAMPLES_PER_S) + ' ex/s':>16}{rate / TARGET_EXAMPLES_PER_S:>7.1f}x")
    print(f"{'replay, 500 tasks, current + draft':<44}{replay_s:>9.2f}s{TASKS / replay_s:>11.0f} task/s"
          f"{'< ' + str(TARGET_REPLAY_S) + ' s':>16}{TARGET_REPLAY_S / replay_s:>7.1f}x")
    print(f"* best of three runs: {', '.join(f'{t:.2f}' for t in warm_runs)} s")
    print(f"replay found {len(hit)} allowed→blocked of {TASKS} (as planted); every example passed.")
    print("The machine is shared with other agents' test runs: times are upper bounds of this code's own.")


if __name__ == "__main__":
    main()
