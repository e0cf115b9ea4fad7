"""Issue 41: reports are no oracle (SPEC §12.5 amended: GAVEL_REPORT_MIN_TEXTS).

Repro: an administrator consumer recovered another consumer's 4-digit code in 25 dry runs — a draft
forbidding one guess, `replay=1`, and the change count said whether the newest text held it;
`GET /api/v1/policy/drafts/{id}?replay=1` leaked the same way; `POST /api/v1/evidence/verify` confirmed
guesses of other consumers' texts and returned the keyed hash of any text sent.
"""
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from governance.evidence.records import hash_of
from governance.models import EvidenceRecord, Task
from tests.drafts.helpers import live_policy
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.django_db

SECRET = "Your code is 4711."


def client_for(make_consumer, name, **kwargs):
    consumer, token = make_consumer(name, **kwargs)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return consumer, client


def retained(count: int, *, secret_first: bool = True) -> None:
    """`count` delivered answers of another consumer, the newest holding the secret."""
    now = timezone.now()
    rows = [Task(configuration="newsroom", status="ready", outcome="allowed", answer=f"Item {i}. " + NEWS,
                 created=now - timezone.timedelta(minutes=10 + i)) for i in range(count - 1)]
    rows.append(Task(configuration="newsroom", status="ready", outcome="allowed",
                     answer=(SECRET + " " + NEWS) if secret_first else NEWS, created=now))
    Task.objects.bulk_create(rows)


def guess(document: dict, code: str) -> dict:
    draft = {**document, "term_lists": [dict(document["term_lists"][0],
                                             forbidden=[*document["term_lists"][0]["forbidden"], code])]}
    return draft


def dry_run(client, document, code, replay=1) -> dict:
    answer = client.put(f"/api/v1/policy?dry_run=true&replay={replay}", guess(document, code), format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()["replay"]


def test_a_dry_run_answers_the_same_for_a_right_and_a_wrong_guess(provider, make_consumer, settings):
    assert settings.GAVEL_REPORT_MIN_TEXTS == 5
    live_policy(provider)
    retained(12)
    _admin, client = client_for(make_consumer, "ops", is_admin=True)
    document = client.get("/api/v1/policy").json()
    right, wrong = dry_run(client, document, "4711"), dry_run(client, document, "4712")
    assert right == wrong
    assert right["replayed"] >= 5  # the window never narrows below GAVEL_REPORT_MIN_TEXTS
    assert right["counts"]["allowed→blocked"] == "fewer than 5"
    assert "rules_withheld" not in right and right["rules"] == {}


def test_a_dry_run_over_fewer_texts_than_the_minimum_answers_nothing(provider, make_consumer):
    live_policy(provider)
    retained(3)
    _admin, client = client_for(make_consumer, "ops", is_admin=True)
    document = client.get("/api/v1/policy").json()
    replay = dry_run(client, document, "4711", replay=500)
    assert replay["withheld"] is True and replay["replayed"] == "fewer than 5"
    assert "counts" not in replay and "rules" not in replay


def test_counts_of_enough_texts_are_still_shown(provider, make_consumer):
    live_policy(provider)
    retained(8)
    _admin, client = client_for(make_consumer, "ops", is_admin=True)
    document = client.get("/api/v1/policy").json()
    replay = dry_run(client, document, "Item", replay=500)  # seven texts start with it
    assert replay["counts"]["allowed→blocked"] == 7
    assert replay["rules"]["term_list:Brand words:Item"] == {"new": 7, "lost": "fewer than 5"}


def test_a_drafts_report_answers_the_same_for_a_right_and_a_wrong_guess(provider, make_consumer):
    live_policy(provider)
    retained(12)
    _admin, client = client_for(make_consumer, "ops", is_admin=True)
    document = client.get("/api/v1/policy").json()
    reports = []
    for code in ("4711", "4712"):
        made = client.post("/api/v1/policy/drafts", {"title": code, "document": guess(document, code)},
                           format="json").json()
        report = client.get(f"/api/v1/policy/drafts/{made['id']}?replay=1").json()["replay"]
        reports.append(report)
    assert reports[0] == reports[1]
    assert reports[0]["screened"] >= 5 and reports[0]["counts"]["allowed→blocked"] == "fewer than 5"


def test_verify_answers_about_the_callers_own_records_and_hashes_nothing_else(make_consumer, configuration):
    shop, shop_api = client_for(make_consumer, "shop", configurations=[configuration])
    _ops, ops_api = client_for(make_consumer, "ops", configurations=[configuration], is_admin=True)
    theirs = "Approved amount: 42 EUR."
    EvidenceRecord.objects.create(surface="screening", configuration="newsroom", outcome="allowed",
                                  actor="consumer:shop", text_hash=hash_of(theirs), key_id="k")
    guessed = ops_api.post("/api/v1/evidence/verify", {"text": theirs}, format="json").json()
    assert guessed["count"] == 0 and guessed["records"] == [] and guessed["text_hash"] is None
    nothing = shop_api.post("/api/v1/evidence/verify", {"text": "Approved amount: 43 EUR."}, format="json").json()
    assert nothing["count"] == 0 and nothing["text_hash"] is None
    own = shop_api.post("/api/v1/evidence/verify", {"text": theirs}, format="json").json()
    assert own["count"] == 1 and own["text_hash"] == hash_of(theirs)
