"""Each rule's and term's numbers as editors see them (SPEC §10.2): fired, reviewed, marked wrong, marked
missed, and the share of reviewed hints marked right — the rule's precision as editors see it.

A selector like dashboard.py, and like it read from facts only: governance events (list names, terms,
rule lines and identifiers) and feedback rows. Never a text column of a task: a test captures the SQL.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime, time, timedelta

from django.utils import timezone

from governance.models import GovernanceEvent, HintFeedback

MAX_DAYS = 365
TASK_LINKS = 5  # reviewed tasks linked per rule on the dashboard

FIRED_CHECKS = ("term_list", "pattern_rules", "rules_judge", "citations", "field")


def since(days: int, today=None):
    first = (today or timezone.localdate()) - timedelta(days=days - 1)
    return timezone.make_aware(datetime.combine(first, time.min))


def _fired_keys(check: str, detail: dict) -> list[tuple[tuple, str]]:
    """(key, rule line or statement) of every finding one event records."""
    detail = detail if isinstance(detail, dict) else {}
    if check == "term_list":
        name = str(detail.get("list") or "")
        return [((check, name, str(term), "", ""), "") for term in detail.get("terms") or ()]
    if check == "field":
        return [((check, "", "", "", ""), "")]
    keys = []
    for rule in detail.get("rules") or ():
        if not isinstance(rule, dict):
            continue
        if check == "rules_judge":
            line = rule.get("line_no") or rule.get("number")
            keys.append(((check, "", "", str(rule.get("snippet") or ""), str(line or "")), str(rule.get("line") or "")))
        elif rule.get("identifier"):
            keys.append(((check, "", "", "", str(rule["identifier"])), str(rule.get("statement") or "")))
    return keys


def rule_stats(days: int, *, today=None, with_tasks: bool = False) -> list[dict]:
    """One row per rule or term that fired or got feedback in the last `days` days, most wrong first."""
    start = since(days, today)
    rows: dict[tuple, dict] = {}

    def row(key: tuple) -> dict:
        if key not in rows:
            check, list_name, term, snippet, rule = key
            rows[key] = {"check": check, "list": list_name, "term": term, "snippet": snippet, "rule": rule,
                         "line": "", "fired": 0, "blocked": 0, "reviewed": 0, "right": 0, "wrong": 0, "missed": 0,
                         "tasks": []}
        return rows[key]

    events = (GovernanceEvent.objects.filter(at__gte=start, check_name__in=FIRED_CHECKS,
                                             decision__in=("blocked", "reported"))
              .values_list("check_name", "decision", "detail").order_by().iterator(chunk_size=2000))
    for check, decision, detail in events:
        for key, line in _fired_keys(check, detail):
            entry = row(key)
            entry["fired"] += 1
            entry["blocked"] += decision == "blocked"
            entry["line"] = entry["line"] or line
    feedback = (HintFeedback.objects.filter(at__gte=start)
                .values_list("check_name", "list_name", "term", "snippet", "rule", "verdict", "task_id",
                             "task__purged_at")
                .order_by("-at"))
    for check, list_name, term, snippet, rule, verdict, task_id, purged_at in feedback.iterator(chunk_size=2000):
        entry = row((check, list_name, term, snippet, rule))
        entry[verdict] += 1
        if verdict in ("right", "wrong"):
            entry["reviewed"] += 1
        # Link the reviewed tasks whose texts are still kept (a purged task has nothing to show).
        if with_tasks and purged_at is None and len(entry["tasks"]) < TASK_LINKS and str(task_id) not in entry["tasks"]:
            entry["tasks"].append(str(task_id))
    result = []
    for entry in rows.values():
        entry["precision"] = round(entry["right"] / entry["reviewed"], 4) if entry["reviewed"] else None
        if not with_tasks:
            del entry["tasks"]
        result.append(entry)
    result.sort(key=lambda e: (-e["wrong"], -e["missed"], -e["fired"], e["check"], e["list"], e["term"],
                               e["snippet"], e["rule"]))
    return result
