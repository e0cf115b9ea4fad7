"""A draft's report and its judges: the draft's own choice (the page's button), a one-off override over the API
and the command, the judged rule lines named when judges were skipped, and the cost cap (judges asked over
real HTTP on the test provider server)."""
import json
from io import StringIO

import pytest
from django.contrib.admin.models import LogEntry
from django.core.cache import caches
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from governance import policy
from governance.models import Task
from governance.policy import proposals
from governance.policy.proposals_report import draft_report
from tests.drafts.helpers import person
from tests.drafts.test_api import client_for as api_client_for
from tests.judging.conftest import TEXT, judge_requests, set_rules, verdict
from tests.judging.conftest import judge, provider_key, snippets  # noqa: F401 -- fixtures

pytestmark = pytest.mark.django_db

# Each judge call costs 0.20 at the test provider's price (1 per million input tokens).
COSTLY = {"usage": {"prompt_tokens": 200_000, "completion_tokens": 0}}


@pytest.fixture
def judged(configuration, judge, snippets, provider_server):
    set_rules(configuration, "report", judges=[judge.identifier])
    provider_server.set_default({**verdict(), **COSTLY})
    now = timezone.now()
    Task.objects.bulk_create([Task(configuration="newsroom", status="ready", outcome="allowed",
                                   answer=f"{TEXT} Ausgabe {i}.", created=now - timezone.timedelta(minutes=i))
                              for i in range(4)])
    root = person("root", superuser=True)
    draft = proposals.open_draft_for(root, title="Tone")
    tone = next(s for s in policy.export_policy()["snippets"] if s["identifier"] == "tone")
    proposals.record_change(draft, "snippets", "tone", {**tone, "body": "Address the reader formally.\n\n"
                                                                        "Never promise a date."})
    return draft, root


def page(client, draft, **headers) -> str:
    response = client.get(f"/admin/governance/policydraft/{draft.pk}/change/", **headers)
    assert response.status_code == 200
    return response.content.decode()


def test_judges_off_on_the_draft_names_the_judged_lines_and_one_report_may_turn_them_on(
        judged, provider_server, make_consumer):
    draft, root = judged
    client = Client()
    client.force_login(root)
    assert client.post(f"/admin/governance/policydraft/{draft.pk}/change/", {"replay_judges": "0"}).status_code == 302
    draft.refresh_from_db()
    assert draft.replay_judges is False
    assert LogEntry.objects.filter(object_id=str(draft.pk)).count() == 1  # logged as the admin logs changes
    report = draft_report(draft, replay_tasks=10)
    assert report["replay"]["with_judges"] is False and report["judges"]["cost_cap"] is None
    assert report["replay"]["without_judges"] == (
        "judges were not run: 1 judged rule line changes, so hints from judges are not compared")
    assert judge_requests(provider_server) == []
    html = page(client, draft)
    assert "Judges were not run: 1 judged rule line changes" in html and 'id="draft-judges-off"' in html
    assert "Replay with judges (within the cost cap)" in html
    # One report over the API or the command may run them anyway; the draft keeps its choice.
    admin = api_client_for(make_consumer, "release-manager")
    off = admin.get(f"/api/v1/policy/drafts/{draft.pk}?judges=0").json()
    assert off["replay"]["with_judges"] is False and judge_requests(provider_server) == []
    on = admin.get(f"/api/v1/policy/drafts/{draft.pk}?judges=1").json()
    assert on["replay"]["with_judges"] is True and on["replay"]["without_judges"] is None
    assert len(judge_requests(provider_server)) == 4 and on["judges"]["calls"] == 4
    out = StringIO()
    call_command("policy_draft", str(draft.pk), "--format", "json", "--replay-judges", stdout=out)
    assert json.loads(out.getvalue())["replay"]["with_judges"] is True
    draft.refresh_from_db()
    assert draft.replay_judges is False
    # Switched on again, the command's flag turns them off for one report.
    client.post(f"/admin/governance/policydraft/{draft.pk}/change/", {"replay_judges": "1"})
    out = StringIO()
    call_command("policy_draft", str(draft.pk), "--no-replay-judges", stdout=out)
    assert "judges were not run: 1 judged rule line changes" in out.getvalue()
    assert admin.get(f"/api/v1/policy/drafts/{draft.pk}?judges=sometimes").status_code == 400


def test_judges_stop_before_the_cost_cap_and_the_report_says_how_many_texts_were_judged(
        judged, provider_server, make_consumer):
    draft, root = judged
    report = draft_report(draft, replay_tasks=10)
    judges = report["judges"]
    # 0.50 for each policy: two texts at 0.20 each, the third would pass it.
    assert judges["cost_cap"] == "1.00" and judges["texts_judged"] == 2 and judges["stopped_at_cap"] is True
    assert judges["sentence"] == (
        "the cost cap of 1.00 (0.50 for each policy's replay) was reached: 2 of 4 texts were judged")
    assert float(judges["cost"]) <= 1.0 and len(judge_requests(provider_server)) == 4
    # Each report asks afresh here (a kept verdict costs nothing, so the cap would not be reached).
    caches["verdicts"].clear()
    client = Client()
    client.force_login(root)
    assert "The cost cap of 1.00 (0.50 for each policy&#x27;s replay) was reached: 2 of 4 texts were judged" in page(
        client, draft)
    caches["verdicts"].clear()
    assert "Die Kostengrenze von 1.00 (0.50 je Wiederholung einer Richtlinie) ist erreicht: 2 von 4 Texten wurden " \
           "geprüft" in page(
        client, draft, HTTP_ACCEPT_LANGUAGE="de")
    caches["verdicts"].clear()
    admin = api_client_for(make_consumer, "release-manager")
    capped = admin.get(f"/api/v1/policy/drafts/{draft.pk}?cost_cap=0.5&replay=10").json()["judges"]
    assert capped["cost_cap"] == "0.50" and capped["texts_judged"] == 1
    caches["verdicts"].clear()
    wide = admin.get(f"/api/v1/policy/drafts/{draft.pk}?cost_cap=5&replay=10").json()["judges"]
    assert wide["texts_judged"] == 4 and wide["stopped_at_cap"] is False and wide["sentence"] is None
