"""The dashboard's numbers (SPEC §10), read from governance events, usage rows and task statuses only.

Never from a text column: no answer, input, edited text or hint is selected here (a test captures
the SQL to prove it). Events hold policy facts (rule numbers and lines, list names and terms,
judge names and reasons), so counting them says what fires without reading what was written.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.models import GovernanceEvent, JudgeLink, Task, UsageDay
from governance.review import backlog, chart, rule_stats

WINDOWS = (7, 14, 30, 90)
DEFAULT_WINDOW = 14
TOP = 10
TOP_STATS = 20  # rules and terms as editors see them, most wrong first

# What a screening ended as, judged by the decisions its events record (one correlation id).
HINT_DECISIONS = ("reported", "not_checked", "unverified", "escalated")
SERIES = (
    ("blocked", _("blocked")),
    ("hinted", _("delivered with hints")),
    ("accepted", _("accepted in review")),
    ("rejected", _("rejected in review")),
)


@dataclass(frozen=True)
class Window:
    days: int
    first: date
    last: date

    @property
    def since(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.first, time.min))

    def dates(self) -> list[date]:
        return [self.first + timedelta(days=n) for n in range(self.days)]


def window(days: int | None, today: date | None = None) -> Window:
    days = days if days in WINDOWS else DEFAULT_WINDOW
    last = today or timezone.localdate()
    return Window(days, last - timedelta(days=days - 1), last)


def _events(win: Window):
    return GovernanceEvent.objects.filter(at__gte=win.since)


def outcomes_per_day(win: Window) -> list[tuple[date, dict[str, int]]]:
    """Per day: screenings blocked or delivered with hints (one per correlation id), and reviews."""
    per_day: dict[date, Counter] = {day: Counter() for day in win.dates()}
    screenings: dict[str, tuple[date, set[str]]] = {}
    rows = (_events(win).annotate(day=TruncDate("at")).values_list("correlation_id", "decision", "check_name", "day")
            .order_by())
    for correlation_id, decision, check, day in rows.iterator(chunk_size=2000):
        if day not in per_day:
            continue
        if check == GovernanceEvent.Check.REVIEW:
            if decision in ("accepted", "rejected"):
                per_day[day][decision] += 1
            continue
        first_day, decisions = screenings.setdefault(correlation_id, (day, set()))
        decisions.add(decision)
    for first_day, decisions in screenings.values():
        if "blocked" in decisions:
            per_day[first_day]["blocked"] += 1
        elif decisions & set(HINT_DECISIONS):
            per_day[first_day]["hinted"] += 1
    return [(day, dict(per_day[day])) for day in win.dates()]


def outcome_chart(per_day) -> chart.Chart:
    columns = [(day.isoformat(), counts) for day, counts in per_day]
    return chart.stacked_bars(columns, [(key, str(name)) for key, name in SERIES])


def _facts(win: Window, *checks: str):
    return (_events(win).filter(check_name__in=checks, decision__in=("blocked", "reported"))
            .values_list("check_name", "decision", "detail").order_by().iterator(chunk_size=2000))


def _rule_key(check: str, rule: dict) -> tuple:
    """(check, source, line number, line): a judged rule by snippet, line number and line; a pattern rule by
    identifier and statement."""
    if rule.get("identifier"):
        return check, str(rule["identifier"]), None, str(rule.get("statement", ""))
    # One name per rule everywhere (issue 29): snippet and line number, as feedback and rule stats name it.
    return check, str(rule.get("snippet", "")), rule.get("line_no") or rule.get("number"), str(rule.get("line", ""))


def top_rules(win: Window, limit: int = TOP) -> list[dict]:
    """The rules found violated most often (judged rules and pattern rules), and how often blocked."""
    counts: Counter = Counter()
    blocked: Counter = Counter()
    checks = (GovernanceEvent.Check.RULES_JUDGE, GovernanceEvent.Check.PATTERN_RULES, GovernanceEvent.Check.CITATIONS)
    for check, decision, detail in _facts(win, *checks):
        for rule in (detail or {}).get("rules") or ():
            if not isinstance(rule, dict):
                continue
            key = _rule_key(check, rule)
            counts[key] += 1
            blocked[key] += decision == "blocked"
    return [{"check": check, "source": source, "number": number, "line": line, "count": c, "blocked": blocked[key]}
            for key, c in counts.most_common(limit) for check, source, number, line in [key]]


def top_terms(win: Window, limit: int = TOP) -> list[dict]:
    """The terms that fired most often: list, term, forbidden or missing, how often blocked/reported."""
    counts: Counter = Counter()
    blocked: Counter = Counter()
    for _check, decision, detail in _facts(win, GovernanceEvent.Check.TERM_LIST):
        detail = detail or {}
        for kind, key in (("forbidden", "terms"), ("missing", "missing")):
            for term in detail.get(key) or ():
                item = (str(detail.get("list", "")), str(term), kind)
                counts[item] += 1
                blocked[item] += decision == "blocked"
    return [{"list": name, "term": term, "kind": kind, "count": c, "blocked": blocked[(name, term, kind)]}
            for (name, term, kind), c in counts.most_common(limit)]


def _usage(win: Window):
    return (UsageDay.objects.filter(day__gte=win.first, day__lte=win.last)
            .values("configuration__identifier")
            .annotate(requests=Sum("requests"), tokens=Sum("tokens"), cost=Sum("cost"), failures=Sum("failures"),
                      latency_ms=Sum("latency_ms"))
            .order_by())


def _rates(row: dict) -> dict:
    requests, failures = row.get("requests") or 0, row.get("failures") or 0
    answered = requests - failures
    return {
        "failure_rate": (failures / requests) if requests else None,
        "mean_latency_ms": round((row.get("latency_ms") or 0) / answered) if answered > 0 else None,
    }


def cost_per_configuration(win: Window) -> list[dict]:
    rows = []
    for row in _usage(win):
        rows.append({"configuration": row["configuration__identifier"], "requests": row["requests"] or 0,
                     "tokens": row["tokens"] or 0, "cost": row["cost"] or 0, "failures": row["failures"] or 0,
                     **_rates(row)})
    return sorted(rows, key=lambda r: (-r["cost"], -r["requests"], r["configuration"]))


def judges(win: Window) -> list[dict]:
    """Each judging configuration: calls, failed calls and mean latency (usage rows), and why its
    answers were not used (the judges' facts in rules_judge events: timeout, error, unusable, …)."""
    named = set(JudgeLink.objects.values_list("judge__identifier", flat=True).distinct())
    reasons: dict[str, Counter] = defaultdict(Counter)
    decided: Counter = Counter()
    rows = (_events(win).filter(check_name=GovernanceEvent.Check.RULES_JUDGE).values_list("detail", flat=True)
            .order_by().iterator(chunk_size=2000))
    for detail in rows:
        for fact in (detail or {}).get("judges") or ():
            if not isinstance(fact, dict) or not fact.get("judge"):
                continue
            judge = str(fact["judge"])
            named.add(judge)
            if fact.get("choice") == "pass":
                reasons[judge][str(fact.get("reason") or "error")] += 1
            else:
                decided[judge] += 1
    usage = {row["configuration__identifier"]: row for row in _usage(win).filter(configuration__identifier__in=named)}
    result = []
    for name in sorted(named):
        row = usage.get(name, {})
        result.append({
            "judge": name, "requests": row.get("requests") or 0, "failures": row.get("failures") or 0,
            **_rates(row), "not_used": sorted(reasons[name].items()), "decided": decided[name],
        })
    return result


def tasks_by_status() -> list[dict]:
    counts = dict(Task.objects.values_list("status").annotate(n=Count("pk")).order_by())
    return [{"status": value, "label": label, "count": counts.get(value, 0)} for value, label in Task.Status.choices]


def summary(days: int | None) -> dict:
    win = window(days)
    per_day = outcomes_per_day(win)
    return {
        "window": win,
        "windows": WINDOWS,
        "day_rows": [(day, [counts.get(key, 0) for key, _name in SERIES]) for day, counts in per_day],
        "chart": outcome_chart(per_day),
        "series": SERIES,
        "top_rules": top_rules(win),
        "top_terms": top_terms(win),
        "rule_stats": rule_stats.rule_stats(win.days, today=win.last, with_tasks=True)[:TOP_STATS],
        "judges": judges(win),
        "costs": cost_per_configuration(win),
        "tasks": tasks_by_status(),
        "backlog": backlog.backlog(win.since, win.days),
    }
