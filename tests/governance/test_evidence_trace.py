"""A task traced through the governance log (SPEC §13.1): searching the log by a task's id, short or full, finds
its events; the task's admin and review pages link its events and evidence; an event's page links its task."""
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from governance.evidence import trace
from governance.models import EvidenceRecord, GovernanceEvent, Task
from governance.work import editors
from tests.governance.review_fixtures import editor, reviewer  # noqa: F401  (fixtures)
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401  (fixtures)
from tests.governance.test_evidence import LONG
from tests.governance.test_tasks_api import eager, submit, task_body  # noqa: F401  (fixtures)


@pytest.fixture
def accepted(api, submit, eager, provider_server):
    """A task generated with a hint (its screening writes events), accepted by an editor; other events beside it."""
    from termlists.models import TermList
    from governance.models import Configuration

    TermList.objects.create(name="Watch", forbidden="agenda", mode="report").configurations.add(
        Configuration.objects.get(identifier="newsroom"))
    provider_server.set_default({"text": LONG})
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    other = Task.objects.get(pk=submit(task_body()).json()["id"])
    editors.accept(task, user=get_user_model().objects.create_user("erika"))
    task.refresh_from_db()
    assert GovernanceEvent.objects.filter(correlation_id=task.correlation_id, decision="reported").exists()
    return task, other


def searched(client, term):
    response = client.get(reverse("admin:governance_governanceevent_changelist"), {"q": term})
    assert response.status_code == 200
    return {event.pk for event in response.context["cl"].result_list}


@pytest.mark.parametrize("form", ["full", "short", "hex", "upper"])
def test_searching_the_log_by_task_id_finds_its_events(superuser_client, accepted, form):
    task, other = accepted
    term = {"full": str(task.pk), "short": str(task.pk)[:8], "hex": task.pk.hex, "upper": str(task.pk).upper()}[form]
    found = searched(superuser_client, term)
    mine = set(GovernanceEvent.objects.filter(correlation_id=task.correlation_id).values_list("pk", flat=True))
    review = set(GovernanceEvent.objects.filter(check_name="review", detail__task=str(task.pk))
                 .values_list("pk", flat=True))
    theirs = set(GovernanceEvent.objects.filter(correlation_id=other.correlation_id).values_list("pk", flat=True))
    assert mine and review and theirs
    assert mine | review <= found and not theirs & found


def test_a_term_that_is_no_task_id_searches_as_before(superuser_client, accepted):
    assert trace.task_id_prefix("newsroom") is None and trace.task_id_prefix("abc") is None
    assert trace.event_search("0000000000") is None  # hex, but no task begins with it
    assert searched(superuser_client, "deadbeefcafe") == set()


def test_the_task_admin_page_links_its_events_and_evidence(superuser_client, accepted):
    task, _other = accepted
    html = superuser_client.get(reverse("admin:governance_task_change", args=[task.pk])).content.decode()
    links = trace.admin_links(task)
    assert links["evidence"] == 2 and links["events"] >= 2
    assert links["events_url"].replace("&", "&amp;") in html and links["evidence_url"] in html
    listed = superuser_client.get(links["evidence_url"])
    assert {r.task_id for r in listed.context["cl"].result_list} == {task.pk}


def test_an_event_and_an_evidence_record_link_back_to_the_task(superuser_client, accepted):
    task, _other = accepted
    task_url = reverse("admin:governance_task_change", args=[task.pk])
    for event in GovernanceEvent.objects.filter(trace.events_of([task])):
        page = superuser_client.get(reverse("admin:governance_governanceevent_change", args=[event.pk]))
        assert task_url in page.content.decode(), event.decision
    record = EvidenceRecord.objects.filter(task=task, review_decision="accepted").get()
    page = superuser_client.get(reverse("admin:governance_evidencerecord_change", args=[record.pk])).content.decode()
    assert task_url in page and "erika" in page


def test_the_evidence_admin_is_read_only(superuser_client, accepted):
    record = EvidenceRecord.objects.first()
    assert superuser_client.get(reverse("admin:governance_evidencerecord_add")).status_code == 403
    delete = reverse("admin:governance_evidencerecord_delete", args=[record.pk])
    assert superuser_client.post(delete, {"post": "yes"}).status_code == 403
    assert EvidenceRecord.objects.filter(pk=record.pk).exists()


def test_the_review_page_shows_the_tasks_evidence(editor, accepted):
    task, _other = accepted
    html = editor.get(reverse("review:task", args=[task.pk])).content.decode()
    assert "accepted by erika" in html
    for record in EvidenceRecord.objects.filter(task=task):
        assert record.text_hash[:12] in html
    # The editor is not staff: no links into the admin.
    assert reverse("admin:governance_governanceevent_changelist") not in html


def test_an_accepted_edits_own_events_are_found_by_the_task_id(superuser_client, api, submit, eager,
                                                                provider_server):
    from governance.models import Configuration
    from termlists.models import TermList

    TermList.objects.create(name="Watch", forbidden="agenda", mode="report").configurations.add(
        Configuration.objects.get(identifier="newsroom"))
    provider_server.set_default({"text": LONG.replace("agenda", "plan")})  # the generation has no hint
    task = Task.objects.get(pk=submit(task_body()).json()["id"])
    editors.accept(task, user=get_user_model().objects.create_user("erika"), edited_text=LONG)  # the edit has one
    review = GovernanceEvent.objects.get(check_name="review", detail__task=str(task.pk))
    edit_events = GovernanceEvent.objects.filter(correlation_id=review.detail["screening"])
    assert review.detail["screening"] != task.correlation_id
    assert [e.decision for e in edit_events] == ["reported"]
    assert {e.pk for e in edit_events} | {review.pk} <= searched(superuser_client, str(task.pk)[:8])
