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
    # In words (not the stored code and facts), with the code beside them for a program.
    assert not body["schedule_failure"].startswith("{") and body["schedule_failure_code"] == "examples_regressed"
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


# --- 7. the worker keeps every failure on its draft and goes on; the failure in the reader's language ----


def test_an_unexpected_error_is_kept_on_its_draft_in_plain_words_and_the_next_draft_still_publishes(
        client, provider, monkeypatch, caplog):
    live_policy(provider)
    root = person("root", superuser=True)
    first = drafted(person("anna"), forbidden=["Rabatt*", "Skonto"], title="first")
    second = drafted(person("otto"), forbidden=["Rabatt*", "Skonto"], title="second")
    for draft in (first, second):
        proposals.schedule_publish(draft, root, timezone.now() - timedelta(minutes=1))
    real = proposals._publish

    def failing(draft, *args, **kwargs):
        if draft.pk == first.pk:
            raise RuntimeError("psycopg.OperationalError: server closed the connection at 10.0.0.7")
        return real(draft, *args, **kwargs)

    monkeypatch.setattr(proposals, "_publish", failing)
    with caplog.at_level("ERROR", logger="gavel.policy"):
        results = proposals.publish_due()
    assert results[0] == {"draft": first.pk, "refused": "unexpected"} and "published" in results[1]
    assert any(str(first.pk) in r.getMessage() and "10.0.0.7" in r.exc_text for r in caplog.records if r.exc_text)
    first.refresh_from_db()
    assert first.publish_at is None and first.schedule_failed_at is not None
    assert "10.0.0.7" not in first.schedule_failure and "psycopg" not in first.schedule_failure
    event = GovernanceEvent.objects.get(detail__event="draft.publish_refused", detail__draft=first.pk)
    assert event.detail["reason"] == "unexpected" and event.actor == "user:root"
    client.force_login(root)
    told = [m for m in shown_messages(client.get(reverse("admin:index"))) if "not published at its time" in m]
    assert told and "unexpected error" in told[0] and "10.0.0.7" not in told[0]
    page = client.get(page_of(first)).content.decode()
    assert "Publishing failed on an unexpected error" in page and "10.0.0.7" not in page


def test_a_draft_published_meanwhile_is_kept_as_refused_and_the_worker_goes_on(provider, monkeypatch):
    live_policy(provider)
    root = person("root", superuser=True)
    first = drafted(person("anna"), forbidden=["Rabatt*", "Skonto"], title="first")
    second = drafted(person("otto"), forbidden=["Rabatt*", "Skonto"], title="second")
    for draft in (first, second):
        proposals.schedule_publish(draft, root, timezone.now() - timedelta(minutes=1))
    real = proposals._publish

    def raced(draft, *args, **kwargs):
        if draft.pk == first.pk:
            raise proposals.NotPublishable("This cannot be done with a draft that is published.")
        return real(draft, *args, **kwargs)

    monkeypatch.setattr(proposals, "_publish", raced)
    results = proposals.publish_due()
    assert results[0] == {"draft": first.pk, "refused": "draft_status"} and "published" in results[1]
    first.refresh_from_db()
    assert first.schedule_failed_at is not None and first.schedule_failure


def test_a_refused_scheduled_publish_reads_in_the_readers_language_and_an_old_row_as_stored(client, provider):
    draft, _anna, root = scheduled_regression(provider)
    proposals.publish_due()
    german = type(client)(headers={"accept-language": "de"})
    german.force_login(root)
    told = [m for m in shown_messages(german.get(reverse("admin:index"))) if "plain-news-allowed" in m]
    assert told and "scheitern" in told[0]
    page = german.get(page_of(draft)).content.decode()
    box = page[page.index('id="draft-schedule-failure"'):]
    box = box[:box.index("</div>")]
    assert "bestandene(s) Beispiel(e) scheitern: plain-news-allowed" in box and "passing example" not in box
    client.force_login(root)
    assert "passing example(s) fail: plain-news-allowed" in client.get(page_of(draft)).content.decode()
    PolicyDraft.objects.filter(pk=draft.pk).update(schedule_failure="Ein alter Grund, wie er gespeichert wurde.")
    assert "Ein alter Grund, wie er gespeichert wurde." in client.get(page_of(draft)).content.decode()


# --- 8. notices: the newest of many, the time waiting, few queries, a withdrawn approval ------------


def test_of_many_events_the_newest_are_told_in_time_order(provider):
    live_policy(provider)
    pia = person("pia", publisher=True)
    oldest = PolicyDraft.objects.create(title="Oldest", status="submitted", author_label="user:anna")
    filler = PolicyDraft.objects.create(title="Filler", status="open", author_label="user:anna")  # no news
    newest = PolicyDraft.objects.create(title="Newest", status="submitted", author_label="user:anna")
    start = timezone.now() - timedelta(hours=1)
    rows = [(oldest, 0)] + [(filler, i) for i in range(1, notices.MAX_EVENTS)] + [(newest, notices.MAX_EVENTS)]
    GovernanceEvent.objects.bulk_create([GovernanceEvent(
        correlation_id=f"draft-{d.pk}", decision="draft_submitted", check_name="policy", actor="user:anna",
        at=start + timedelta(seconds=i), detail={"event": "draft.submitted", "draft": d.pk}) for d, i in rows])
    told = notices.notices_for(pia, start - timedelta(minutes=1), timezone.now())
    assert [pk for _level, _text, pk in told] == [newest.pk]
    GovernanceEvent.objects.filter(correlation_id=f"draft-{oldest.pk}").update(at=start + timedelta(seconds=500))
    told = notices.notices_for(pia, start - timedelta(minutes=1), timezone.now())
    assert [pk for _level, _text, pk in told] == [newest.pk, oldest.pk]  # oldest first


def test_waiting_counts_from_the_submission_not_the_last_edit(provider):
    live_policy(provider)
    anna, pia = person("anna"), person("pia", publisher=True)
    draft = drafted(anna, forbidden=["Rabatt*", "Skonto"], title="Skonto")
    proposals.submit(draft, anna)
    now = timezone.now()
    GovernanceEvent.objects.filter(decision="draft_submitted").update(at=now - timedelta(days=3))
    PolicyDraft.objects.filter(pk=draft.pk).update(updated_at=now)  # e.g. the report's judges switched
    (row,) = notices.waiting(pia, now)["submitted"]
    assert row["age"].startswith("3") and "day" in row["age"]


def test_the_panel_asks_as_many_queries_for_many_drafts_as_for_one(provider):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    live_policy(provider)
    root = person("root", superuser=True)

    def counted():
        with CaptureQueriesContext(connection) as queries:
            notices.waiting(root)
        return len(queries)

    def one_more(n):
        draft = PolicyDraft.objects.create(title=f"Sent {n}", status="submitted", author=root,
                                           author_label="user:root")
        proposals._event(draft, "submitted", "user:root")
        submitted = PolicyDraft.objects.create(title=f"Waiting {n}", status="submitted", author_label="user:anna")
        proposals._event(submitted, "submitted", "user:anna")
        proposals.send_back(draft, root, f"Comment {n}")

    one_more(0)
    once = counted()
    for n in range(1, 4):
        one_more(n)
    assert counted() == once
    panel = notices.waiting(root)
    assert sorted(r["comment"] for r in panel["sent_back"]) == ["Comment 0", "Comment 1", "Comment 2", "Comment 3"]
    assert len(panel["submitted"]) == 4


@pytest.mark.parametrize("language", ["en", "de"])
def test_a_withdrawn_approval_is_told_to_the_author_and_to_who_scheduled_it(client, provider, language):
    live_policy(provider)
    anna, ben, carl = person("anna"), person("ben", superuser=True), person("carl", superuser=True)
    draft = drafted(anna, forbidden=["Rabatt*", "Skonto"], title="Skonto")
    proposals.schedule_publish(draft, ben, timezone.now() + timedelta(hours=1))
    proposals.record_change(draft, "term_lists", "Brand words",
                            term_list(None, forbidden=["Rabatt*", "Skonto"], mode="report"), actor=carl)
    expected = {"en": {anna: "Your draft “Skonto” was changed by user:carl after it was approved",
                       ben: "The draft “Skonto” you scheduled was changed by user:carl"},
                "de": {anna: "Ihr Entwurf „Skonto“ wurde nach der Freigabe von user:carl geändert",
                       ben: "Der Entwurf „Skonto“, den Sie geplant haben, wurde nach Ihrer Freigabe von user:carl"}}
    reader = type(client)(headers={"accept-language": language})
    for user, text in expected[language].items():
        reader.force_login(user)
        told = shown_messages(reader.get(reverse("admin:index")))
        assert [m for m in told if text in m], told
    reader.force_login(carl)  # their own act is no news
    assert not [m for m in shown_messages(reader.get(reverse("admin:index"))) if "Skonto" in m]
