"""Issue 25, callers and administrators (findings 6-10) and the contract (finding 16): what a caller or a
draft may not do, each test failing on the code before the fix."""
import pytest

from governance.models import Configuration
from governance.policy import configurations as configuration_section
from governance.policy.importing import import_policy
from governance.policy.messages import PolicyInvalid
from termlists.models import TermList

JUDGE_MODEL = "judge-model"
SAVE = {"name": "save_page", "arguments": {"body": "Der Kunde"}}


@pytest.fixture
def brand(db, configuration):
    term_list = TermList.objects.create(name="Brand", forbidden="Kunde", mode="block")
    term_list.configurations.set([configuration])
    return term_list


def screen(api, **body):
    body = {"text": "Saving.", "configuration": "newsroom", "offers_tools": True, **body}
    response = api.post("/api/v1/screenings", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def declare(configuration, *names):
    configuration.read_tools = list(names)
    configuration.save()


# --- finding 6: reads are declared by the configuration, never by the caller ---
def test_a_caller_naming_a_writing_tool_a_read_gets_it_screened_and_checks_say_so(api, brand):
    body = screen(api, tool_calls=[SAVE], read_tools=["save_page"])
    assert body["outcome"] == "blocked"
    assert body["block"]["check"] == "term_list"
    assert {"check": "read_tools", "result": "screened", "reason": "not_declared", "tools": ["save_page"]} \
        in body["checks"]


def test_a_read_the_configuration_declares_is_exempt_without_the_caller_naming_it(api, brand, configuration):
    declare(configuration, "search")
    body = screen(api, tool_calls=[{"name": "search", "arguments": {"q": "Kunde"}}])
    assert body["outcome"] == "allowed"
    assert not [c for c in body["checks"] if c["check"] == "read_tools"]


def test_the_caller_narrows_the_declared_reads_never_widens_them(api, brand, configuration):
    declare(configuration, "search")
    calls = [{"name": "search", "arguments": {"q": "Kunde"}}]
    # Naming another tool narrows the declared list to nothing declared: search is screened too.
    body = screen(api, tool_calls=calls, read_tools=["lookup"])
    assert body["outcome"] == "blocked"
    assert [c["tools"] for c in body["checks"] if c["check"] == "read_tools"] == [["lookup"]]


def test_every_configuration_of_the_call_must_declare_the_read(api, brand, configuration, provider, make_consumer):
    from rest_framework.test import APIClient

    declare(configuration, "search")
    other = Configuration.objects.create(identifier="desk", provider=provider, model="m")
    _consumer, token = make_consumer("both", [configuration, other])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = screen(client, tool_calls=[{"name": "search", "arguments": {"q": "Kunde"}}], also=["desk"])
    assert body["outcome"] == "blocked"


def test_read_tools_round_trip_through_the_policy_file(configuration):
    declare(configuration, "search_archive", "read_page")
    (exported,) = configuration_section.export()
    assert exported["read_tools"] == ["search_archive", "read_page"]
    exported["read_tools"] = ["lookup", " lookup "]
    import_policy({"configurations": [exported]})
    configuration.refresh_from_db()
    assert configuration.read_tools == ["lookup"]


def test_read_tools_must_be_a_list_of_names_in_the_policy_file(configuration):
    (exported,) = configuration_section.export()
    exported["read_tools"] = "search"
    with pytest.raises(PolicyInvalid) as refused:
        import_policy({"configurations": [exported]}, dry_run=True)
    assert any(path.endswith("read_tools") for path in refused.value.errors), refused.value.errors


def test_a_consumer_that_is_no_administrator_cannot_declare_reads_over_the_api(api, configuration):
    (exported,) = configuration_section.export()
    exported["read_tools"] = ["save_page"]
    response = api.put("/api/v1/policy", {"configurations": [exported]}, format="json")
    assert response.status_code == 403
    configuration.refresh_from_db()
    assert configuration.read_tools == []


# --- finding 16: a block by a term with a suggestion carries `suggestion`, as the hint does ---
def test_a_block_by_a_term_with_a_suggestion_carries_it_as_a_member(api, configuration):
    term_list = TermList.objects.create(name="Anrede", forbidden="Kunde => Kundin oder Kunde", mode="block")
    term_list.configurations.set([configuration])
    body = screen(api, text="Der Kunde zahlt.", offers_tools=False)
    assert body["outcome"] == "blocked"
    assert body["block"]["suggestion"] == {"Kunde": "Kundin oder Kunde"}
    report = TermList.objects.get(pk=term_list.pk)
    report.mode = "report"
    report.save()
    hinted = screen(api, text="Der Kunde zahlt.", offers_tools=False)
    assert hinted["hints"][0]["suggestion"] == body["block"]["suggestion"]


def test_a_block_without_a_suggestion_has_no_suggestion_member(api, brand):
    body = screen(api, text="Der Kunde zahlt.", offers_tools=False)
    assert body["outcome"] == "blocked" and "suggestion" not in body["block"]


# --- finding 10: dry runs and a refused PUT policy write no usage rows ---
@pytest.fixture
def judged_example(configuration, make_consumer):
    from governance.models import PolicyExample
    from tests.judging.conftest import TEXT, set_rules
    from rest_framework.test import APIClient

    judge = Configuration.objects.create(identifier="judge", provider=configuration.provider, model=JUDGE_MODEL)
    from snippets.models import Snippet

    Snippet.objects.create(identifier="tone", name="Tone", tags=["style"], body="Never promise a delivery date.")
    set_rules(configuration, "report", judges=[judge.identifier])
    PolicyExample.objects.create(name="promise", configuration="newsroom", text=TEXT,
                                 expect_outcome="allowed_with_hints",
                                 expect_findings=[{"check": "rules_judge", "snippet": "tone", "rule": 1}])
    _consumer, token = make_consumer("release-admin", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_rehearsals_ask_judges_but_write_no_usage_row(judged_example, provider_server, monkeypatch):
    from governance.models import UsageDay
    from governance.policy import export_policy, release
    from tests.judging.conftest import judge_requests, verdict

    monkeypatch.setenv("PROVIDER_TEST_API_KEY", "test-key")
    provider_server.set_default(verdict((1, "we ship your order tomorrow")))
    assert release.test_policy(judges="live").judges["calls"] == 1
    document = export_policy()
    assert release.plan_release(document, replay=0).regressions == []
    dry = judged_example.put("/api/v1/policy?dry_run=true", document, format="json")
    assert dry.status_code == 200, dry.content
    answer = judged_example.post("/api/v1/policy/test", {"judges": "live"}, format="json")
    assert answer.status_code == 200, answer.content
    # A draft that switches the rules off regresses the example: the PUT is refused.
    draft = export_policy()
    next(c for c in draft["configurations"] if c["identifier"] == "newsroom")["rules"]["mode"] = "off"
    refused = judged_example.put("/api/v1/policy", draft, format="json")
    assert refused.status_code == 409, refused.content
    assert len(judge_requests(provider_server)) == 2  # the judges were asked (live twice; cached verdicts after) ...
    assert UsageDay.objects.count() == 0  # ... and nothing was counted


def test_a_rehearsal_still_honours_a_budget_cap(judged_example, provider_server, monkeypatch):
    from governance.models import UsageDay
    from governance.policy import release
    from tests.judging.conftest import judge_requests, verdict
    from django.utils import timezone

    monkeypatch.setenv("PROVIDER_TEST_API_KEY", "test-key")
    judge = Configuration.objects.get(identifier="judge")
    judge.budget_daily_requests = 1
    judge.save()
    UsageDay.objects.create(configuration=judge, day=timezone.localdate(), requests=1)
    provider_server.set_default(verdict((1, "we ship your order tomorrow")))
    report = release.test_policy(judges="live")
    assert judge_requests(provider_server) == []  # the cap refused the judge before any provider was asked
    assert report.result_of("promise").error or not report.ok
    assert UsageDay.objects.get().requests == 1


# --- finding 8: no YAML aliases, bounded nesting and size, before a document is read ---
ALIAS_BOMB = "\n".join(["a: &a [x, x, x, x, x, x, x, x, x, x]"]
                       + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
                          f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
                          f"*{chr(97 + i)}, *{chr(97 + i)}]" for i in range(8)])


def deep(levels: int):
    node = "leaf"
    for _level in range(levels):
        node = {"n": node}
    return node


@pytest.fixture
def admin_api(make_consumer):
    from rest_framework.test import APIClient

    _consumer, token = make_consumer("policy-admin", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_an_alias_bomb_is_refused_in_put_policy_and_policy_test(admin_api, configuration):
    import time

    document = "examples:\n  - name: bomb\n    configuration: newsroom\n    tool_calls:\n      - name: t\n" \
               "        arguments:\n" + "\n".join("          " + line for line in ALIAS_BOMB.splitlines()) + \
               "\n    expect: {outcome: allowed}\n"
    started = time.monotonic()
    response = admin_api.put("/api/v1/policy?dry_run=true", document, content_type="application/yaml")
    assert response.status_code == 400, response.content
    assert "alias" in response.json()["error"]["message"]
    tested = admin_api.post("/api/v1/policy/test", {"draft": document}, format="json")
    # A draft given as YAML text is a string the schema allows: refused 422, naming it (decision 0051).
    assert tested.status_code == 422 and "draft" in tested.json()["error"]["fields"]
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("as_yaml", [False, True], ids=["json", "yaml"])
def test_a_500_deep_draft_is_400_on_post_policy_test_as_on_put_policy(admin_api, configuration, as_yaml):
    import json as jsonlib

    document = {"examples": [{"name": "deep", "configuration": "newsroom", "expect": {"outcome": "allowed"},
                              "tool_calls": [{"name": "t", "arguments": deep(500)}]}]}
    flow = "{n: " * 500 + "leaf" + "}" * 500  # PyYAML's own dumper cannot write 500 levels
    draft = (f"examples:\n  - name: deep\n    configuration: newsroom\n    expect: {{outcome: allowed}}\n"
             f"    tool_calls: [{{name: t, arguments: {flow}}}]\n") if as_yaml else document
    tested = admin_api.post("/api/v1/policy/test", {"draft": draft}, format="json")
    # As JSON the document breaks the schema's nesting bound (400); as YAML text it is a string the schema
    # allows, refused 422 (decision 0051). Either way the draft is named.
    assert tested.status_code == (422 if as_yaml else 400), tested.content[:300]
    assert "draft" in tested.json()["error"]["fields"]
    put = admin_api.put("/api/v1/policy?dry_run=true", jsonlib.dumps(document), content_type="application/json")
    assert put.status_code == 400


def test_a_document_past_the_value_bound_is_refused_before_it_is_read(admin_api, configuration):
    import json as jsonlib
    import time

    # 250,000 values fit under the 1 MiB body limit; the bound (200,000) refuses them before any walk.
    document = {"examples": [{"name": "wide", "configuration": "newsroom", "expect": {"outcome": "allowed"},
                              "tool_calls": [{"name": "t", "arguments": {"v": [0] * 250_000}}]}]}
    started = time.monotonic()
    tested = admin_api.post("/api/v1/policy/test", {"draft": document}, format="json")
    assert tested.status_code == 400, tested.content[:300]
    put = admin_api.put("/api/v1/policy?dry_run=true", jsonlib.dumps(document), content_type="application/json")
    assert put.status_code == 400
    assert time.monotonic() - started < 20


def test_the_policy_file_loader_refuses_aliases_and_depth_and_reads_a_plain_document():
    from governance.policy.loading import DocumentTooLarge, load_yaml

    with pytest.raises(DocumentTooLarge):
        load_yaml("a: &x [1]\nb: *x\n")
    with pytest.raises(DocumentTooLarge):
        load_yaml("[" * 100 + "]" * 100)
    assert load_yaml("configurations:\n  - identifier: a\n    read_tools: [search]\n") == {
        "configurations": [{"identifier": "a", "read_tools": ["search"]}]}


# --- finding 9: a batch body is bounded before it is parsed ---
def test_a_batch_of_millions_of_empty_items_is_refused_before_it_is_parsed(api, settings):
    import tracemalloc

    from governance.work import batches as batch_service

    body = b'{"items": [' + b",".join([b"{}"] * 3_000_000) + b"]}"  # 9 MiB, under GAVEL_MAX_BATCH_BYTES
    assert len(body) < settings.GAVEL_MAX_BATCH_BYTES
    tracemalloc.start()
    try:
        response = api.generic("POST", "/api/v1/batches", body, content_type="application/json")
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert "items" in error["fields"] and "1000000" in error["message"]
    assert peak < 64 * 1024 * 1024  # the body and the count, never three million dicts
    assert batch_service.MAX_ITEMS == 10_000


def test_a_batch_body_past_gavel_max_batch_bytes_is_413_naming_the_setting(api, settings):
    settings.GAVEL_MAX_BATCH_BYTES = 1000
    body = {"items": [{"kind": "queued_task", "configuration": "newsroom", "instruction": "x" * 2000}]}
    response = api.post("/api/v1/batches", body, format="json")
    assert response.status_code == 413
    error = response.json()["error"]
    assert "1000" in error["message"] and "GAVEL_MAX_BATCH_BYTES" in error["fields"]["body"][0]


def test_an_ordinary_batch_still_parses(api, settings, django_capture_on_commit_callbacks):
    from governance.api.batch_body import too_many_values

    assert too_many_values(b'[1, "a \\" [ {", {"b": [true, null]}]', limit=8) is False  # keys count too
    assert too_many_values(b'[1, "a \\" [ {", {"b": [true, null]}]', limit=7) is True
    with django_capture_on_commit_callbacks(execute=False):
        response = api.post("/api/v1/batches", {"items": [
            {"kind": "queued_task", "configuration": "newsroom", "instruction": "Write [one] {text}."}]}, format="json")
    assert response.status_code == 202, response.content


# --- finding 7: a dry run over the API is no oracle for another consumer's answers ---
def test_a_dry_run_over_the_api_reports_counts_without_task_ids_and_small_groups_withheld(
        admin_api, configuration, make_consumer):
    from governance.models import Task
    from governance.policy import export_policy, release

    other, _token = make_consumer("other-app", [configuration])
    secret = Task.objects.create(consumer=other, configuration="newsroom", status="ready", kind="queued_task",
                                 answer="The vault code is zebra quartz.")
    common = [Task.objects.create(consumer=other, configuration="newsroom", status="ready", kind="queued_task",
                                  answer=f"Allowed text {n} about apples.") for n in range(5)]
    draft = export_policy()
    draft["term_lists"] = [{"name": "probe", "configurations": ["newsroom"], "forbidden": ["z*", "q*", "a*"],
                            "mode": "block"}]
    response = admin_api.put("/api/v1/policy?dry_run=true&replay=50", draft, format="json")
    assert response.status_code == 200, response.content
    replay = response.json()["replay"]
    assert str(secret.pk) not in response.content.decode()
    assert not any(str(task.pk) in response.content.decode() for task in common)
    assert replay["replayed"] == 6 and replay["counts"] == {
        "allowed→blocked": 6, "blocked→allowed": "fewer than 5", "new_hints": "fewer than 5",
        "lost_hints": "fewer than 5"}
    # `a*` changed the five common texts: shown as a count. `z*` and `q*` changed one text: withheld, and
    # how many rows were held back is not said either (issue 41: that number was an oracle too).
    assert replay["rules"] == {"term_list:probe:a*": {"new": 5, "lost": "fewer than 5"}}
    assert "rules_withheld" not in replay and replay["min_texts"] == 5
    # A superuser's surfaces (admin page, import_policy --dry-run) keep the task ids: they may open every task.
    full = release.plan_release(draft, replay=50).as_dict()["replay"]
    assert full["rules"]["term_list:probe:z*"]["new_tasks"] == [str(secret.pk)]
