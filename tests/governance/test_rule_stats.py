"""Each rule's numbers as editors see them (SPEC §10.2): the dashboard section and GET /api/v1/rules/stats,
read from events and feedback facts only — the SQL of the feedback and statistics paths selects no text."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from governance.review.teaching import encode
from governance.models import GovernanceEvent, HintFeedback, Task
from governance.review import rule_stats
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    HYPE, blocked_task, desk_policy, editor, field_task, hinted_task, queued_task, reviewer,
)
from tests.governance.test_review_dashboard import TEXT_COLUMNS, history  # noqa: F401  (fixture)

HYPE_FINDING = {"check_name": "term_list", "list_name": "Hype words", "term": HYPE, "snippet": "", "rule": ""}
RULE_FINDING = {"check_name": "rules_judge", "list_name": "", "term": "", "snippet": "house-style", "rule": "3"}
ACME_FINDING = {"check_name": "term_list", "list_name": "Competitors", "term": "Acme", "snippet": "", "rule": ""}


@pytest.fixture
def reviewed(history, hinted_task, editor):
    """The dashboard's history, plus an editor's feedback on the hinted task (whose events say what fired)."""
    Task.objects.filter(pk=hinted_task.pk).update(correlation_id="s4")  # its screening reported Hype words
    GovernanceEvent.objects.filter(correlation_id="s2").update(correlation_id="s4")  # and the judged rule
    hinted_task.refresh_from_db()
    url = f"/review/tasks/{hinted_task.pk}/"
    assert editor.post(url + "feedback", {"number": 1, "verdict": "right", "finding": [encode(HYPE_FINDING)]}).status_code == 302
    assert editor.post(url + "feedback", {"number": 2, "verdict": "wrong", "finding": [encode(RULE_FINDING)]}).status_code == 302
    assert editor.post(url + "missed", {"finding": encode(ACME_FINDING)}).status_code == 302
    assert HintFeedback.objects.count() == 3
    return hinted_task


def by_key(rows):
    return {(r["check"], r["list"], r["term"], r["snippet"], r["rule"]): r for r in rows}


def test_per_rule_numbers_most_wrong_first(reviewed):
    rows = rule_stats.rule_stats(14)
    assert (rows[0]["check"], rows[0]["snippet"], rows[0]["rule"]) == ("rules_judge", "house-style", "3")
    keyed = by_key(rows)
    rule = keyed[("rules_judge", "", "", "house-style", "3")]
    assert (rule["fired"], rule["blocked"], rule["reviewed"], rule["wrong"], rule["missed"], rule["precision"]) == (
        2, 1, 1, 1, 0, 0.0)
    assert rule["line"] == "Never promise delivery dates."
    hype = keyed[("term_list", "Hype words", HYPE, "", "")]
    assert (hype["fired"], hype["reviewed"], hype["right"], hype["precision"]) == (1, 1, 1, 1.0)
    acme = keyed[("term_list", "Competitors", "Acme", "", "")]
    assert (acme["fired"], acme["missed"], acme["reviewed"], acme["precision"]) == (1, 1, 0, None)
    assert ("term_list", "Competitors", "Globex", "", "") not in keyed  # fired 60 days ago only
    assert ("term_list", "Competitors", "Globex", "", "") in by_key(rule_stats.rule_stats(90))


def test_the_dashboard_shows_them_with_links_to_retained_tasks(editor, reviewed):
    page = editor.get("/review/dashboard/").text
    section = page.split('id="rule-stats"')[1].split("</section>")[0]
    first_row = section.split("<tbody>")[1].split("</tr>")[0]
    assert "house-style" in first_row and "0 %" in first_row
    assert f'href="/review/tasks/{reviewed.pk}/"' in first_row
    # A purged task is no longer linked: there is no text left to show.
    Task.objects.filter(pk=reviewed.pk).update(purged_at=reviewed.created)
    section = editor.get("/review/dashboard/").text.split('id="rule-stats"')[1].split("</section>")[0]
    assert f'href="/review/tasks/{reviewed.pk}/"' not in section
    german = editor.get("/review/dashboard/", HTTP_ACCEPT_LANGUAGE="de").text
    assert "Regeln und Begriffe aus Sicht der Redaktion" in german


@pytest.fixture
def admin_api(db, make_consumer):
    _consumer, token = make_consumer("charts", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_the_api_gives_the_same_numbers_to_administrator_consumers(reviewed, admin_api, make_consumer):
    body = admin_api.get("/api/v1/rules/stats?days=14").json()
    assert body["days"] == 14
    assert body["rules"] == rule_stats.rule_stats(14)
    assert body["rules"][0]["wrong"] == 1
    assert admin_api.get("/api/v1/rules/stats?days=0").status_code == 400
    bad = admin_api.get("/api/v1/rules/stats?days=x")
    assert bad.status_code == 400 and "days" in bad.content.decode()
    assert admin_api.get("/api/v1/rules/stats?weeks=2").status_code == 400
    _consumer, token = make_consumer("plain")
    plain = APIClient()
    plain.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert plain.get("/api/v1/rules/stats").status_code == 403


def test_the_feedback_and_statistics_sql_selects_no_text(history, hinted_task, editor, admin_api):
    Task.objects.filter(pk=hinted_task.pk).update(correlation_id="s4")
    url = f"/review/tasks/{hinted_task.pk}/"
    with CaptureQueriesContext(connection) as queries:
        assert editor.post(url + "feedback", {"number": 1, "verdict": "wrong",
                                              "finding": [encode(HYPE_FINDING)]}).status_code == 302
        assert editor.post(url + "missed", {"finding": encode(ACME_FINDING)}).status_code == 302
        assert editor.get("/review/dashboard/?days=90").status_code == 200
        assert admin_api.get("/api/v1/rules/stats?days=90").status_code == 200
    assert HintFeedback.objects.count() == 2
    sqls = [q["sql"] for q in queries.captured_queries]
    assert any("governance_hintfeedback" in sql for sql in sqls)
    for sql in sqls:
        if sql.lstrip().upper().startswith("SELECT"):
            selected = sql.split(" FROM ")[0]
            for column in TEXT_COLUMNS:
                assert f'"governance_task"."{column}"' not in selected, sql
            assert "SELECT *" not in sql.upper()
    # The feedback path reads the task's ids and review state only.
    task_reads = [sql.split(" FROM ")[0] for sql in sqls if 'FROM "governance_task"' in sql
                  and sql.lstrip().upper().startswith("SELECT") and "COUNT(" not in sql]
    assert task_reads
    for selected in task_reads:
        columns = set(re.findall(r'"governance_task"\."(\w+)"', selected))
        assert columns <= {"id", "review_decision", "correlation_id", "configuration", "also"}, selected
