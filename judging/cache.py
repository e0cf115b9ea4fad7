"""The verdict cache (SPEC §12.4): a judge's verdict reused when the same judge judges the same text under
the same rule set. Keyed by a hash of the judge's configuration, the rule set and the text; never the text.

Policy tests and replays use it always; a live screening only when its configuration's
`judge_cache_seconds` allows. The guardrail decides when; this module only keeps and counts.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from judging import decisions, prompts
from judging.judgement import ALLOW, DENY, Finding, JudgeDecision
from judging.rulesets_pure import RuleSet

logger = logging.getLogger("gavel.judging")

# How long a verdict a policy test or replay asked for is kept (one verdict per judge, rule set and text).
REHEARSAL_SECONDS = 30 * 24 * 3600
KEY_PREFIX = "gavel:verdict:"
# What a judge is shown besides the rules and the text: a change of wording is a new judge.
_PROMPT = hashlib.sha256(json.dumps([prompts.SYSTEM_PROMPT, prompts.USER_MESSAGE, prompts.RESPONSE_FORMAT,
                                     decisions.CRITERIA], sort_keys=True).encode()).hexdigest()


@dataclass
class Tally:
    """What judging cost while it was counted: calls made, verdicts reused, the calls' cost."""

    calls: int = 0
    hits: int = 0
    cost: float = 0.0

    def as_dict(self) -> dict:
        return {"calls": self.calls, "cache_hits": self.hits, "cost": round(self.cost, 8)}


_tally: ContextVar[Tally | None] = ContextVar("judge_tally", default=None)


@contextmanager
def counting():
    """Count every judge call and cache hit inside the block (a policy test run, a replay)."""
    tally = Tally()
    token = _tally.set(tally)
    try:
        yield tally
    finally:
        _tally.reset(token)


def rule_set_version(rule_set: RuleSet) -> str:
    """A hash of what a judge is shown of the rules: one changed line is another version."""
    return hashlib.sha256(json.dumps(rule_set.key, ensure_ascii=False).encode()).hexdigest()


def key_for(judge_configuration, rule_set: RuleSet, text: str, min_confidence: float) -> str:
    provider = judge_configuration.provider
    judge = [provider.kind, provider.route, provider.api_base or "", provider.name, judge_configuration.model, _PROMPT]
    if provider.kind == "decision":
        judge.append(min_confidence)  # a decision judge's verdict depends on the threshold
    parts = json.dumps([judge, rule_set_version(rule_set), hashlib.sha256(text.encode()).hexdigest()])
    return KEY_PREFIX + hashlib.sha256(parts.encode()).hexdigest()


@dataclass(frozen=True)
class VerdictCache:
    """How a screening uses the cache: reuse verdicts at most `read_seconds` old (None: never), keep new
    ones for `write_seconds` (0: keep none)."""

    read_seconds: int | None
    write_seconds: int

    def decide(self, judge, judge_configuration, rule_set: RuleSet, text: str, context) -> JudgeDecision:
        key = key_for(judge_configuration, rule_set, text, context.min_confidence)
        tally = _tally.get()
        if self.read_seconds is not None:
            held = _load(key, judge.identifier, rule_set, text, self.read_seconds)
            if held is not None:
                if tally is not None:
                    tally.hits += 1
                return held
        decision = judge.decide(rule_set, text, context)
        if tally is not None:
            tally.calls += 1
            tally.cost += decision.cost
        if self.write_seconds and decision.choice in (ALLOW, DENY):
            _store(key, decision, self.write_seconds)
        return decision


def _store(key: str, decision: JudgeDecision, seconds: int) -> None:
    # Offsets into the judged text, never the passage: the cache holds no text (SPEC §12.4, §9).
    violations = [[f.rule.number, f.start, f.end] for f in decision.violations]
    if any(f.passage is not None and f.start is None for f in decision.violations):
        return  # a passage without offsets could not be rebuilt from the text: not kept
    value = {"choice": decision.choice, "violations": violations, "answers": [list(a) for a in decision.answers],
             "at": time.time()}
    held = _held.get()
    if held is not None:
        held[key] = (value, seconds)  # written when the block ends (holding_writes)
        return
    _write(key, value, seconds)


def _write(key: str, value: dict, seconds: int) -> None:
    try:
        _store_backend().set(key, value, timeout=seconds)
    except Exception as exc:  # a cache that is down costs a judge call, never a screening
        logger.warning("verdict cache not written: %s", exc)


_held: ContextVar[dict | None] = ContextVar("held_verdicts", default=None)


@contextmanager
def holding_writes():
    """Keep the verdicts found inside the block and write them once it has ended.

    A draft is tested inside a transaction that is always rolled back (governance/policy/drafts.py);
    the verdict cache may be a table of the same database, so a verdict written there would be rolled
    back with the draft (and on SQLite the write would be one more write under the draft's lock).
    """
    if _held.get() is not None:
        yield
        return
    held: dict = {}
    token = _held.set(held)
    try:
        yield
    finally:
        _held.reset(token)
        for key, (value, seconds) in held.items():
            _write(key, value, seconds)


def _load(key: str, judge: str, rule_set: RuleSet, text: str, max_age: int) -> JudgeDecision | None:
    held = _held.get()
    if held is not None and key in held:
        value = held[key][0]
    else:
        try:
            value = _store_backend().get(key)
        except Exception as exc:
            logger.warning("verdict cache not read: %s", exc)
            return None
    if not value or time.time() - value.get("at", 0) > max_age:
        return None
    try:
        findings = tuple(
            Finding(rule_set.rule(number), None if start is None else text[start:end], start, end)
            for number, start, end in value["violations"])
        answers = tuple((int(n), str(c), float(p)) for n, c, p in value["answers"])
    except (IndexError, KeyError, TypeError, ValueError):
        return None
    return replace(JudgeDecision(value["choice"], judge, violations=findings, answers=answers), cached=True)


def _store_backend():
    from django.core.cache import caches

    return caches["verdicts"]  # every process's (Redis or the database): governance/settings.py


def for_screening(judges: str, cache_seconds: int) -> VerdictCache | None:
    """The cache a screening uses: `judges` is the caller's choice (cached, live; empty for a live screening)."""
    if judges == "cached":
        return VerdictCache(read_seconds=REHEARSAL_SECONDS, write_seconds=REHEARSAL_SECONDS)
    if judges == "live":
        return VerdictCache(read_seconds=None, write_seconds=REHEARSAL_SECONDS)
    if cache_seconds > 0:
        return VerdictCache(read_seconds=cache_seconds, write_seconds=cache_seconds)
    return None
