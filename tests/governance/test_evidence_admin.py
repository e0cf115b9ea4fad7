"""Evidence for administrators who are not engineers (issue 43): *Verify a published text* and *Export evidence*
in the admin, in words and in both languages, answered by the same service as the API (governance/evidence/export)."""
import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from governance.evidence import records
from governance.models import EvidenceRecord
from tests.governance.test_admin import editor_client, policy_editor, superuser, superuser_client  # noqa: F401

TEXT = ("The new planning tool finds a free hour for the whole team, books a room that fits and sends the agenda "
        "before the meeting starts.")


def deliver(text=TEXT, *, at=None, reviewed=False, surface="task", outcome="allowed_with_hints",
            configuration="newsroom"):
    body = {"id": "corr-1", "policy_version": 7, "outcome": outcome, "text": text,
            "checks": [{"check": "term_list", "result": "passed"},
                       {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"}],
            "verification": {"status": "not_applicable"}}
    review = {"review_decision": "accepted", "reviewed_by": "erika", "reviewed_at": timezone.now(),
              "edited": True} if reviewed else None
    assert records.record(body, surface=surface, configuration=configuration, actor="consumer:cms", review=review)
    record = EvidenceRecord.objects.order_by("-at").first()
    if at is not None:
        EvidenceRecord.objects.filter(pk=record.pk).update(at=at)
    return record


def page_text(response) -> str:
    from tests.governance.test_german import visible_text

    return visible_text(response.content.decode())


def test_verify_finds_the_record_in_words(superuser_client):
    deliver(reviewed=True)
    # Copied from a page: wrapped lines and a no-break space still verify.
    pasted = TEXT.replace(" the whole", "\nthe\u00a0whole")
    response = superuser_client.post("/admin/evidence/verify/", {"text": pasted})
    assert response.status_code == 200
    text = page_text(response)
    assert "Gavel delivered exactly this text once" in text
    assert "7" in text and "newsroom" in text
    assert "Term lists: passed" in text
    assert "Judges (rules): did not run — the text is shorter than 30 words, too short to judge" in text
    assert "accepted by erika" in text and "after editing the text" in text
    assert "delivered with hints" in text
    for code in ("allowed_with_hints", "term_list", "not_finished_text", "None", "null"):
        assert code not in text, code


def test_verify_says_not_reviewed_and_a_changed_text_finds_nothing(superuser_client):
    deliver()
    text = page_text(superuser_client.post("/admin/evidence/verify/", {"text": TEXT}))
    assert "not reviewed by a person" in text
    changed = page_text(superuser_client.post("/admin/evidence/verify/", {"text": TEXT.replace("free", "spare")}))
    assert "No record matches" in changed and "Delivered on" not in changed
    empty = superuser_client.post("/admin/evidence/verify/", {"text": "   "})
    assert empty.status_code == 200 and "Paste a text to verify." in page_text(empty)


def test_verify_in_german_uses_the_glossary(superuser_client):
    deliver(reviewed=True)
    response = superuser_client.post("/admin/evidence/verify/", {"text": TEXT}, HTTP_ACCEPT_LANGUAGE="de")
    text = page_text(response)
    assert "Gavel hat genau diesen Text einmal ausgeliefert" in text
    assert "Begriffslisten: bestanden" in text
    assert "mit Hinweisen ausgeliefert" in text and "angenommen von erika" in text
    assert "Prüfung durch eine Person" in text


def test_only_administrators_verify_and_export(editor_client, superuser_client):
    for url in ("/admin/evidence/verify/", "/admin/evidence/export/"):
        assert editor_client.get(url).status_code == 403
        assert superuser_client.get(url).status_code == 200
    home = superuser_client.get("/admin/").content.decode()
    assert "/admin/evidence/verify/" in home and "/admin/evidence/export/" in home
    assert "/admin/evidence/verify/" not in editor_client.get("/admin/").content.decode()


def test_export_csv_with_a_date_range_and_filters(superuser_client):
    now = timezone.now()
    deliver(at=now - timedelta(days=10))
    deliver(at=now - timedelta(days=1), reviewed=True)
    deliver(at=now - timedelta(days=1), surface="api", outcome="allowed")
    since = (timezone.localdate() - timedelta(days=3)).isoformat()
    response = superuser_client.get("/admin/evidence/export/", {"format": "csv", "since": since, "surface": "task"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert len(rows) == 1
    assert rows[0]["surface"] == "task" and rows[0]["reviewed_by"] == "erika" and rows[0]["edited"] == "yes"
    assert rows[0]["checks"] == "term_list:passed; rules_judge:skipped:not_finished_text"
    reviewed = superuser_client.get("/admin/evidence/export/", {"format": "csv", "reviewed": "no"})
    assert len(list(csv.DictReader(io.StringIO(b"".join(reviewed.streaming_content).decode("utf-8-sig"))))) == 2


def test_export_ndjson_is_the_api_shape(superuser_client):
    deliver(reviewed=True)
    response = superuser_client.get("/admin/evidence/export/", {"format": "ndjson", "outcome": "allowed_with_hints"})
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert len(lines) == 1 and lines[0]["review"]["by"] == "erika" and "text" not in lines[0]


def test_export_refuses_a_backwards_range_naming_the_field(superuser_client):
    response = superuser_client.get("/admin/evidence/export/", {"format": "csv", "since": "2026-12-04",
                                                                 "until": "2026-12-01"})
    assert response.status_code == 200 and "The end date is before the start date." in page_text(response)
    bad = superuser_client.get("/admin/evidence/export/", {"format": "csv", "since": "soon"})
    assert bad.status_code == 200 and "Enter a valid date." in page_text(bad)


def test_the_evidence_list_shows_words_not_codes(superuser_client):
    record = deliver()
    text = page_text(superuser_client.get("/admin/governance/evidencerecord/"))
    assert "delivered with hints" in text and "not reviewed by a person" in text
    assert "allowed_with_hints" not in text
    detail = page_text(superuser_client.get(f"/admin/governance/evidencerecord/{record.pk}/change/"))
    assert "Term lists: passed" in detail and "term_list" not in detail


@pytest.mark.parametrize("value", ["=cmd()", "+1", "@x"])
def test_a_csv_cell_is_never_a_formula(value):
    from governance.evidence.admin_pages import csv_value

    assert csv_value(value).startswith("'")
