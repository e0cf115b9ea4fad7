"""The tasks API (SPEC §10, §11.1): every status, every error, a consumer sees only its own tasks.

Celery runs eagerly here (the worker is tested with a real worker in test_task_workers.py);
the queue's commit hook is captured and run, as a real commit would.
"""
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model

from governance.work import editors, queue
from governance.models import Configuration, GovernanceEvent, Task
from termlists.models import TermList
from tests.snippets.conftest import rules  # noqa: F401  (fixture)

LONG = ("The new planning tool finds a free hour for the whole team, books a room that fits and sends the "
        "agenda before the meeting starts, so nobody has to ask twice and every week keeps its shape.")


@pytest.fixture
def eager(settings):
    """Run Celery tasks in-process, whatever CELERY_BROKER_URL says (CI sets Redis)."""
    from governance.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.GAVEL_TASK_RETRY_BASE_SECONDS = 0
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def submit(api, django_capture_on_commit_callbacks):
    """POST /api/v1/tasks and run what the commit would send to the workers."""

    def post(body, client=None, run=True):
        client = client or api
        with django_capture_on_commit_callbacks(execute=run):
            response = client.post("/api/v1/tasks", body, format="json")
        if response.status_code == 202:
            # The 202 was answered before the commit hook ran the task (a real commit runs it
            # after the response too): json() gives the task as it is now.
            after = client.get(f"/api/v1/tasks/{response.data['id']}")
            response.json = after.json
        return response

    return post


def task_body(**extra):
    return {"kind": "queued_task", "configuration": "newsroom", "instruction": "Write the launch text.", **extra}


def get(api, task_id):
    return api.get(f"/api/v1/tasks/{task_id}").json()


# --- statuses ---
def test_a_task_is_queued_with_202_and_only_its_id_is_sent(api, submit, provider_server, monkeypatch):
    sent = []
    monkeypatch.setattr(queue, "enqueue", lambda task_id, countdown=None: sent.append(task_id))
    response = submit(task_body())
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["kind"] == "queued_task" and body["attempts"] == 0
    assert "text" not in body and body["failure"] is None and body["review"] is None
    assert sent == [uuid.UUID(body["id"])]
    assert provider_server.requests == []  # nothing generated at submit


def test_a_clean_answer_becomes_ready(api, submit, eager, provider_server):
    provider_server.set_default({"text": LONG})
    body = submit(task_body()).json()
    assert body["status"] == "ready" and body["outcome"] == "allowed" and body["text"] == LONG
    assert body["attempts"] == 1 and body["completion"]["provider"] == "local-test"
    assert {c["check"] for c in body["checks"]} >= {"secret_redaction", "term_list", "rules_judge"}
    assert get(api, body["id"]) == body
    sent = provider_server.chat_requests[0].json
    assert sent["messages"][-1] == {"role": "user", "content": "Write the launch text."}


def test_hints_are_kept_and_a_block_keeps_no_passage(api, submit, eager, provider_server, configuration):
    TermList.objects.create(name="Watch", forbidden="agenda", mode="report").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    hinted = submit(task_body()).json()
    assert hinted["status"] == "ready" and hinted["outcome"] == "allowed_with_hints"
    assert hinted["hints"][0]["terms"] == ["agenda"] and hinted["hints"][0]["check"] == "term_list"

    TermList.objects.create(name="Never", forbidden="whole team", message="Name the team.").configurations.add(
        configuration)
    blocked = submit(task_body()).json()
    assert blocked["status"] == "blocked" and blocked["outcome"] == "blocked" and "text" not in blocked
    assert blocked["block"]["check"] == "term_list"
    # The stored refusal is the message without the passage (SPEC §9).
    assert blocked["block"]["message"] == blocked["block"]["stored_message"]
    assert "agenda before" not in json.dumps(blocked["block"])


def test_a_provider_that_keeps_failing_fails_the_task_with_an_actionable_reason(api, submit, eager, provider_server,
                                                                                  settings):
    settings.GAVEL_TASK_MAX_ATTEMPTS = 3
    provider_server.set_default({"status": 503})
    body = submit(task_body()).json()
    assert body["status"] == "failed" and body["attempts"] == 3
    assert body["failure"]["code"] == "provider_error"
    assert "Gave up after 3 attempts" in body["failure"]["message"]
    assert len(provider_server.chat_requests) == 3


def test_a_provider_that_refuses_the_request_is_not_asked_again(api, submit, eager, provider_server):
    provider_server.set_default({"status": 400})
    body = submit(task_body()).json()
    assert body["status"] == "failed" and body["attempts"] == 1 and len(provider_server.chat_requests) == 1


def test_a_retry_after_a_provider_failure_succeeds(api, submit, eager, provider_server):
    provider_server.script([{"status": 429}, {"status": 500}])
    provider_server.set_default({"text": LONG})
    body = submit(task_body()).json()
    assert body["status"] == "ready" and body["attempts"] == 3


def test_cancel_a_queued_task_then_it_is_never_generated(api, submit, provider_server, eager):
    body = submit(task_body(), run=False).json()
    response = api.post(f"/api/v1/tasks/{body['id']}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert queue.run(body["id"]) == "nothing"  # the message arrives late: nothing happens
    assert provider_server.requests == []
    assert Task.objects.get(pk=body["id"]).status == "cancelled"


@pytest.mark.parametrize("status", ["running", "ready", "blocked", "failed", "cancelled", "accepted", "rejected"])
def test_cancel_once_claimed_is_409_naming_the_status(api, submit, status):
    body = submit(task_body(), run=False).json()
    Task.objects.filter(pk=body["id"]).update(status=status)
    response = api.post(f"/api/v1/tasks/{body['id']}/cancel")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "not_cancellable" and str(Task.Status(status).label) in error["message"]


def test_review_statuses_show_in_the_task_json(api, submit, eager, provider_server):
    provider_server.set_default({"text": LONG})
    editor = get_user_model().objects.create_user("erika")
    first, second = submit(task_body()).json(), submit(task_body()).json()
    editors.accept(Task.objects.get(pk=first["id"]), user=editor)
    editors.reject(Task.objects.get(pk=second["id"]), user=editor)
    accepted, rejected = get(api, first["id"]), get(api, second["id"])
    assert accepted["status"] == "accepted" and accepted["review"]["decision"] == "accepted"
    assert accepted["review"]["by"] == "erika" and accepted["review"]["edited"] is False
    assert rejected["status"] == "rejected" and rejected["review"]["decision"] == "rejected"
    decisions = list(GovernanceEvent.objects.filter(check_name="review").values_list("decision", flat=True))
    assert sorted(decisions) == ["accepted", "rejected"]


def test_an_edit_is_screened_again_and_a_blocked_edit_is_refused(api, submit, eager, provider_server, configuration):
    TermList.objects.create(name="Never", forbidden="Rabatt").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    editor = get_user_model().objects.create_user("erika")
    body = submit(task_body()).json()
    task = Task.objects.get(pk=body["id"])
    with pytest.raises(editors.EditBlocked) as refused:
        editors.accept(task, user=editor, edited_text=LONG + " Mit Rabatt.")
    assert "Rabatt" in refused.value.block["message"]
    assert Task.objects.get(pk=task.pk).status == "ready"  # nothing changed
    editors.accept(task, user=editor, edited_text=LONG.replace("books a room", "reserves a room"))
    accepted = get(api, body["id"])
    assert accepted["status"] == "accepted" and accepted["review"]["edited"] is True
    assert "reserves a room" in accepted["text"]


# --- field fills ---
def field_fill(**field):
    return {"kind": "field_fill", "configuration": "newsroom", "instruction": "Describe the planning page.",
            "field": {"record": "page:42", "name": "meta_description", "label": "Meta description", **field}}


def test_the_field_facts_go_into_the_prompt(api, submit, eager, provider_server):
    provider_server.set_default({"text": "Plan meetings without the back and forth."})
    body = submit(field_fill(max_length=160)).json()
    assert body["status"] == "ready" and body["field"]["record"] == "page:42"
    system = [m["content"] for m in provider_server.chat_requests[0].json["messages"] if m["role"] == "system"]
    prompt = "\n".join(system)
    assert "page:42" in prompt and "meta_description" in prompt and "Meta description" in prompt
    assert "160" in prompt
    assert {"check": "field", "result": "passed"} in body["checks"]


def test_too_long_is_a_hint_in_off_and_report_mode(api, submit, eager, provider_server):
    provider_server.set_default({"text": LONG})
    body = submit(field_fill(max_length=40)).json()
    assert body["status"] == "ready" and body["outcome"] == "allowed_with_hints"
    hint = [h for h in body["hints"] if h["check"] == "field"][0]
    assert hint["type"] == "too_long" and hint["passage"] is None and hint["max_length"] == 40
    event = GovernanceEvent.objects.get(check_name="field")
    assert event.decision == "reported" and event.detail["type"] == "too_long"


def test_too_long_blocks_in_block_mode(api, submit, eager, provider_server, configuration):
    Configuration.objects.filter(pk=configuration.pk).update(rule_mode="block", rule_default="allow")
    provider_server.set_default({"text": LONG})
    body = submit(field_fill(max_length=40)).json()
    assert body["status"] == "blocked" and body["block"]["check"] == "field"
    assert LONG not in json.dumps(body)


# --- errors (SPEC §11.1) ---
@pytest.mark.parametrize("body, field", [
    ({"kind": "queued_task", "configuration": "newsroom"}, "instruction"),
    (task_body(messages=[{"role": "user", "content": "x"}]), "messages"),
    (task_body(kind="summary"), "kind"),
    (task_body(surprise=1), "surprise"),
    (field_fill() | {"field": None}, "field"),
    ({**field_fill(), "field": {"record": "page:1"}}, "field.name"),
    ({**field_fill(), "field": {"record": "page:1", "name": "x", "max_length": 0}}, "field.max_length"),
    ({**task_body(), "kind": "queued_task", "field": {"record": "p", "name": "n"}}, "field"),
    (task_body(callback_url="ftp://127.0.0.1/x"), "callback_url"),
    (task_body(callback_url="https://evil.example/hook"), "callback_url"),
    (task_body(messages=[], instruction=None), "messages"),
])
def test_bad_input_is_400_naming_the_field_and_queues_nothing(api, submit, body, field, settings):
    settings.GAVEL_CALLBACK_HOSTS = ["hooks.example.org"]
    response = submit(body)
    assert response.status_code == 400, response.json()
    fields = response.json()["error"]["fields"]
    assert any(key == field or key.startswith(field + ".") for key in fields), fields
    assert Task.objects.count() == 0


def test_no_token_is_401(submit):
    from rest_framework.test import APIClient

    assert submit(task_body(), client=APIClient()).status_code == 401


def test_unknown_configuration_is_404_and_not_granted_is_403(api, submit, provider, make_consumer):
    assert submit(task_body(configuration="nowhere")).status_code == 404
    Configuration.objects.create(identifier="other", provider=provider, model="m")
    response = submit(task_body(configuration="other"))
    assert response.status_code == 403 and response.json()["error"]["code"] == "not_granted"
    assert Task.objects.count() == 0


def test_a_body_over_the_limit_is_413(api, submit, settings):
    settings.GAVEL_MAX_TEXT_BYTES = 1000
    assert submit(task_body(instruction="x" * 2000)).status_code == 413


def test_over_budget_is_429_before_anything_is_queued(api, submit, eager, provider_server, configuration):
    Configuration.objects.filter(pk=configuration.pk).update(budget_daily_requests=1)
    provider_server.set_default({"text": LONG})
    assert submit(task_body()).json()["status"] == "ready"
    response = submit(task_body())
    assert response.status_code == 429 and response.json()["error"]["code"] == "budget_exceeded"
    assert Task.objects.count() == 1


def test_throttled_is_429_with_retry_after(api, submit, configuration):
    api.consumer.throttle_rate = "2/min"
    api.consumer.save()
    responses = [api.post("/api/v1/tasks", task_body(), format="json") for _ in range(3)]
    assert [r.status_code for r in responses] == [202, 202, 429]
    assert int(responses[2]["Retry-After"]) > 0 and responses[2].json()["error"]["code"] == "throttled"


def test_another_consumers_task_is_404_everywhere(api, submit, make_consumer, configuration):
    from rest_framework.test import APIClient

    mine = submit(task_body(), run=False).json()
    _, token = make_consumer("someone-else", [configuration])
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert other.get(f"/api/v1/tasks/{mine['id']}").status_code == 404
    assert other.post(f"/api/v1/tasks/{mine['id']}/cancel").status_code == 404
    assert other.get("/api/v1/tasks").json()["count"] == 0
    assert api.get(f"/api/v1/tasks/{uuid.uuid4()}").status_code == 404
    assert Task.objects.get(pk=mine["id"]).status == "queued"


def test_the_list_filters_and_pages_newest_first(api, submit, configuration, provider):
    from governance.api.views import TASK_PAGE_SIZE

    Configuration.objects.create(identifier="second", provider=provider, model="m").consumers.add(api.consumer)
    ids = [submit(task_body(), run=False).json()["id"] for _ in range(TASK_PAGE_SIZE + 2)]
    fill = submit(field_fill(), run=False).json()["id"]
    submit(task_body(configuration="second"), run=False)
    page = api.get("/api/v1/tasks").json()
    assert page["count"] == TASK_PAGE_SIZE + 4 and len(page["results"]) == TASK_PAGE_SIZE
    assert page["previous"] is None and page["next"].endswith("page=2")
    assert api.get("/api/v1/tasks?page=2").json()["results"][-1]["id"] == ids[0]
    assert [t["id"] for t in api.get("/api/v1/tasks?kind=field_fill").json()["results"]] == [fill]
    assert api.get("/api/v1/tasks?configuration=second").json()["count"] == 1
    Task.objects.filter(pk=ids[3]).update(status="failed")
    assert [t["id"] for t in api.get("/api/v1/tasks?status=failed").json()["results"]] == [ids[3]]
    for query, field in (("status=done", "status"), ("kind=x", "kind"), ("page=0", "page"), ("sort=x", "sort")):
        response = api.get(f"/api/v1/tasks?{query}")
        assert response.status_code == 400 and field in response.json()["error"]["fields"]


# --- callbacks ---
class Receiver:
    """A callback endpoint on 127.0.0.1 that answers the statuses it is given, then 200."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.received = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(json.loads(body))
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/gavel"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(settings):
    settings.GAVEL_CALLBACK_HOSTS = ["127.0.0.1"]
    settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS = 0
    made = []

    def make(statuses=()):
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    for r in made:
        r.close()


def delivered():
    """The embedded default delivers callbacks from a background thread: wait until it is idle."""
    from governance.work.callbacks import wait_until_idle

    assert wait_until_idle(30)


@pytest.mark.django_db(transaction=True)
def test_a_callback_receives_the_task_json_when_ready_and_when_reviewed(api, submit, eager, provider_server,
                                                                         receiver, django_capture_on_commit_callbacks):
    hook = receiver()
    provider_server.set_default({"text": LONG})
    body = submit(task_body(callback_url=hook.url)).json()
    delivered()
    assert [r["status"] for r in hook.received] == ["ready"]
    assert hook.received[0]["id"] == body["id"] and hook.received[0]["text"] == LONG
    with django_capture_on_commit_callbacks(execute=True):
        editors.reject(Task.objects.get(pk=body["id"]), user=get_user_model().objects.create_user("erika"))
    delivered()
    assert [r["status"] for r in hook.received] == ["ready", "rejected"]
    assert get(api, body["id"])["callback"] == {"status": "delivered", "attempts": 2, "error": None}


@pytest.mark.django_db(transaction=True)
def test_a_failing_callback_is_retried_and_its_failure_stays_visible(api, submit, eager, provider_server, receiver,
                                                                     settings):
    settings.GAVEL_CALLBACK_MAX_ATTEMPTS = 3
    provider_server.set_default({"text": LONG})
    flaky = receiver([500])
    assert submit(task_body(callback_url=flaky.url)).json()["status"] == "ready"
    delivered()
    assert len(flaky.received) == 2 and Task.objects.get().callback_status == "delivered"

    down = receiver([500, 502, 503])
    # Named with its port on the allow-list, the receiver's own answer is shown (a bare host would show less).
    settings.GAVEL_CALLBACK_HOSTS = [f"127.0.0.1:{down.server.server_port}"]
    body = submit(task_body(callback_url=down.url)).json()
    delivered()
    assert len(down.received) == 3
    callback = get(api, body["id"])["callback"]
    assert callback["status"] == "failed" and callback["attempts"] == 3 and "503" in callback["error"]
    assert get(api, body["id"])["status"] == "ready"  # a callback never changes the screening


def test_callback_allow_list_entries():
    hosts = ["hooks.example.org", "127.0.0.1:9000", "[::1]"]
    assert queue.callback_allowed("https://hooks.example.org/x", hosts)
    assert queue.callback_allowed("http://hooks.example.org:8080/x", hosts)
    assert queue.callback_allowed("http://127.0.0.1:9000/x", hosts)
    assert not queue.callback_allowed("http://127.0.0.1:9001/x", hosts)
    assert not queue.callback_allowed("http://hooks.example.org.evil.net/x", hosts)
    assert not queue.callback_allowed("file:///etc/passwd", hosts)
    assert queue.callback_allowed("http://[::1]:5000/x", hosts)


# --- privacy and retention ---
@pytest.mark.django_db(transaction=True)
def test_events_and_callback_logs_hold_no_task_text(api, submit, eager, provider_server, receiver, configuration,
                                                    caplog):
    secret_phrase = "books a room that fits"
    TermList.objects.create(name="Watch", forbidden="agenda", mode="report").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    hook = receiver([500])
    with caplog.at_level("DEBUG"):
        body = submit(task_body(callback_url=hook.url, instruction="Write about rooms: " + secret_phrase)).json()
        delivered()
    assert body["status"] == "ready" and len(hook.received) == 2
    events = json.dumps(list(GovernanceEvent.objects.values()), default=str)
    assert secret_phrase not in events and "agenda before" not in events
    assert secret_phrase not in caplog.text and "agenda" not in caplog.text


def test_purge_empties_old_task_contents_and_keeps_the_facts(api, submit, eager, provider_server, configuration):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    TermList.objects.create(name="Watch", forbidden="agenda", mode="report").configurations.add(configuration)
    provider_server.set_default({"text": LONG})
    old, recent = submit(task_body()).json(), submit(task_body()).json()
    Task.objects.filter(pk=old["id"]).update(created=timezone.now() - timedelta(days=31))
    call_command("purge_governance", "--days", "30")
    purged, kept = Task.objects.get(pk=old["id"]), Task.objects.get(pk=recent["id"])
    assert purged.answer == "" and purged.messages == [] and purged.purged_at is not None
    assert purged.hints[0]["passage"] is None and purged.hints[0]["terms"] == ["agenda"]
    assert purged.status == "ready" and purged.outcome == "allowed_with_hints"
    assert kept.answer == LONG and kept.hints[0]["passage"] == "agenda"


def test_tasks_are_read_only_for_staff_in_the_admin(client, submit):
    body = submit(task_body(), run=False).json()
    staff = get_user_model().objects.create_user("desk", password="pw-desk-123", is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/governance/task/").status_code == 200
    page = client.get(f"/admin/governance/task/{body['id']}/change/")
    assert page.status_code == 200 and "Write the launch text." in page.content.decode()
    assert client.get("/admin/governance/task/add/").status_code == 403
    assert client.post(f"/admin/governance/task/{body['id']}/delete/", {"post": "yes"}).status_code == 403
    assert Task.objects.filter(pk=body["id"]).exists()
    client.force_login(get_user_model().objects.create_user("reader"))
    assert client.get("/admin/governance/task/").status_code == 302  # not staff: the admin login


def test_a_task_escalates_once_when_its_verification_fails(api, submit, eager, provider_server, configuration,
                                                          provider, rules):
    """Tasks generate through the completion service, escalation included (SPEC §6.6, §10)."""
    from snippets.services import forget_compiled
    from tests.governance.test_escalation import CLEAN, VIOLATING, answers, models_asked
    from tests.snippets.conftest import set_mode

    forget_compiled()
    strong = Configuration.objects.create(identifier="newsroom-strong", provider=provider, model="strong-model")
    configuration.escalation = strong
    configuration.save()
    set_mode(configuration, "block")
    answers(provider_server, VIOLATING, CLEAN)
    body = submit(task_body()).json()
    assert models_asked(provider_server) == ["test-model", "strong-model"]
    assert body["status"] == "ready" and body["text"] == CLEAN
    assert body["verification"]["status"] == "verified"
    assert body["completion"]["escalated_from"] == "newsroom"
    assert GovernanceEvent.objects.filter(decision="escalated").count() == 1
    forget_compiled()
