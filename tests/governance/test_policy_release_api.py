"""Policy releases over the REST API (SPEC §12): test runs, dry runs, the gate, versions."""
import copy

import pytest
import yaml
from django.test import TestCase
from rest_framework.test import APIClient

from governance import policy
from governance.models import GovernanceEvent, PolicyRevision, PolicyVersion
from termlists.models import TermList
from tests.governance.test_policy_examples import small_policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api(make_consumer):
    _consumer, token = make_consumer("release-admin", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def with_term(document, term):
    draft = copy.deepcopy(document)
    draft["term_lists"][0]["forbidden"].append(term)
    return draft


def test_policy_test_runs_the_examples_and_a_draft_in_the_body_writes_nothing(admin_api, provider):
    current = small_policy(provider)
    policy.import_policy(current)
    version = PolicyVersion.current()
    answer = admin_api.post("/api/v1/policy/test", {"judges": "skip", "draft": None}, format="json")
    assert answer.status_code == 200, answer.content
    assert (answer.json()["passed"], answer.json()["failed"]) == (2, 0)
    as_yaml = yaml.safe_dump(with_term(current, "harbour"))
    answer = admin_api.post("/api/v1/policy/test", {"draft": as_yaml, "judges": "skip"}, format="json")
    body = answer.json()
    assert answer.status_code == 200 and body["draft"] is True and body["failed"] == 1
    assert next(e for e in body["examples"] if e["name"] == "plain-news-allowed")["outcome"] == "blocked"
    answer = admin_api.post("/api/v1/policy/test", {"draft": with_term(current, "harbour"), "only":
                                                    ["plain-news-allowed"]}, format="json")
    assert [e["name"] for e in answer.json()["examples"]] == ["plain-news-allowed"]
    assert PolicyVersion.current() == version
    assert answer["X-Gavel-Policy-Version"] == str(version)
    assert "harbour" not in TermList.objects.get().forbidden


def test_policy_test_errors_are_400_with_their_path_and_other_tokens_get_403(admin_api, api, provider):
    policy.import_policy(small_policy(provider))
    bad = admin_api.post("/api/v1/policy/test", {"draft": {"configurations": [{"identifier": "x"}]}}, format="json")
    assert bad.status_code == 400
    assert "draft.configurations[0].provider" in bad.json()["error"]["fields"]
    assert admin_api.post("/api/v1/policy/test", {"judges": "sometimes"}, format="json").status_code == 400
    assert admin_api.post("/api/v1/policy/test", {"only": ["nope"]}, format="json").status_code == 404
    assert admin_api.post("/api/v1/policy/test").status_code == 400  # no body at all
    assert admin_api.post("/api/v1/policy/test", {"colour": 1}, format="json").status_code == 400
    assert api.post("/api/v1/policy/test", {}, format="json").status_code == 403
    assert api.get("/api/v1/policy/versions").status_code == 403


def test_put_dry_run_reports_examples_and_the_gate_refuses_a_regression(admin_api, provider):
    current = small_policy(provider)
    policy.import_policy(current)
    version = PolicyVersion.current()
    draft = with_term(current, "harbour")
    answer = admin_api.put("/api/v1/policy?dry_run=true", draft, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["dry_run"] is True and body["changed"] == ["term_lists:Brand words"]
    assert body["examples"]["regressions"] == ["plain-news-allowed"]
    assert body["replay"]["replayed"] == "fewer than 5" and body["replay"]["withheld"] is True  # no task retained
    refused = admin_api.put("/api/v1/policy", draft, format="json")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "examples_regressed" and error["fields"]["regressions"] == ["plain-news-allowed"]
    assert PolicyVersion.current() == version
    applied = admin_api.put("/api/v1/policy?allow_regressions=true", draft, format="json")
    assert applied.status_code == 200 and applied.json()["regressions_accepted"] == ["plain-news-allowed"]
    event = GovernanceEvent.objects.get(decision="released")
    assert event.actor == "consumer:release-admin" and event.detail["regressions_accepted"] == 1
    assert admin_api.put("/api/v1/policy?dry_run=maybe", draft, format="json").status_code == 400
    assert admin_api.put("/api/v1/policy?replay_judges=null", draft, format="json").status_code == 400
    assert admin_api.put("/api/v1/policy?allow_regressions=true&allow_regressions=true", draft,
                         format="json").status_code == 400


class VersionsOverTheAPI(TestCase):
    """Revisions are written when a change commits: this runs each request in its own transaction."""

    def setUp(self):
        from governance.models import Consumer, Provider

        Provider.objects.create(name="local-test", route="openai", api_base="http://127.0.0.1:9/v1",
                                trust_zone="local")
        consumer = Consumer(name="release-admin", is_admin=True)
        token = consumer.issue_token()
        consumer.save()
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def test_every_change_is_a_version_with_its_document(self):
        from governance.models import Provider

        document = small_policy(Provider.objects.get())
        with self.captureOnCommitCallbacks(execute=True):
            assert self.client.put("/api/v1/policy", document, format="json").status_code == 200
        first = PolicyVersion.current()
        with self.captureOnCommitCallbacks(execute=True):
            assert self.client.put("/api/v1/policy", with_term(document, "Skonto"), format="json").status_code == 200
        second = PolicyVersion.current()
        assert second > first
        listed = self.client.get("/api/v1/policy/versions").json()["versions"]
        assert [v["version"] for v in listed][:2] == [second, first]
        assert listed[0]["actor"] == "consumer:release-admin" and listed[0]["source"] == "api"
        assert listed[0]["summary"]["changed"] == ["term_lists:Brand words"]
        old = self.client.get(f"/api/v1/policy?version={first}")
        assert old.status_code == 200 and old["X-Gavel-Policy-Version"] == str(first)
        assert "Skonto" not in old.json()["term_lists"][0]["forbidden"]
        assert "Skonto" in self.client.get(f"/api/v1/policy?version={second}").json()["term_lists"][0]["forbidden"]
        assert self.client.get("/api/v1/policy?version=999999").status_code == 404
        assert self.client.get("/api/v1/policy?version=x").status_code == 400
        assert PolicyRevision.objects.count() >= 2


def test_numbers_past_a_database_column_are_no_server_error(admin_api, provider):
    """The schema fuzz found `replay` and `version` past bigint answered 500 on PostgreSQL."""
    huge = 9202692917271659317470326319929551799
    response = admin_api.get(f"/api/v1/policy?version={huge}")
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_version"
    document = admin_api.get("/api/v1/policy").json()
    response = admin_api.put(f"/api/v1/policy?dry_run=true&replay={huge}", document, format="json")
    assert response.status_code == 200, response.content
