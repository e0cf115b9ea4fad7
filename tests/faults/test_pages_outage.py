"""Admin and review pages while the database is unreachable: a plain 503 page, never a 500 (issue 25, #14).

Every query fails as it does when PostgreSQL is down or restarting (OperationalError), after the
user logged in: the session, the user and the page's own queries all need the database.
"""
import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError
from django.db.backends.utils import CursorWrapper
from django.db.models.sql import compiler
from django.test import Client

pytestmark = pytest.mark.django_db


def unreachable(*args, **kwargs):
    raise OperationalError('connection to server at "db.internal" failed: password=hunter2')


@pytest.fixture
def superuser_client():
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "pw-12345678"))
    return client


@pytest.mark.parametrize("path", ["/admin/", "/admin/governance/task/", "/review/", "/review/dashboard/",
                                  "/accounts/login/"])
def test_pages_answer_503_with_a_plain_page_while_the_database_is_down(superuser_client, monkeypatch, path):
    monkeypatch.setattr(compiler.SQLCompiler, "execute_sql", unreachable)
    response = superuser_client.get(path)
    assert response.status_code == 503, (path, response.status_code)
    assert response["Content-Type"].startswith("text/html") and response["Retry-After"]
    page = response.content.decode()
    assert "cannot reach its database" in page
    assert "hunter2" not in page and "Traceback" not in page and "OperationalError" not in page


def test_the_api_still_answers_its_json_503(superuser_client, monkeypatch):
    # Every statement fails, the token's written-out lookup too (the API authenticates by token only:
    # the session's user is never loaded on a JSON path: nothing there reads request.user).
    monkeypatch.setattr(compiler.SQLCompiler, "execute_sql", unreachable)
    monkeypatch.setattr(CursorWrapper, "execute", unreachable)
    response = superuser_client.get("/api/v1/tasks", HTTP_AUTHORIZATION="Bearer gvt_x")
    assert response.status_code == 503 and response.json()["error"]["code"] == "unavailable"


def test_a_real_bug_on_a_page_stays_a_500(superuser_client, monkeypatch):
    monkeypatch.setattr(compiler.SQLCompiler, "execute_sql", lambda *a, **k: 1 / 0)
    assert superuser_client.get("/admin/").status_code == 500
