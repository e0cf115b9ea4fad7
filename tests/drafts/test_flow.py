"""The author's and the approver's day with drafts: a draft that cannot publish is not submitted, a refused
scheduled publish is kept and told, notices show once on the next admin page, times name their zone."""
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import pytest
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from governance import policy
from governance.admin import notices
from governance.models import GovernanceEvent, PolicyDraft
from governance.policy import proposals
from tests.drafts.helpers import live_policy, person, term_list

pytestmark = pytest.mark.django_db

BAD_EXAMPLE = {"name": "bad-example", "configuration": "nowhere", "text": "Hallo.", "expect": {"outcome": "allowed"}}


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def api_for(make_consumer, name="release-manager"):
    _consumer, token = make_consumer(name, is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def page_of(draft):
    return reverse("admin:governance_policydraft_change", args=[draft.pk])


def drafted(author, *, forbidden=None, example=None, title="Change"):
    draft = proposals.open_draft_for(author, title=title)
    if forbidden is not None:
        proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=forbidden))
    if example is not None:
        proposals.record_change(draft, "examples", example["name"], example)
    return draft


def shown_messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


# --- 1. submitting a draft that cannot publish ------------------------------------------------


def test_submit_refuses_a_conflict_409_and_an_invalid_policy_422_naming_the_records(make_consumer, provider):
    document = live_policy(provider)
    api = api_for(make_consumer)
    anna = person("anna")
    conflicted = drafted(anna, forbidden=["Rabatt*", "Skonto"], title="Skonto")
    document["term_lists"][0]["forbidden"].append("Gratis")
    policy.import_policy(document)  # the same record changes live meanwhile
    refused = api.post(f"/api/v1/policy/drafts/{conflicted.pk}/submit")
    assert refused.status_code == 409, refused.content
    error = refused.json()["error"]
    assert error["code"] == "draft_conflicts" and error["fields"]["conflicts"] == ["term_lists:Brand words"]
    invalid = drafted(person("ben"), example=BAD_EXAMPLE, title="bad")
    refused = api.post(f"/api/v1/policy/drafts/{invalid.pk}/submit")
    assert refused.status_code == 422, refused.content
    error = refused.json()["error"]
    assert error["code"] == "invalid_policy"
    assert error["fields"] == {'examples["bad-example"].configuration': ["Unknown configuration: nowhere."]}
    assert 'examples["bad-example"].configuration' in error["message"]
    for draft in (conflicted, invalid):
        draft.refresh_from_db()
        assert draft.status == "open"  # nothing was submitted
    # Publishing the invalid draft is 422 as well (it was 400), with the same paths.
    published = api.post(f"/api/v1/policy/drafts/{invalid.pk}/publish",
                         {"revision": proposals.revision_of(invalid)}, format="json")
    assert published.status_code == 422, published.content
    assert published.json()["error"]["fields"] == {'examples["bad-example"].configuration':
                                                   ["Unknown configuration: nowhere."]}


def test_a_regression_does_not_stop_a_submission_the_approver_decides(make_consumer, provider):
    live_policy(provider)
    api = api_for(make_consumer)
    draft = drafted(person("anna"), forbidden=["Rabatt*", "harbour"])
    submitted = api.post(f"/api/v1/policy/drafts/{draft.pk}/submit")
    assert submitted.status_code == 200 and submitted.json()["status"] == "submitted"
    report = api.get(f"/api/v1/policy/drafts/{draft.pk}?replay=0").json()
    assert report["test"]["regressions"] == ["plain-news-allowed"]  # counted, for the approver


def test_the_admin_shows_the_submit_refusal_on_the_draft_page(client, provider):
    live_policy(provider)
    anna = person("anna")
    anna.user_permissions.add(*Permission.objects.filter(codename__in=["view_policydraft", "change_policydraft"]))
    draft = drafted(anna, example=BAD_EXAMPLE)
    client.force_login(anna)
    answer = client.post(page_of(draft), {"submit": "1"}, follow=True)
    assert answer.status_code == 200
    assert any('examples["bad-example"].configuration' in m for m in shown_messages(answer))
    draft.refresh_from_db()
    assert draft.status == "open"


# --- 2. a scheduled publish the gate refuses ----------------------------------------------------


def scheduled_regression(provider):
    live_policy(provider)
    anna, root = person("anna"), person("root", superuser=True)
    draft = drafted(anna, forbidden=["Rabatt*", "harbour"], title="harbour")
    proposals.submit(draft, anna)
    proposals.schedule_publish(draft, root, timezone.now() - timedelta(minutes=1))
    return draft, anna, root


def test_a_refused_scheduled_publish_is_kept_shown_and_cleared_when_scheduled_again(
        client, make_consumer, provider):
    draft, _anna, root = scheduled_regression(provider)
    assert proposals.publish_due() == [{"draft": draft.pk, "refused": "examples_regressed"}]
    draft.refresh_from_db()
    assert "plain-news-allowed" in draft.schedule_failure and draft.schedule_failed_at is not None
    assert draft.publish_at is None and draft.status == "submitted"
    body = api_for(make_consumer).get(f"/api/v1/policy/drafts/{draft.pk}?replay=0").json()["draft"]
    assert "plain-news-allowed" in body["schedule_failure"] and body["schedule_failed_at"]
    client.force_login(root)
    page = client.get(page_of(draft)).content.decode()
    assert 'id="draft-schedule-failure"' in page and "plain-news-allowed" in page
    assert page.index('id="draft-schedule-failure"') < page.index('id="draft-examples"')  # on top
    proposals.schedule_publish(draft, root, timezone.now() + timedelta(hours=1))
    draft.refresh_from_db()
    assert draft.schedule_failure == "" and draft.schedule_failed_at is None
    assert 'id="draft-schedule-failure"' not in client.get(page_of(draft)).content.decode()


# --- 3. notices -----------------------------------------------------------------------------------


def test_notices_show_once_to_the_right_people_and_never_on_json_paths(client, provider):
    live_policy(provider)
    anna, pia, root = person("anna"), person("pia", publisher=True), person("root", superuser=True)
    draft = drafted(anna, forbidden=["Rabatt*", "Skonto"], title="Skonto")
    for user in (anna, pia, root):  # each has looked at the admin before the draft was submitted
        client.force_login(user)
        client.get(reverse("admin:index"))
    proposals.submit(draft, anna)

    client.force_login(pia)
    assert client.get("/api/v1/policy/drafts").status_code in (401, 403)  # a JSON path: no notice taken there
    first = shown_messages(client.get(reverse("admin:index")))
    assert [m for m in first if "Skonto" in m and "submitted by user:anna" in m]
    assert not [m for m in shown_messages(client.get(reverse("admin:index"))) if "Skonto" in m]  # once
    client.force_login(anna)
    assert not [m for m in shown_messages(client.get(reverse("admin:index"))) if "Skonto" in m]  # her own act

    proposals.send_back(draft, root, "Say why Skonto is forbidden.")
    client.force_login(anna)
    assert [m for m in shown_messages(client.get(reverse("admin:index"))) if "sent back by user:root" in m]
    proposals.submit(draft, anna)
    proposals.publish(draft, root)
    client.force_login(anna)
    published = shown_messages(client.get(reverse("admin:index")))
    assert [m for m in published if "was published as policy version" in m]


def test_the_scheduler_is_told_of_a_refused_scheduled_publish(client, provider):
    draft, _anna, root = scheduled_regression(provider)
    proposals.publish_due()
    client.force_login(root)
    told = [m for m in shown_messages(client.get(reverse("admin:index"))) if "not published at its time" in m]
    assert told and "plain-news-allowed" in told[0]


def test_a_missing_marker_means_the_last_day_only(provider):
    live_policy(provider)
    anna, pia = person("anna"), person("pia", publisher=True)
    draft = drafted(anna, forbidden=["Rabatt*", "Skonto"])
    proposals.submit(draft, anna)
    now = timezone.now()
    assert len(notices.notices_for(pia, now - notices.FIRST_LOOK, now)) == 1
    GovernanceEvent.objects.filter(decision="draft_submitted").update(at=now - timedelta(days=2))
    assert cache.get(notices.MARKER_KEY.format(pk=pia.pk)) is None
    assert notices.notices_for(pia, notices._marker(pia, now), now) == []


def test_the_admin_home_shows_drafts_waiting_for_publishers_and_sent_back_ones_for_authors(client, provider):
    live_policy(provider)
    anna, pia, root = person("anna"), person("pia", publisher=True), person("root", superuser=True)
    waiting = drafted(anna, forbidden=["Rabatt*", "Skonto"], title="Add Skonto")
    proposals.submit(waiting, anna)
    client.force_login(pia)
    home = client.get(reverse("admin:index")).content.decode()
    panel = home[home.index('id="gavel-drafts-waiting"'):home.index('id="gavel-review-module"')]
    assert "Add Skonto" in panel and "submitted by user:anna" in panel
    client.force_login(person("otto"))  # staff, neither author nor approver: no panel
    assert 'id="gavel-drafts-waiting"' not in client.get(reverse("admin:index")).content.decode()
    proposals.send_back(waiting, root, "Not this week.")
    client.force_login(anna)
    home = client.get(reverse("admin:index")).content.decode()
    assert "sent back to you by user:root" in home and "Not this week." in home


# --- 4 and 6. time zones; author and approver in the history ------------------------------------


@override_settings(TIME_ZONE="Europe/Berlin")
def test_times_on_the_draft_page_name_their_zone_and_the_input_says_where_it_is_read(client, provider):
    live_policy(provider)
    root = person("root", superuser=True)
    draft = drafted(person("anna"), forbidden=["Rabatt*", "Skonto"])
    client.force_login(root)
    answer = client.post(page_of(draft), {"schedule": "1", "publish_at": "2031-01-15T14:00",
                                          "revision": proposals.revision_of(draft)}, follow=True)
    draft.refresh_from_db()
    assert draft.publish_at == datetime(2031, 1, 15, 13, 0, tzinfo=dt_timezone.utc)  # read as Berlin time
    assert any("2031-01-15 14:00 CET" in m for m in shown_messages(answer))
    page = answer.content.decode()
    assert "2031-01-15 14:00 CET" in page and "read in the time zone Europe/Berlin" in page
    assert 'value="2031-01-15T14:00"' in page


def test_the_history_names_author_and_approver(client, provider, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        live_policy(provider)
    anna, root = person("anna"), person("root", superuser=True)
    draft = drafted(anna, forbidden=["Rabatt*", "Skonto"])
    proposals.submit(draft, anna)
    with django_capture_on_commit_callbacks(execute=True):
        version = proposals.publish(draft, root)
    client.force_login(root)
    page = client.get(reverse("gavel_policy_history")).content.decode()
    row = page[page.index(f"<td>{version}</td>"):]
    row = row[:row.index("</tr>")]
    assert '<td class="gavel-author">user:anna</td>' in row and '<td class="gavel-approver">user:root</td>' in row
    draft_page = client.get(page_of(PolicyDraft.objects.get(pk=draft.pk))).content.decode()
    assert "(author user:anna)" in draft_page
    history = draft_page[draft_page.index('id="draft-history"'):]
    assert "submitted" in history and f"published as version {version}" in history and "UTC" in history
