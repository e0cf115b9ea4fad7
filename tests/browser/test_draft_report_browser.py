"""A draft's report names what its replay cannot see, in chromium: blocked tasks counted from the governance
log (English and German), generation changes, and judges switched off on the draft by its button."""
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect
from rest_framework.test import APIClient

from governance import policy
from governance.models import Configuration, Task
from governance.policy import proposals
from snippets.models import Snippet
from tests.drafts.helpers import live_policy, term_list
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots")
DISCOUNT = "Heute gibt es eine Rabattaktion für alle Kunden der ACME. " + NEWS


def blocked_tasks(make_consumer, count: int) -> list[Task]:
    """Tasks the live policy stopped: screened for real (their block events in the log), kept without text."""
    _consumer, token = make_consumer("newsroom-app", [Configuration.objects.get(identifier="newsroom")])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    tasks = []
    for _ in range(count):
        body = client.post("/api/v1/screenings", {"configuration": "newsroom", "text": DISCOUNT}, format="json").json()
        assert body["outcome"] == "blocked"
        tasks.append(Task.objects.create(configuration="newsroom", status="blocked", outcome="blocked", answer="",
                                         refusal=refusal_of(body),
                                         correlation_id=body["id"]))
    Task.objects.create(configuration="newsroom", status="ready", outcome="allowed", answer=NEWS)
    return tasks


def refusal_of(body: dict) -> dict:
    """What a blocked task keeps of its block: the message without the passage."""
    block = body.get("block") or {}
    message = block.get("stored_message") or block.get("message") or ""
    return {"check": block.get("check", "term_list"), "message": message, "stored_message": message}


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_the_draft_page_names_blocked_tasks_generation_and_judges_off(page, log_in, live_server, provider,
                                                                       make_consumer):
    live_policy(provider)
    tasks = blocked_tasks(make_consumer, 6)
    root = get_user_model().objects.create_user("root", is_staff=True, is_superuser=True)
    draft = proposals.open_draft_for(root, title="Brand words as hints")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, mode="report"))
    log_in(root)
    page.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    notice = page.locator("#draft-blind-spots .gavel-blind-spot").first
    expect(notice).to_contain_text("6 tasks were blocked by Brand words; this draft would deliver them.")
    expect(notice.locator("a")).to_have_count(6)
    expect(page.locator("#draft-replay-summary")).to_contain_text("what the replay cannot see is named above")
    shoot(page, "report-blocked.png")
    page.select_option("#gavel-language-choice", "de")
    expect(page.locator("#draft-blind-spots .gavel-blind-spot").first).to_contain_text(
        "6 Aufgaben wurden von Brand words gestoppt; dieser Entwurf würde sie ausliefern.")
    shoot(page, "report-blocked-de.png")
    page.select_option("#gavel-language-choice", "en")
    first = notice.locator("a").first
    target = first.get_attribute("href")
    assert target in {f"/review/tasks/{t.pk}/" for t in tasks}
    first.click()
    expect(page).to_have_url(f"{live_server.url}{target}")
    expect(page.locator("h2#refusal-title")).to_be_visible()

    # A generation change: what the replay cannot test is said so.
    newsroom = policy.export_policy()["configurations"][0]
    proposals.record_change(draft, "configurations", "newsroom", {**newsroom, "temperature": 0.9})
    page.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    expect(page.locator("#draft-blind-spots")).to_contain_text("the replay screens stored texts, so it cannot test")
    shoot(page, "report-generation.png")

    # Judges: switched off on the draft by its button, and a changed judged rule line is named.
    Snippet.objects.create(identifier="tone", name="Tone of voice", tags=["legal"], body="Address the reader formally.")
    tone = next(s for s in policy.export_policy()["snippets"] if s["identifier"] == "tone")
    proposals.record_change(draft, "snippets", "tone", {**tone, "body": "Address the reader formally.\nNo dates."})
    page.goto(f"{live_server.url}/admin/governance/policydraft/{draft.pk}/change/")
    page.locator("#draft-judges-switch").click()
    expect(page.locator(".messagelist")).to_contain_text("no longer runs the judges")
    expect(page.locator("#draft-judges-off")).to_be_visible()
    expect(page.locator("#draft-blind-spots")).to_contain_text(
        "Judges were not run: 1 judged rule line changes, so hints from judges are not compared")
    expect(page.locator("#draft-judges-switch")).to_have_text("Replay with judges (within the cost cap)")
    shoot(page, "report-judges-off.png")
    draft.refresh_from_db()
    assert draft.replay_judges is False
