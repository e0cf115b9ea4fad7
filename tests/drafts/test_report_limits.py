"""What a draft's replay cannot see, named by its report: blocked tasks (counted from the governance log),
generation settings, conflicts (tested with the draft's side) and examples the draft makes invalid."""
import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from governance import policy
from governance.models import GovernanceEvent, PolicyDraft, Task
from governance.policy import proposals, release
from governance.policy.proposals_report import draft_report
from tests.drafts.helpers import live_policy, person, term_list
from tests.drafts.test_api import client_for as api_client_for
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.django_db

DISCOUNT = "Jetzt mit Rabattaktion für alle. " + NEWS
PROMISE = "Der Erfolg ist garantiert. " + NEWS


def blocked_tasks(api, texts: list[str], capture) -> list[Task]:
    """Tasks the live policy blocked: each text screened for real (its events in the governance log), the
    task kept as a blocked one is, without its text."""
    tasks = []
    now = timezone.now()
    for i, text in enumerate(texts):
        with capture(execute=True):
            answer = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": text}, format="json")
        assert answer.status_code == 200 and answer.json()["outcome"] == "blocked", answer.content
        tasks.append(Task.objects.create(configuration="newsroom", status="blocked", outcome="blocked", answer="",
                                         refusal=refusal_of(answer.json()),
                                         correlation_id=answer.json()["id"], created=now - timedelta(minutes=i + 1)))
    return tasks


def refusal_of(body: dict) -> dict:
    """What a blocked task keeps of its block: the message without the passage."""
    block = body.get("block") or {}
    message = block.get("stored_message") or block.get("message") or ""
    return {"check": block.get("check", "term_list"), "message": message, "stored_message": message}


def with_second_list(provider):
    document = live_policy(provider)
    document["term_lists"].append({"name": "Legal words", "configurations": ["newsroom"], "forbidden": ["garantiert"],
                                   "mode": "block"})
    policy.import_policy(document)
    return document


def report_mode(author) -> PolicyDraft:
    draft = proposals.open_draft_for(author, title="Brand words as hints")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, mode="report"))
    return draft


def test_blocked_tasks_are_counted_from_the_log_and_a_draft_that_lifts_every_block_would_deliver_them(
        provider, api, django_capture_on_commit_callbacks):
    with_second_list(provider)
    lifted = blocked_tasks(api, [DISCOUNT] * 6, django_capture_on_commit_callbacks)
    both = blocked_tasks(api, ["Der Erfolg ist garantiert, Rabattaktion! " + NEWS], django_capture_on_commit_callbacks)
    other = blocked_tasks(api, [PROMISE], django_capture_on_commit_callbacks)
    assert GovernanceEvent.objects.filter(decision="blocked", check_name="term_list").count() == 9
    draft = report_mode(person("editor"))
    report = draft_report(draft, replay_tasks=50)
    json.dumps(report)
    [row] = report["blocked"]["records"]
    assert (row["section"], row["name"]) == ("term_lists", "Brand words")
    # Seven tasks were blocked by the list; one of them also by another list the draft keeps.
    assert (row["blocked"], row["deliver"], row["still_block"], row["unknown"]) == (7, 6, 1, 0)
    assert row["verdict"] == "mixed"
    assert row["sentence"] == "7 tasks were blocked by Brand words; this draft would deliver 6 and still block 1."
    assert set(row["task_ids"]) == {str(t.pk) for t in lifted + both} and str(other[0].pk) not in row["task_ids"]
    assert "governance log" in report["blocked"]["note"]
    # The replay itself saw none of them: they keep no text.
    assert report["replay"]["screened"] == 0


def test_a_draft_that_keeps_the_term_would_still_block_and_a_removed_list_would_deliver(
        provider, api, django_capture_on_commit_callbacks):
    live_policy(provider)
    blocked_tasks(api, [DISCOUNT] * 2, django_capture_on_commit_callbacks)
    author = person("editor")
    draft = proposals.open_draft_for(author)
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    [row] = draft_report(draft, replay_tasks=50)["blocked"]["records"]
    assert row["sentence"] == "2 tasks were blocked by Brand words; this draft would still block them."
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, is_active=False))
    [row] = draft_report(draft, replay_tasks=50)["blocked"]["records"]
    assert row["sentence"] == "2 tasks were blocked by Brand words; this draft would deliver them."
    # A window that holds none of them counts none.
    [row] = draft_report(draft, replay_tasks=0)["blocked"]["records"]
    assert row["blocked"] == 0 and row["sentence"] == "No task in the window was blocked by Brand words."


def test_the_page_names_the_blocked_tasks_with_links_and_the_api_keeps_the_minimum_count(
        provider, api, make_consumer, django_capture_on_commit_callbacks):
    live_policy(provider)
    tasks = blocked_tasks(api, [DISCOUNT] * 3, django_capture_on_commit_callbacks)
    root = person("root", superuser=True)
    draft = report_mode(root)
    client = Client()
    client.force_login(root)
    html = client.get(f"/admin/governance/policydraft/{draft.pk}/change/").content.decode()
    assert "3 tasks were blocked by Brand words; this draft would deliver them." in html
    assert all(f'href="/review/tasks/{t.pk}/"' in html for t in tasks)  # an approver opens each
    german = client.get(f"/admin/governance/policydraft/{draft.pk}/change/", HTTP_ACCEPT_LANGUAGE="de")
    assert "3 Aufgaben wurden von Brand words gestoppt; dieser Entwurf würde sie ausliefern." in german.content.decode()
    # Over the API (readers of counts only): three tasks are fewer than GAVEL_REPORT_MIN_TEXTS, and no id.
    admin = api_client_for(make_consumer, "release-manager")
    body = admin.get(f"/api/v1/policy/drafts/{draft.pk}").json()
    [row] = body["blocked"]["records"]
    assert row["blocked"] == "fewer than 5" and row["deliver"] is None and row["task_ids"] is None
    assert row["sentence"] == "Fewer than 5 tasks were blocked by Brand words." and row["verdict"] is None
    assert not any(str(t.pk) in json.dumps(body) for t in tasks)
    blocked_tasks(api, [DISCOUNT] * 3, django_capture_on_commit_callbacks)
    [row] = admin.get(f"/api/v1/policy/drafts/{draft.pk}").json()["blocked"]["records"]
    # Six, but none still blocked: a part under the minimum (zero too) withholds every part, the verdict and
    # the sentence that would tell them (six delivered, less what is shown of the rest, was an answer).
    assert (row["blocked"], row["deliver"], row["still_block"], row["unknown"]) == (6, None, None, None)
    assert row["verdict"] is None and row["sentence"] == "6 tasks were blocked by Brand words."


def test_generation_changes_are_named_as_untestable(provider, make_consumer):
    live_policy(provider)
    root = person("root", superuser=True)
    draft = proposals.open_draft_for(root)
    newsroom = policy.export_policy()["configurations"][0]
    proposals.record_change(draft, "configurations", "newsroom", {**newsroom, "temperature": 0.9,
                                                                  "system_prompt": "Write short."})
    report = draft_report(draft, replay_tasks=0)
    assert report["generation"]["fields"] == [{"configuration": "newsroom", "field": "system_prompt"},
                                              {"configuration": "newsroom", "field": "temperature"}]
    assert report["generation"]["sentence"] == (
        "This draft changes how texts are generated (newsroom.system_prompt, newsroom.temperature); the replay "
        "screens stored texts, so it cannot test these changes.")
    client = Client()
    client.force_login(root)
    html = client.get(f"/admin/governance/policydraft/{draft.pk}/change/").content.decode()
    assert 'id="draft-notice-generation-1"' in html and "cannot test these changes" in html
    over_api = api_client_for(make_consumer, "release-manager").get(f"/api/v1/policy/drafts/{draft.pk}").json()
    assert over_api["generation"] == report["generation"]
    # A draft that changes no generation setting says nothing about it.
    assert draft_report(report_mode(person("other")), replay_tasks=0)["generation"] is None


def test_a_conflict_is_tested_with_the_drafts_side_and_both_sides_are_named(provider):
    document = live_policy(provider)
    Task.objects.create(configuration="newsroom", status="ready", outcome="allowed", answer="Heute mit Skonto. " + NEWS)
    draft = proposals.open_draft_for(person("editor"))
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    document["term_lists"][0]["forbidden"] = ["Rabatt*", "Gratis"]
    release.apply_release(document, actor="user:admin")
    report = draft_report(draft, replay_tasks=10)
    assert [c["name"] for c in report["conflicts"]] == ["Brand words"]
    [side] = report["conflict_side"]
    assert side["tested"] == "draft" and side["sentence"].startswith(
        "term_lists:Brand words: tested with this draft's side; the live side is the record as version")
    # Tested with the draft's side: the text with Skonto would now be blocked (without it, nothing changed).
    [changed] = report["replay"]["changed"]
    assert (changed["before"], changed["after"]) == ("allowed", "blocked")
    assert changed["rules"]["new"] == ["term_list:Brand words:Skonto"]


def test_an_example_the_draft_makes_invalid_is_named_and_left_out_and_the_rest_is_reported(
        provider, make_consumer):
    live_policy(provider)
    Task.objects.create(configuration="newsroom", status="ready", outcome="allowed", answer="Heute mit Skonto. " + NEWS)
    root = person("root", superuser=True)
    draft = proposals.open_draft_for(root)
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Skonto"]))
    report = draft_report(draft, replay_tasks=10)
    assert report["errors"] == {}
    assert report["left_out"] == [{"example": "discount-word-blocked", "errors": {
        'examples["discount-word-blocked"].expect.findings[0].term': ["Term list Brand words has no term Rabatt*."]}}]
    # The valid example is still tested, and the replay ran; the left-out one is no regression.
    assert report["test"]["changed"] == [{"example": "discount-word-blocked", "live": "passed", "draft": "left_out"}]
    assert report["test"]["regressions"] == []
    assert [c["rules"]["new"] for c in report["replay"]["changed"]] == [["term_list:Brand words:Skonto"]]
    client = Client()
    client.force_login(root)
    html = client.get(f"/admin/governance/policydraft/{draft.pk}/change/").content.decode()
    assert "Example discount-word-blocked is left out: the draft makes it invalid." in html
    assert "examples[&quot;discount-word-blocked&quot;].expect.findings[0].term" in html
    assert 'id="draft-errors"' not in html
    over_api = api_client_for(make_consumer, "release-manager").get(f"/api/v1/policy/drafts/{draft.pk}").json()
    assert over_api["left_out"] == report["left_out"] and over_api["test"]["regressions"] == []


def test_a_draft_invalid_beyond_its_examples_still_names_the_examples_by_name(provider):
    live_policy(provider)
    draft = proposals.open_draft_for(person("editor"))
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Skonto"]))
    proposals.record_change(draft, "configurations", "newsroom", None)  # the list and the examples name it
    report = draft_report(draft, replay_tasks=0)
    assert report["test"] is None and report["replay"] is None and report["errors"]
    assert not any(path.startswith("examples[") and not path.startswith('examples["') for path in report["errors"])
