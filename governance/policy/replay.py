"""The replay of a dry run (SPEC §12.3): the retained answers of recent tasks screened under the current
policy and under a draft, and what would change. The report names tasks by id and holds no text.

Only texts still retained are read: a purged task (or one past GAVEL_TASK_RETENTION_DAYS) is not
replayed. Deterministic checks only, unless judges are asked for, and then within a cost cap.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from governance.errors import GavelError
from governance.models import Task
from governance.policy.testing import finding_key, findings_of, resolve_once
from governance.screening.pipeline import CallFacts, Output, run_pipeline
from judging import cache as verdict_cache

DEFAULT_REPLAY = 500
ACTOR = "policy replay"
# Over the API a replay reports counts only, and a rule or term only once it changed this many texts
# (issue 25: per-term task ids of `a*`…`9*` recovered another consumer's answer word by word).
MIN_GROUP = 5


@dataclass
class ReplayText:
    """One retained answer, read once and screened twice (current, draft)."""

    task_id: str
    text: str
    configuration: str
    also: list
    kind: str
    site: str
    language: str


@dataclass
class Screened:
    outcome: str | None  # None: could not be screened (its configuration is gone)
    keys: frozenset
    # Where the screening's hints sit in the text, by check: (start, end) offsets, never the passage.
    spans: dict = field(default_factory=dict)


def retained_texts(limit: int = DEFAULT_REPLAY, *, now=None, hours: float | None = None) -> list[ReplayText]:
    """The answers of the newest `limit` tasks whose texts are still retained, newest first; with `hours`,
    only tasks created within the last `hours` hours (still at most `limit`)."""
    if limit <= 0:
        return []
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.GAVEL_TASK_RETENTION_DAYS)
    if hours is not None:
        cutoff = max(cutoff, now - timedelta(hours=hours))
    rows = (Task.objects.filter(purged_at__isnull=True, created__gte=cutoff).exclude(answer="")
            .order_by("-created").values_list("id", "answer", "configuration", "also", "kind", "site", "language")
            [:limit])
    return [ReplayText(str(pk), answer, configuration, list(also or []), kind, site, language)
            for pk, answer, configuration, also, kind, site, language in rows]


def screen_all(texts: list[ReplayText], *, judges: bool = False,
               cost_cap: float = 0.0) -> tuple[dict[str, Screened], verdict_cache.Tally]:
    """Screen each text under the policy as it stands now; judges only when asked, until the cost cap.
    Returns the results by task id and what the judges cost."""
    results: dict[str, Screened] = {}
    resolved: dict = {}
    with verdict_cache.counting() as tally:
        for item in texts:
            within_cap = judges and (cost_cap <= 0 or tally.cost < cost_cap)
            try:
                configuration, also = resolve_once(item.configuration, item.also, resolved)
            except GavelError:
                results[item.task_id] = Screened(None, frozenset())
                continue
            facts = CallFacts(configuration=configuration, also=also, kind=item.kind, site=item.site,
                              language=item.language, actor=ACTOR, judges="cached" if within_cap else "skip",
                              log_events=False, correlation_id=uuid.uuid4().hex)
            facts.policy_version = configuration.policy_version
            screening = run_pipeline(Output(text=item.text), facts)
            results[item.task_id] = Screened(screening.outcome, frozenset(finding_key(f) for f in findings_of(screening)),
                                             _spans(screening.hints))
    return results, tally


def _spans(hints: list[dict]) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for hint in hints:
        start, end = hint.get("start"), hint.get("end")
        if type(start) is int and type(end) is int and hint.get("tool_call") is None:
            spans.setdefault(str(hint.get("check")), []).append((start, end))
    return spans


@dataclass
class ReplayReport:
    replayed: int = 0
    judges: bool = False
    # change kind ("allowed→blocked", "blocked→allowed", "new_hints", "lost_hints", …) -> task ids
    changes: dict[str, list[str]] = field(default_factory=dict)
    # rule or term key -> {"new": [task ids], "lost": [task ids]}
    by_rule: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    not_screened: list[str] = field(default_factory=list)
    judge_calls: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        return {kind: len(ids) for kind, ids in self.changes.items()}

    def as_dict(self) -> dict:
        return {
            "replayed": self.replayed, "judges": self.judges, "counts": self.counts, "changes": self.changes,
            "rules": {key: {"new": len(v["new"]), "lost": len(v["lost"]), "new_tasks": v["new"],
                            "lost_tasks": v["lost"]} for key, v in sorted(self.by_rule.items())},
            "not_screened": self.not_screened, "judge_calls": self.judge_calls,
        }

    def as_counts(self, min_group: int = MIN_GROUP) -> dict:
        """The report as an administrator consumer reads it (SPEC §12.3 over the API): no task id, and a
        rule or term only when it changed at least `min_group` texts; the rows held back are counted.
        People who may open every task (superusers: admin pages, commands) read `as_dict`."""
        shown = {key: {"new": len(v["new"]), "lost": len(v["lost"])} for key, v in sorted(self.by_rule.items())
                 if len(v["new"]) + len(v["lost"]) >= min_group}
        return {
            "replayed": self.replayed, "judges": self.judges, "counts": self.counts, "rules": shown,
            "rules_withheld": len(self.by_rule) - len(shown), "min_group": min_group,
            "not_screened": len(self.not_screened), "judge_calls": self.judge_calls,
        }


def compare(before: tuple[dict[str, Screened], verdict_cache.Tally],
            after: tuple[dict[str, Screened], verdict_cache.Tally], *, judges: bool) -> ReplayReport:
    (before, tally_before), (after, tally_after) = before, after
    report = ReplayReport(replayed=len(before), judges=judges)
    report.judge_calls = {"calls": tally_before.calls + tally_after.calls,
                          "cache_hits": tally_before.hits + tally_after.hits,
                          "cost": round(tally_before.cost + tally_after.cost, 8)}
    for task_id, old in before.items():
        new = after.get(task_id)
        if new is None or old.outcome is None or new.outcome is None:
            report.not_screened.append(task_id)
            continue
        was, will = _plain(old.outcome), _plain(new.outcome)
        if was != will:
            report.changes.setdefault(f"{was}→{will}", []).append(task_id)
        elif new.keys - old.keys:
            report.changes.setdefault("new_hints", []).append(task_id)
        elif old.keys - new.keys:
            report.changes.setdefault("lost_hints", []).append(task_id)
        for key in new.keys - old.keys:
            report.by_rule.setdefault(key, {"new": [], "lost": []})["new"].append(task_id)
        for key in old.keys - new.keys:
            report.by_rule.setdefault(key, {"new": [], "lost": []})["lost"].append(task_id)
    return report


def _plain(outcome: str) -> str:
    # "allowed with hints" still reaches the reader: a change between the two allowed outcomes is a hint
    # change, and an outcome change is read as allowed → blocked or blocked → allowed.
    return "allowed" if outcome == "allowed_with_hints" else outcome
