"""A German walk of the review and release pages (issue 29, Must show 5): no English word from the list
below shows on a page a German editor or administrator reads. The catalogue's own completeness (no empty,
no fuzzy entry) is `tests/governance/test_german.py`."""
import html
import re

import pytest

from governance.models import UserProfile
from tests.governance.review_fixtures import (  # noqa: F401  (fixtures)
    blocked_task, desk_policy, field_task, hinted_task, make_task,
)
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401

# Words that must not show in German: outcome and status values, the confusion counts, history sources.
ENGLISH = ("allowed", "blocked", "passed", "failed", "restore", "TP", "FP", "FN", "TN", "delivered", "rejected",
           "accepted", "ready", "waiting")


def visible_words(page: str) -> set[str]:
    body = page.split("<body", 1)[-1]
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    body = re.sub(r"<code\b.*?</code>", " ", body, flags=re.S)  # identifiers: names of records, not words
    # The task's own text (the fixtures' answer is English) is not the page's language.
    body = re.sub(r"<textarea\b.*?</textarea>", " ", body, flags=re.S)
    body = re.sub(r'<td class="gavel-preview.*?</td>', " ", body, flags=re.S)
    body = re.sub(r'<div class="gavel-answer".*?</div>', " ", body, flags=re.S)
    body = re.sub(r"<[^>]+>", " ", body)
    return set(re.findall(r"[A-Za-zÄÖÜäöüß]+", html.unescape(body)))


@pytest.fixture
def german_admin(superuser_client, superuser):
    UserProfile.objects.update_or_create(user=superuser, defaults={"language": "de"})
    return superuser_client


def test_the_review_and_release_pages_in_german_show_no_english_status_word(german_admin, hinted_task,
                                                                            blocked_task, field_task):
    rejected = make_task(status="rejected", outcome="allowed", answer="Ein Text.", review_decision="rejected")
    pages = ["/review/", "/review/?status=all", "/review/dashboard/", f"/review/tasks/{hinted_task.pk}/",
             f"/review/tasks/{blocked_task.pk}/", f"/review/tasks/{field_task.pk}/", f"/review/tasks/{rejected.pk}/",
             "/admin/policy/test/", "/admin/policy/history/"]
    found = {}
    for url in pages:
        response = german_admin.get(url)
        assert response.status_code == 200, url
        words = visible_words(response.content.decode()) & set(ENGLISH)
        if words:
            found[url] = sorted(words)
    assert found == {}


def test_a_policy_test_report_and_the_history_in_german_show_no_english_status_word(german_admin, desk_policy):
    import zlib

    from governance.models import PolicyExample, PolicyRevision

    PolicyExample.objects.create(name="fails", configuration="newsroom-desk", text="Acme makes kettles.",
                                 expect_outcome="allowed")
    PolicyExample.objects.create(name="passes", configuration="newsroom-desk", text="Our kettle boils water.",
                                 expect_outcome="allowed")
    for number, source in enumerate(("admin", "api", "import", "restore"), start=1):
        PolicyRevision.objects.create(number=number, source=source, actor="root", document=zlib.compress(b"{}"))
    report = german_admin.post("/admin/policy/test/", {"judges": "skip"})
    assert report.status_code == 200
    page = report.content.decode()
    assert 'id="policy-test-examples"' in page and "Ausgang" in page and "Fehlalarme" in page
    history = german_admin.get("/admin/policy/history/").content.decode()
    assert "wiederhergestellte Version" in history and "Verwaltungsseiten" in history
    found = {url: sorted(visible_words(text) & set(ENGLISH)) for url, text in
             (("test", page), ("history", history))}
    assert found == {"test": [], "history": []}
    assert page.count("<th>Ergebnis</th>") == 1  # result and outcome no longer share one heading
