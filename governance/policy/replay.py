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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from governance.errors import GavelError
from governance.models import Task
from governance.policy.testing import finding_key, findings_of, resolve_once
from governance.screening.pipeline import CallFacts, Output, run_pipeline
from judging import cache as verdict_cache

DEFAULT_REPLAY = 500
# A window in hours replays at most this many texts (newest first), and counts at most this many blocked tasks.
MAX_WINDOW_TASKS = 10_000
ACTOR = "policy replay"
# What a replay's outcome changes are called (`compare`); a report for readers who may not read the texts
# names every one, so that a change's mere presence says nothing.
CHANGE_KINDS = ("allowed→blocked", "blocked→allowed", "new_hints", "lost_hints")
# Translated where it is shown (`at_least`): it stands in sentences as well as in counts.
FEWER_THAN = gettext_noop("fewer than %(n)d")


def min_texts() -> int:
    """GAVEL_REPORT_MIN_TEXTS: the fewest texts a report answers about to someone who may not read them
    (SPEC §12.5; issue 25: per-term task ids recovered another consumer's answer word by word; issue 41:
    a count over `replay=1` recovered a 4-digit code)."""
    return settings.GAVEL_REPORT_MIN_TEXTS


def narrowest_window(replay: int) -> int:
    """A window of the last `replay` tasks is never narrower than GAVEL_REPORT_MIN_TEXTS (0 stays none)."""
    return max(replay, min_texts()) if replay > 0 else 0


def at_least(count: int, n: int):
    """`count`, or "fewer than N" when it is below N (zero too: none is also an answer about few texts)."""
    return count if count >= n else _(FEWER_THAN) % {"n": n}


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
    judged: bool = False  # screened with its judges (asked for, and within the cost cap)
    capped: bool = False  # judges were asked for, and the cost cap stopped them before this text


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
    judged = 0
    with verdict_cache.counting() as tally, verdict_cache.capped("replay", cost_cap):
        for item in texts:
            within_cap = judges and (cost_cap <= 0 or tally.cost + verdict_cache.next_cost(tally.cost, judged)
                                     <= cost_cap)
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
                                             _spans(screening.hints), judged=within_cap,
                                             capped=judges and not within_cap)
            judged += within_cap
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

    def as_counts(self, n: int | None = None) -> dict:
        """The report for readers who may not read the texts (an administrator consumer over the API, SPEC
        §12.3, §12.5): no task id, and nothing about fewer than `n` (GAVEL_REPORT_MIN_TEXTS) texts — over a
        window of fewer texts it answers nothing (`withheld`); every count below `n`, zero included, reads
        "fewer than n"; every change kind is named; a rule or term shows only once it moved on `n` texts
        either way, and how many were held back is not said (that number was an oracle too). People who may
        read every text (editors: admin pages, commands) read `as_dict`."""
        n = min_texts() if n is None else n
        if self.replayed < n:
            return {"replayed": at_least(self.replayed, n), "judges": self.judges, "withheld": True, "min_texts": n}
        kinds = [*CHANGE_KINDS, *sorted(k for k in self.changes if k not in CHANGE_KINDS)]
        shown = {key: {"new": at_least(len(v["new"]), n), "lost": at_least(len(v["lost"]), n)}
                 for key, v in sorted(self.by_rule.items()) if max(len(v["new"]), len(v["lost"])) >= n}
        return {
            "replayed": self.replayed, "judges": self.judges, "withheld": False, "min_texts": n,
            "counts": {kind: at_least(len(self.changes.get(kind, ())), n) for kind in kinds}, "rules": shown,
            "not_screened": at_least(len(self.not_screened), n), "judge_calls": self.judge_calls,
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
