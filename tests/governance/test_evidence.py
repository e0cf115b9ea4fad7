"""Evidence of editorial control (SPEC §13.1): a record per delivered text, verify, list, export, purge.

Texts go through the real paths (the provider server on 127.0.0.1 answers completions and tasks);
the tests read the records back and check that none of them holds a word of any text.
"""
import io
import json
import tracemalloc
import unicodedata
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from governance.evidence import export, hashing
from governance.models import EvidenceRecord, Task
from governance.work import editors
from governance.work.undo import undo_review
from tests.governance.test_tasks_api import eager, submit, task_body  # noqa: F401  (fixtures)

LONG = ("The new planning tool finds a free hour for the whole team, books a room that fits and sends the "
        "agenda before the meeting starts, so nobody has to ask twice and every week keeps its shape.")


@pytest.fixture
def admin_api(db, configuration, make_consumer):
    consumer, token = make_consumer("archive", [configuration], is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def verify(client, text):
    response = client.post("/api/v1/evidence/verify", {"text": text}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


# --- hashing: one normalisation, decided and documented (docs/evidence.md) ---
def test_a_paragraph_copied_from_a_page_hashes_like_the_delivered_one():
    key = hashing.derive_key("installation secret")
    delivered = "Die Zürcher Straße ist gesperrt.\nUmleitung über die Brücke."
    copied = unicodedata.normalize("NFD", delivered).replace("\n", "\r\n  ").replace(" ist", "\u00a0ist")
    copied = "\ufeff" + copied.replace("gesperrt", "ge\u00adsperrt").replace("Brücke", "Brü\u200bcke") + "\n"
    assert copied != delivered
    assert hashing.text_hash(copied, key) == hashing.text_hash(delivered, key)


@pytest.mark.parametrize("changed", [
    "Die Zürcher Straße ist offen.\nUmleitung über die Brücke.",     # one word
    "die Zürcher Straße ist gesperrt.\nUmleitung über die Brücke.",    # case
    "Die Zürcher Straße ist gesperrt!\nUmleitung über die Brücke.",    # punctuation
    "Die <b>Zürcher</b> Straße ist gesperrt.\nUmleitung über die Brücke.",  # markup counts
])
def test_a_changed_text_hashes_differently(changed):
    key = hashing.derive_key("installation secret")
    delivered = "Die Zürcher Straße ist gesperrt.\nUmleitung über die Brücke."
    assert hashing.text_hash(changed, key) != hashing.text_hash(delivered, key)


def test_the_hash_is_keyed_by_the_installation_secret():
    text = "A text published twice."
    one, other = hashing.derive_key("secret one"), hashing.derive_key("secret two")
    assert hashing.text_hash(text, one) != hashing.text_hash(text, other)
    assert hashing.key_id(one) != hashing.key_id(other) and len(hashing.key_id(one)) == 16
    # Not a plain SHA-256 of the text: without the key nobody can test guesses against the hashes.
    import hashlib
    assert hashing.text_hash(text, one) != hashlib.sha256(text.encode()).hexdigest()


# --- end to end: a task generated, edited, accepted, purged ---
def test_a_reviewed_task_leaves_evidence_that_outlives_the_purge(api, admin_api, submit, eager, provider_server):
    provider_server.set_default({"text": LONG})
    editor = get_user_model().objects.create_user("erika")
    body = submit(task_body()).json()
    assert body["status"] == "ready"
    task = Task.objects.get(pk=body["id"])
    edited = LONG.replace("books a room", "reserves a room")
    editors.accept(task, user=editor, edited_text=edited)

    records = EvidenceRecord.objects.filter(task=task).order_by("at")
    assert [r.review_decision for r in records] == ["", "accepted"]  # the delivery, then the review
    review = records[1]
    assert review.surface == "task" and review.configuration == "newsroom"
    assert review.reviewed_by == "erika" and review.edited is True and review.reviewed_at is not None
    task.refresh_from_db()
    assert review.policy_version == task.policy_version and review.policy_version >= 1
    assert {c["check"] for c in review.checks} >= {"secret_redaction", "term_list", "pattern_rules", "rules_judge"}

    found = verify(api, edited)
    assert found["count"] == 1
    record = found["records"][0]
    assert record["review"] == {"decision": "accepted", "by": "erika", "at": record["review"]["at"], "edited": True}
    assert record["task"] == str(task.pk) and record["policy_version"] == task.policy_version
    # The answer as generated was delivered (the task was ready): its own record, without a review.
    original = verify(api, LONG)
    assert original["count"] == 1 and original["records"][0]["review"] is None
    assert verify(api, edited.replace("nobody", "no one"))["count"] == 0

    Task.objects.filter(pk=task.pk).update(created=timezone.now() - timedelta(days=40))
    EvidenceRecord.objects.update(at=timezone.now() - timedelta(days=40))
    call_command("purge_governance", "--days", "30", stdout=io.StringIO())
    task.refresh_from_db()
    assert task.answer == "" and task.edited_text == "" and task.purged_at is not None
    again = verify(api, edited)
    assert again["count"] == 1 and again["records"][0]["review"]["by"] == "erika"


def test_an_accepted_task_without_an_edit_records_the_review(api, admin_api, submit, eager, provider_server):
    provider_server.set_default({"text": LONG})
    editor = get_user_model().objects.create_user("erika")
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    editors.accept(task, user=editor)
    review = verify(api, LONG)["records"]
    assert sorted(bool(r["review"]) for r in review) == [False, True]
    assert [r["review"]["edited"] for r in review if r["review"]] == [False]


def test_an_undone_accept_leaves_no_review_in_the_evidence(api, admin_api, submit, eager, provider_server):
    """An accept undone within the undo window did not stand: verify names no review for the text."""
    provider_server.set_default({"text": LONG})
    editor = get_user_model().objects.create_user("erika")
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    editors.accept(task, user=editor)
    undo_review(task, user=editor)
    review = verify(api, LONG)["records"]
    assert [bool(r["review"]) for r in review] == [False]  # the delivered answer's record stays


def test_a_blocked_task_is_not_delivered_and_has_no_evidence(api, admin_api, submit, eager, provider_server,
                                                              configuration):
    from termlists.models import TermList

    TermList.objects.create(name="Never", forbidden="whole team").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    body = submit(task_body()).json()
    assert body["status"] == "blocked"
    assert verify(api, LONG)["count"] == 0 and not EvidenceRecord.objects.exists()


def test_a_short_text_records_judges_and_pattern_rules_as_not_run(api, admin_api, configuration):
    configuration.rule_mode = "report"
    configuration.save()
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": "Short and sweet."},
                        format="json")
    assert response.status_code == 200
    record = verify(api, "Short and sweet.")["records"][0]
    checks = {c["check"]: c for c in record["checks"]}
    assert checks["pattern_rules"] == {"check": "pattern_rules", "result": "skipped", "reason": "not_finished_text"}
    assert checks["rules_judge"] == {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"}
    assert record["surface"] == "screening" and record["correlation_id"] == response.json()["id"]


# --- no text anywhere ---
def test_no_word_of_any_text_reaches_evidence(api, admin_api, submit, eager, provider_server, configuration):
    words = {
        "screening": "Quibblewort", "api": "Fandangoleum", "openai_chat": "Zephyrquill", "task": "Mortadellix",
        "edit": "Glimmerhorn", "stream": "Brontowhistle", "openai_responses": "Sprocketfern",
        "anthropic": "Velvetgrommet", "prompt": "Pumpernickelo",
    }
    filler = " and the whole team books a room that fits before the meeting starts every single week"
    api.post("/api/v1/screenings", {"configuration": "newsroom", "text": words["screening"] + filler},
             format="json")
    provider_server.set_default({"text": words["api"] + filler})
    assert api.post("/api/v1/completions", {"configuration": "newsroom",
                                            "messages": [{"role": "user", "content": "Write."}]},
                    format="json").status_code == 200
    provider_server.set_default({"text": words["stream"] + filler})
    streamed = api.post("/api/v1/completions", {"configuration": "newsroom", "stream": True,
                                                "messages": [{"role": "user", "content": "Write."}]}, format="json")
    assert words["stream"] in b"".join(streamed.streaming_content).decode()
    provider_server.set_default({"text": words["openai_chat"] + filler})
    assert api.post("/openai/v1/chat/completions", {"model": "newsroom",
                                                    "messages": [{"role": "user", "content": "Write."}]},
                    format="json").status_code == 200
    provider_server.set_default({"text": words["openai_responses"] + filler})
    assert api.post("/openai/v1/responses", {"model": "newsroom", "input": words["prompt"]},
                    format="json").status_code == 200
    provider_server.set_default({"text": words["anthropic"] + filler})
    assert api.post("/anthropic/v1/messages", {"model": "newsroom", "max_tokens": 100, "messages": [
        {"role": "user", "content": words["prompt"]}]}, format="json").status_code == 200
    provider_server.set_default({"text": words["task"] + filler})
    task = Task.objects.get(pk=submit(task_body(instruction=words["prompt"])).json()["id"])
    editors.accept(task, user=get_user_model().objects.create_user("erika"), edited_text=words["edit"] + filler)

    surfaces = sorted(EvidenceRecord.objects.values_list("surface", flat=True))
    assert surfaces == ["anthropic", "api", "api", "openai_chat", "openai_responses", "screening", "task", "task"]
    columns = [json.dumps(row, default=str) for row in EvidenceRecord.objects.values()]
    out = io.StringIO()
    call_command("export_evidence", stdout=out)
    listed = admin_api.get("/api/v1/evidence").content.decode()
    ndjson = b"".join(admin_api.get("/api/v1/evidence", HTTP_ACCEPT="application/x-ndjson").streaming_content)
    metrics = Client().get("/metrics")  # every metric, its labels and values, as Prometheus reads them
    assert metrics.status_code == 200 and b"gavel_runs_total" in metrics.content
    for word in words.values():
        for where in (*columns, out.getvalue(), listed, ndjson.decode(), metrics.content.decode()):
            assert word.lower() not in where.lower(), word
    # Each delivered text verifies.
    for word in ("screening", "api", "stream", "openai_chat", "openai_responses", "anthropic", "edit"):
        assert verify(api, words[word] + filler)["count"] == 1, word


# --- the API ---
def test_the_list_is_for_administrator_consumers_and_verify_answers_a_consumer_about_its_own(api, admin_api):
    # issue 41: verify answers each consumer about the texts delivered to it, never about another's.
    assert api.post("/api/v1/evidence/verify", {"text": "x"}, format="json").json() == {
        "text_hash": None, "count": 0, "records": []}
    assert APIClient().post("/api/v1/evidence/verify", {"text": "x"}, format="json").status_code == 401
    assert api.get("/api/v1/evidence").status_code == 403
    assert APIClient().get("/api/v1/evidence").status_code == 401


@pytest.mark.parametrize("query, field", [
    ("since=yesterday", "since"), ("until=2026-13-01T00:00:00Z", "until"), ("surface=fax", "surface"),
    ("outcome=blocked", "outcome"), ("task=42", "task"), ("colour=red", "colour"), ("page=0", "page"),
])
def test_a_bad_filter_is_a_400_naming_it(admin_api, query, field):
    response = admin_api.get(f"/api/v1/evidence?{query}")
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_verify_refuses_a_missing_or_unknown_field(admin_api):
    response = admin_api.post("/api/v1/evidence/verify", {"texts": "x"}, format="json")
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"text", "texts"}


def make_records(count, *, at=None, surface="screening"):
    at = at or timezone.now()
    EvidenceRecord.objects.bulk_create(
        [EvidenceRecord(at=at + timedelta(seconds=i), surface=surface, configuration="newsroom", policy_version=3,
                        outcome="allowed", checks=[{"check": "term_list", "result": "passed"}],
                        text_hash=f"{i:064x}") for i in range(count)], batch_size=2000)


def test_the_list_pages_and_filters(admin_api):
    start = timezone.now() - timedelta(days=2)
    make_records(60, at=start)
    make_records(3, at=start + timedelta(days=1), surface="api")
    page = admin_api.get("/api/v1/evidence?surface=screening").json()
    assert page["count"] == 60 and len(page["results"]) == 50 and page["previous"] is None
    assert page["next"].endswith("page=2")
    second = admin_api.get(page["next"]).json()
    assert len(second["results"]) == 10
    assert [r["text_hash"] for r in page["results"]][:2] == [f"{0:064x}", f"{1:064x}"]  # oldest first
    since = (start + timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert admin_api.get("/api/v1/evidence", {"since": since}).json()["count"] == 3
    assert admin_api.get("/api/v1/evidence", {"until": since}).json()["count"] == 60


def test_the_list_streams_ndjson_when_asked(admin_api):
    make_records(5)
    response = admin_api.get("/api/v1/evidence", HTTP_ACCEPT="application/x-ndjson")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert [json.loads(line)["text_hash"] for line in lines] == [f"{i:064x}" for i in range(5)]


# --- the export: NDJSON, streamed, constant memory ---
def export_peak(tmp_path, count) -> tuple[int, int]:
    EvidenceRecord.objects.all().delete()
    make_records(count)
    target = tmp_path / f"export-{count}.ndjson"
    tracemalloc.start()
    call_command("export_evidence", "--output", str(target))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    lines = target.read_text(encoding="utf-8").splitlines()
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"id", "at", "surface", "configuration", "also", "policy_version", "outcome",
                               "checks", "verification", "correlation_id", "actor", "task", "review",
                               "text_hash", "key_id"}
    return len(lines), peak


def test_export_is_ndjson_in_constant_memory(db, tmp_path):
    small_count, small_peak = export_peak(tmp_path, 4000)
    big_count, big_peak = export_peak(tmp_path, 20000)
    assert (small_count, big_count) == (4000, 20000)
    # Five times the rows, not five times the memory: the rows are read in chunks of export.CHUNK.
    assert big_peak < small_peak * 1.5, (small_peak, big_peak)


def test_export_filters_by_time(db):
    start = timezone.now() - timedelta(days=3)
    make_records(2, at=start)
    make_records(4, at=start + timedelta(days=2))
    out = io.StringIO()
    call_command("export_evidence", "--since", (start + timedelta(days=1)).date().isoformat(), stdout=out)
    assert len(out.getvalue().splitlines()) == 4
    with pytest.raises(Exception):
        call_command("export_evidence", "--since", "soon")
    assert export.CHUNK >= 1000
