"""The dashboard (SPEC §10): numbers from governance events, usage rows and task statuses — never a text.

Also the usage rows' failure count and latency that the judges' table reads, recorded by the
completion service for every model call (judges included).
"""
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from governance.models import Configuration, GovernanceEvent, Task, UsageDay, set_links
from governance.review import dashboard
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    blocked_task, desk_policy, editor, field_task, hinted_task, outsider, queued_task, reviewer,
)
from tests.governance.test_admin import superuser  # noqa: F401  (fixture)

# Every column of a task that holds text someone wrote or a model generated.
TEXT_COLUMNS = ("answer", "messages", "edited_text", "hints", "refusal", "field", "failure", "completion",
                "verification", "callback_error")


def event(decision, check, detail, *, correlation, days_ago=0, configuration="newsroom-desk"):
    row = GovernanceEvent.objects.create(correlation_id=correlation, decision=decision, check_name=check,
                                         configuration=configuration, detail=detail, mode="report")
    if days_ago:
        GovernanceEvent.objects.filter(pk=row.pk).update(at=timezone.now() - timedelta(days=days_ago))
    return row


RULE = {"number": 2, "line": "Never promise delivery dates.", "snippet": "house-style", "line_no": 3}


@pytest.fixture
def history(desk_policy, hinted_task, blocked_task, field_task, queued_task):
    desk, legal = desk_policy
    judge = Configuration.objects.create(identifier="desk-judge", provider=desk.provider, model="judge")
    set_links(desk, "rule_judges", [judge])
    # Today: one screening blocked by a term (two events, one screening), one with a judged rule,
    # one whose judge timed out, and a review.
    event("blocked", "term_list", {"list": "Competitors", "terms": ["Acme"], "missing": []}, correlation="s1")
    event("redacted", "secret_redaction", {"kinds": {"aws": 1}, "count": 1}, correlation="s1")
    event("reported", "rules_judge", {"choice": "deny", "judge": "desk-judge", "rules": [RULE],
                                      "snippets": ["house-style"],
                                      "judges": [{"judge": "desk-judge", "choice": "deny", "rules": [2]}]},
          correlation="s2")
    event("not_checked", "rules_judge", {"choice": "pass", "reason": "timeout",
                                         "judges": [{"judge": "desk-judge", "choice": "pass", "reason": "timeout"}]},
          correlation="s3")
    event("accepted", "review", {"task": "t", "kind": "queued_task", "edited": False}, correlation="s2")
    event("reported", "pattern_rules", {"rules": [{"identifier": "odoo.onchange-is-not-validation",
                                                    "statement": "An onchange is not validation.",
                                                    "severity": "normal"}]}, correlation="s2")
    # Three days ago: two reported terms in one screening, and one blocked rule.
    event("reported", "term_list", {"list": "Hype words", "terms": ["revolutionary", "unmatched"], "missing": []},
          correlation="s4", days_ago=3)
    event("blocked", "rules_judge", {"choice": "deny", "judge": "desk-judge", "rules": [RULE],
                                     "judges": [{"judge": "desk-judge", "choice": "deny", "rules": [2]}]},
          correlation="s5", days_ago=3)
    # Long ago: outside every window but the widest.
    event("blocked", "term_list", {"list": "Competitors", "terms": ["Globex"], "missing": []}, correlation="s6",
          days_ago=60)
    today = timezone.localdate()
    UsageDay.objects.create(configuration=desk, day=today, requests=10, tokens=12000, cost=Decimal("0.25"),
                            latency_ms=10 * 800)
    UsageDay.objects.create(configuration=judge, day=today, requests=8, tokens=4000, cost=Decimal("0.02"),
                            failures=2, latency_ms=6 * 1500)
    UsageDay.objects.create(configuration=judge, day=today - timedelta(days=40), requests=100, failures=100)
    return desk, judge


def test_outcomes_per_day_count_each_screening_once(history):
    win = dashboard.window(14)
    per_day = dict(dashboard.outcomes_per_day(win))
    today = timezone.localdate()
    assert per_day[today] == {"blocked": 1, "hinted": 2, "accepted": 1}
    assert per_day[today - timedelta(days=3)] == {"hinted": 1, "blocked": 1}
    assert sum(sum(c.values()) for c in per_day.values()) == 6  # the event 60 days ago is outside
    assert sum(sum(c.values()) for _, c in dashboard.outcomes_per_day(dashboard.window(90))) == 7


def test_top_rules_and_terms(history):
    win = dashboard.window(14)
    assert dashboard.top_rules(win) == [
        # A rule is named by its snippet and line number everywhere, as the rule stats name it (issue 29).
        {"check": "rules_judge", "source": "house-style", "number": RULE["line_no"], "line": RULE["line"], "count": 2,
         "blocked": 1},
        {"check": "pattern_rules", "source": "odoo.onchange-is-not-validation", "number": None,
         "line": "An onchange is not validation.", "count": 1, "blocked": 0},
    ]
    terms = {(row["list"], row["term"]): (row["count"], row["blocked"]) for row in dashboard.top_terms(win)}
    assert terms == {("Competitors", "Acme"): (1, 1), ("Hype words", "revolutionary"): (1, 0),
                     ("Hype words", "unmatched"): (1, 0)}


def test_judge_failure_rate_and_latency(history):
    [judge] = dashboard.judges(dashboard.window(14))
    assert judge["judge"] == "desk-judge"
    assert (judge["requests"], judge["failures"]) == (8, 2)
    assert judge["failure_rate"] == pytest.approx(0.25)
    assert judge["mean_latency_ms"] == 1500  # the six calls that answered
    assert judge["not_used"] == [("timeout", 1)]


def test_cost_per_configuration_and_tasks_by_status(history):
    costs = {row["configuration"]: row for row in dashboard.cost_per_configuration(dashboard.window(14))}
    assert costs["newsroom-desk"]["cost"] == Decimal("0.25") and costs["newsroom-desk"]["mean_latency_ms"] == 800
    assert costs["desk-judge"]["requests"] == 8
    statuses = {row["status"]: row["count"] for row in dashboard.tasks_by_status()}
    assert statuses == {"queued": 1, "running": 0, "ready": 2, "blocked": 1, "failed": 0, "cancelled": 0,
                        "accepted": 0, "rejected": 0}


def test_the_dashboard_page_draws_the_chart_and_the_tables(editor, history):
    response = editor.get("/review/dashboard/")
    assert response.status_code == 200
    html = response.content.decode()
    svg = re.search(r'<svg class="gavel-chart".*?</svg>', html, re.S).group(0)
    bars = re.findall(r'<rect class="bar series-(\w+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" '
                      r'height="([\d.]+)">', svg)
    assert sorted(s for s, *_ in bars) == ["accepted", "blocked", "blocked", "hinted", "hinted"]
    assert "Never promise delivery dates." in html and "<code>Acme</code>" in html
    assert re.search(r"<code>desk-judge</code></th><td class=\"num\">8</td><td class=\"num\">2</td>\s*"
                     r"<td class=\"num\">25 %</td>\s*<td class=\"num\">1500 ms</td>\s*<td>timeout: 1</td>", html)


def test_the_chart_is_drawn_with_dots_in_german_too(editor, history):
    html = editor.get("/review/dashboard/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    svg = re.search(r'<svg class="gavel-chart".*?</svg>', html, re.S).group(0)
    assert not re.search(r'(x|y|width|height)="\d+,\d+"', svg)


def test_the_dashboard_reads_no_text_column(editor, history):
    with CaptureQueriesContext(connection) as queries:
        assert editor.get("/review/dashboard/?days=90").status_code == 200
    # Queries over tasks themselves; the per-rule numbers join feedback to a task for its purge date only.
    task_queries = [q["sql"] for q in queries.captured_queries if 'FROM "governance_task"' in q["sql"]]
    assert task_queries, "the dashboard counts tasks by status"
    for sql in (q["sql"] for q in queries.captured_queries):
        for column in TEXT_COLUMNS:
            assert f'"governance_task"."{column}"' not in sql, sql
        assert "SELECT *" not in sql.upper()
    # What the dashboard selects from tasks: counts by status; the backlog row's waiting count and oldest
    # creation time; reviews counted per editor (issue 43); a count of delivered texts whose task was reviewed.
    shapes = (r'SELECT "governance_task"\."status"( AS "status")?, COUNT\("governance_task"\."id"\) AS "n"',
              r'SELECT COUNT\("governance_task"\."id"\) AS "count", MIN\("governance_task"\."created"\) AS "oldest"',
              r'SELECT "auth_user"\."username"( AS "reviewed_by__username")?, COUNT\("governance_task"\."id"\) AS "n"',
              r'SELECT COUNT\(\*\) AS "__count"')
    for sql in task_queries:
        selected = sql.split(" FROM ")[0]
        assert any(re.fullmatch(shape, selected) for shape in shapes), sql


def test_the_dashboard_is_for_editors(outsider, db):
    client = Client()
    client.force_login(outsider)
    assert client.get("/review/dashboard/").status_code == 403


def test_the_admin_index_links_the_dashboard(superuser):  # noqa: F811
    client = Client()
    client.force_login(superuser)
    html = client.get("/admin/").content.decode()
    assert 'href="/review/dashboard/"' in html and 'href="/review/"' in html


# --- what the usage rows record (the judges' table) ---
def test_a_failed_call_and_an_answered_calls_latency_land_on_the_usage_row(api, provider_server, backup,
                                                                           configuration):
    provider_server.script([{"status": 503, "for_model": "test-model"},
                            {"text": "From the backup.", "delay": 0.05, "for_model": "backup-model"}])
    response = api.post("/api/v1/completions", {"configuration": "newsroom",
                                                 "messages": [{"role": "user", "content": "Hi"}]}, format="json")
    assert response.status_code == 200, response.content
    main = UsageDay.objects.get(configuration=configuration)
    fallback = UsageDay.objects.get(configuration=backup)
    assert (main.requests, main.failures, main.latency_ms) == (1, 1, 0)
    assert (fallback.requests, fallback.failures) == (1, 0)
    assert fallback.latency_ms >= 50
