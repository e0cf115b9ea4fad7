"""The verdict cache (SPEC §12.4): a judge's verdict reused when the same judge judges the same text under
the same rule set. Keyed by a hash of the judge's configuration, the rule set and the text; never the text.

Policy tests and replays use it always; a live screening only when its configuration's
`judge_cache_seconds` allows. The guardrail decides when; this module keeps and counts, and, for a draft
(`deferring`), holds back the judges a pass would ask until the pass is over.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from judging import decisions, model_calls, prompts
from judging.judgement import ALLOW, DENY, PASS, Finding, JudgeDecision
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
        deferral = _deferral.get()
        answered = deferral.take(key) if deferral is not None else None
        if answered is not None:  # asked between the passes of a draft: a call of this pass
            if tally is not None:
                tally.calls += 1
                tally.cost += answered.cost
            return answered
        if self.read_seconds is not None:
            held = _load(key, judge.identifier, rule_set, text, self.read_seconds)
            if held is not None:
                if tally is not None:
                    tally.hits += 1
                return held
        if deferral is not None:
            return deferral.want(_Wanted(key, judge, judge_configuration, rule_set, text, context, self,
                                         *(_cap.get() or ("", 0.0)), tally.cost if tally is not None else 0.0))
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


# --- a draft's judges, asked between its passes (issue 25: never under the draft's write lock) ---
class Deferred(Exception):
    """A judge a draft's pass may not ask: the pass is given up and the judge asked before the next one."""


@dataclass
class _Wanted:
    key: str
    judge: object
    configuration: object
    rule_set: RuleSet
    text: str
    context: object
    cache: VerdictCache
    group: str  # the cost cap it counts against (`capped`), "" for none
    cap: float
    spent: float  # what the group's judges had cost in the pass when this one was wanted


class Deferral:
    """The judges of a run under a draft (governance/policy/drafts.py `under_draft`).

    A draft is imported inside a transaction that is rolled back; on SQLite that transaction holds the
    database's one write lock, so a judge asked inside it would keep every other writer waiting for as
    long as the judge takes. Inside a pass no judge is asked: the first one a screening needs stops that
    screening (`Deferred`), the pass ends and rolls back, the wanted judges are asked (`ask`) with no
    transaction open, and the next pass takes their answers in the order it needs them. The last pass
    needs none it does not have; its result is the run's, counted as one run without passes would be.
    """

    def __init__(self):
        self.answers: dict[str, list[JudgeDecision]] = {}
        self.wanted: list[_Wanted] = []
        self.used: dict[str, int] = {}
        self.final = False  # the last pass allowed: a judge it still wants is reported as not asked

    def start_pass(self, *, final: bool = False) -> None:
        self.wanted, self.used, self.final = [], {}, final

    def take(self, key: str) -> JudgeDecision | None:
        """The answer for this pass's next use of `key` (the same judge, rules and text), if asked."""
        number = self.used.get(key, 0)
        self.used[key] = number + 1
        answers = self.answers.get(key, ())
        return answers[number] if number < len(answers) else None

    def want(self, item: _Wanted) -> JudgeDecision:
        if self.final:
            logger.warning("judge %s not asked: the draft needed more passes than allowed", item.judge.identifier)
            return JudgeDecision(PASS, item.judge.identifier, reason="error")
        hold = getattr(model_calls.installed(), "hold_chain", None)
        if hold is not None:
            hold(item.configuration)  # what the call reads of the draft, read while the draft stands
        self.wanted.append(item)
        raise Deferred(item.judge.identifier)

    def ask(self) -> int:
        """Ask the judges the last pass wanted, in its order; call with no transaction open. Returns how
        many were asked. A verdict kept meanwhile (the same question wanted twice) is not asked again,
        and a capped group stops before the call that would pass its cap (at the mean cost of its calls so far),
        as a run without passes would."""
        spent: dict[str, float] = {}
        calls: dict[str, int] = {}
        asked = 0
        for item in self.wanted:
            if item.cache.read_seconds is not None and _load(item.key, item.judge.identifier, item.rule_set,
                                                              item.text, item.cache.read_seconds) is not None:
                continue
            # A capped group stops before the call that would pass its cap: one more costs what one has so far.
            group_spent, group_calls = spent.get(item.group, 0.0), calls.get(item.group, 0)
            next_call = next_cost(group_spent, group_calls)
            if item.cap > 0 and (item.spent + group_spent >= item.cap
                                 or item.spent + group_spent + next_call > item.cap):
                continue
            decision = item.judge.decide(item.rule_set, item.text, item.context)
            self.answers.setdefault(item.key, []).append(decision)
            spent[item.group] = group_spent + decision.cost
            calls[item.group] = group_calls + 1
            if item.cache.write_seconds and decision.choice in (ALLOW, DENY):
                _store(item.key, decision, item.cache.write_seconds)
            asked += 1
        self.wanted = []
        return asked


def next_cost(spent: float, done: int) -> float:
    """What one more (a judge call, a replay's text) is expected to cost: the mean of those `done` so far,
    nothing before the first. A capped run stops before the one that would pass its cap."""
    return spent / done if done else 0.0


_deferral: ContextVar[Deferral | None] = ContextVar("judge_deferral", default=None)
_cap: ContextVar[tuple[str, float] | None] = ContextVar("judge_cost_cap", default=None)


@contextmanager
def deferring():
    """Hold back every judge asked inside (see `Deferral`); yields the Deferral."""
    deferral = Deferral()
    token = _deferral.set(deferral)
    try:
        yield deferral
    finally:
        _deferral.reset(token)


@contextmanager
def capped(group: str, cost: float):
    """Judges wanted inside count against `cost` (0: no cap) when a deferral asks them (a replay's cap)."""
    token = _cap.set((group, cost))
    try:
        yield
    finally:
        _cap.reset(token)
