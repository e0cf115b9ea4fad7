"""The management commands of SPEC §11.3: thin wrappers, tested through call_command as an operator runs them."""
import io
import json
from datetime import timedelta

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from governance import policy
from governance.management.commands.seed_demo import EDITORIAL_CORPUS
from governance.models import Configuration, Consumer, GovernanceEvent, Provider, set_links
from snippets.models import PatternRule
from snippets.services import system_prompt_for
from termlists.models import TermList
from tests.governance.test_policy import EXAMPLE_YAML, example

pytestmark = pytest.mark.django_db

FORTY_WORDS = " ".join(f"word{i}" for i in range(40))


def run(*args, stdin=None, **options):
    """Run a command; return (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        options["stdin"] = io.StringIO(stdin)
    call_command(*args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def example_yaml() -> str:
    return yaml.safe_dump(example(), sort_keys=False, allow_unicode=True)


def screen_status(*args, stdin=None):
    """Run `screen`; return (exit status, stdout) -- 0 when it returns normally."""
    out = io.StringIO()
    options = {"stdout": out, "stderr": io.StringIO()}
    if stdin is not None:
        options["stdin"] = io.StringIO(stdin)
    try:
        call_command("screen", *args, **options)
    except SystemExit as exc:
        return exc.code, out.getvalue()
    return 0, out.getvalue()


# --- import_policy / export_policy -----------------------------------------------------------


def test_import_policy_from_a_file_then_again_changes_nothing(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(example_yaml(), encoding="utf-8")
    out, _ = run("import_policy", str(path))
    assert "Created providers:openai-eu" in out
    assert out.strip().endswith("9 created, 0 changed, 0 removed, 0 unchanged.")
    out, _ = run("import_policy", str(path))
    assert out.strip() == "0 created, 0 changed, 0 removed, 9 unchanged."


def test_import_policy_reads_standard_input():
    out, _ = run("import_policy", "-", stdin=example_yaml())
    assert "9 created" in out
    assert Configuration.objects.get(identifier="newsroom").fallback_identifiers() == ["newsroom-local"]


def test_import_policy_dry_run_prints_and_writes_nothing():
    policy.import_policy(example())
    document = example()
    document["providers"][0]["timeout"] = 45
    document["snippets"] = document["snippets"][:1]
    document["providers"].append({"name": "another", "route": "ollama"})
    out, _ = run("import_policy", "-", "--dry-run", "--prune", stdin=yaml.safe_dump(document))
    lines = out.splitlines()
    assert "Would create providers:another" in lines
    assert "Would change providers:openai-eu (timeout)" in lines
    assert "Would remove snippets:house_style" in lines
    assert lines[-1] == "Dry run, nothing was written: 1 created, 1 changed, 1 removed, 7 unchanged."
    assert not Provider.objects.filter(name="another").exists()
    assert Provider.objects.get(name="openai-eu").timeout == 30


def test_import_policy_prints_every_error_with_its_path_and_fails():
    document = example()
    document["providers"][0]["colour"] = "blue"
    document["configurations"][1]["rules"] = {"mode": "sometimes"}
    document["term_lists"][0]["forbidden"][1] = "Rab*att"
    with pytest.raises(CommandError, match="3 error"):
        run("import_policy", "-", stdin=yaml.safe_dump(document))
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_policy", "-", stdin=io.StringIO(yaml.safe_dump(document)), stdout=io.StringIO(),
                     stderr=err)
    lines = err.getvalue().splitlines()
    assert "providers[0].colour: Unknown key." in lines
    assert "configurations[1].rules.mode: Choose one of: off, report, block." in lines
    assert "term_lists[0].forbidden[1]: '*' is only allowed at the end of a term." in lines
    assert Provider.objects.count() == 0


def test_import_policy_refuses_yaml_that_does_not_parse():
    with pytest.raises(CommandError, match="does not parse"):
        run("import_policy", "-", stdin="providers: [unclosed")


def test_export_policy_writes_yaml_to_stdout_or_a_file(tmp_path):
    policy.import_policy(example())
    out, _ = run("export_policy")
    assert out == policy.export_yaml()
    assert list(yaml.safe_load(out)) == ["providers", "configurations", "snippets", "term_lists", "pattern_rules",
                                         "examples"]
    target = tmp_path / "out.yaml"
    out, _ = run("export_policy", "--output", str(target))
    assert str(target) in out
    assert target.read_text(encoding="utf-8") == policy.export_yaml()
    # What export writes, import reads back without a change.
    out, _ = run("import_policy", str(target))
    assert out.strip() == "0 created, 0 changed, 0 removed, 9 unchanged."


# --- consumers -------------------------------------------------------------------------------


def test_create_consumer_prints_the_token_alone_last_and_stores_only_its_hash(configuration):
    out, _ = run("create_consumer", "reporting-app", "--configurations", "newsroom", "--throttle", "120/min")
    token = out.splitlines()[-1]
    assert token.startswith("gvl_") and " " not in token and len(token) > 40
    assert out.count(token) == 1
    consumer = Consumer.objects.get(name="reporting-app")
    assert consumer.token_hash == Consumer.hash_token(token)
    assert consumer.throttle_rate == "120/min" and not consumer.is_admin
    assert list(consumer.configurations.values_list("identifier", flat=True)) == ["newsroom"]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {Consumer._meta.db_table}")
        rows = cursor.fetchall()
    assert rows and not any(token in str(value) for row in rows for value in row)


def test_create_consumer_admin_and_refusals(configuration):
    out, _ = run("create_consumer", "ops", "--admin")
    assert Consumer.objects.get(name="ops").is_admin
    with pytest.raises(CommandError, match="Unknown configuration: ghost, phantom"):
        run("create_consumer", "other", "--configurations", "newsroom,ghost,phantom")
    with pytest.raises(CommandError, match="exists already"):
        run("create_consumer", "ops", "--configurations", "newsroom")
    with pytest.raises(CommandError, match="at least one configuration"):
        run("create_consumer", "lonely")
    with pytest.raises(CommandError, match="not a rate"):
        run("create_consumer", "fast", "--configurations", "newsroom", "--throttle", "lots")
    assert not Consumer.objects.filter(name__in=["other", "lonely", "fast"]).exists()


def test_create_consumer_sets_how_blocks_and_hints_reach_an_agent_client(configuration):
    out, _ = run("create_consumer", "claude-code", "--configurations", "newsroom", "--blocks-as", "message",
                 "--hints-as", "note")
    assert "Blocks as: message; hints as: note." in out
    consumer = Consumer.objects.get(name="claude-code")
    assert (consumer.blocks_as, consumer.hints_as) == ("message", "note")
    # A new token keeps what was set unless the command says otherwise.
    run("create_consumer", "claude-code", "--configurations", "newsroom", "--new-token")
    consumer.refresh_from_db()
    assert (consumer.blocks_as, consumer.hints_as) == ("message", "note")
    run("create_consumer", "plain-app", "--configurations", "newsroom")
    assert Consumer.objects.filter(name="plain-app", blocks_as="refusal", hints_as="member").exists()
    with pytest.raises(CommandError, match="invalid choice"):
        run("create_consumer", "odd", "--configurations", "newsroom", "--blocks-as", "silence")


def test_create_consumer_grants_kinds(configuration):
    out, _ = run("create_consumer", "labeller", "--configurations", "newsroom", "--kinds", "internal")
    assert "Kinds granted besides the free ones: internal." in out
    assert Consumer.objects.get(name="labeller").kinds == ["completion", "internal"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {out.splitlines()[-1]}")
    body = {"text": "label: harbour", "configuration": "newsroom"}
    assert client.post("/api/v1/screenings", {**body, "kind": "internal"}, format="json").status_code == 200
    refused = client.post("/api/v1/screenings", {**body, "kind": "image_description"}, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "kind_not_granted"
    out, _ = run("create_consumer", "plain", "--configurations", "newsroom")
    assert "Kinds granted besides the free ones: none." in out
    assert Consumer.objects.get(name="plain").kinds == ["completion"]
    with pytest.raises(CommandError, match="Unknown kind: summary"):
        run("create_consumer", "odd", "--configurations", "newsroom", "--kinds", "summary")
    assert not Consumer.objects.filter(name="odd").exists()


def test_revoked_token_is_refused_by_the_api(configuration):
    out, _ = run("create_consumer", "short-lived", "--configurations", "newsroom")
    token = out.splitlines()[-1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"text": "Short text.", "configuration": "newsroom"}
    assert client.post("/api/v1/screenings", body, format="json").status_code == 200

    out, _ = run("revoke_consumer", "short-lived")
    assert "Revoked short-lived" in out
    response = client.post("/api/v1/screenings", body, format="json")
    assert response.status_code == 401
    out, _ = run("revoke_consumer", "short-lived")
    assert "already revoked" in out
    with pytest.raises(CommandError, match="No consumer named ghost"):
        run("revoke_consumer", "ghost")


# --- purge -----------------------------------------------------------------------------------


def test_purge_governance_refuses_less_than_a_day_and_deletes_only_old_events():
    now = timezone.now()
    for age in (0, 5, 29, 31, 400):
        GovernanceEvent.objects.create(at=now - timedelta(days=age), correlation_id=f"c{age}",
                                       decision="blocked", check_name="term_list")
    for days in ("0", "-3"):
        with pytest.raises(CommandError, match="at least 1"):
            run("purge_governance", "--days", days)
    assert GovernanceEvent.objects.count() == 5

    out, _ = run("purge_governance")  # default 30 days
    assert out.startswith("Deleted 2 governance event(s) older than 30 day(s)")
    out, _ = run("purge_governance", "--days", "7")
    assert out.startswith("Deleted 1 ")
    assert sorted(GovernanceEvent.objects.values_list("correlation_id", flat=True)) == ["c0", "c5"]


# --- screen ----------------------------------------------------------------------------------


@pytest.fixture
def screen_policy(db):
    policy.import_policy({
        "providers": [{"name": "local", "route": "ollama", "trust_zone": "local"}],
        "configurations": [
            {"identifier": "plain", "provider": "local", "model": "m"},
            # No judge: the rule set cannot be judged, with no model call now or once judging exists.
            {"identifier": "reported", "provider": "local", "model": "m",
             "rules": {"mode": "report", "tags": ["style"], "judges": []}},
            {"identifier": "strict", "provider": "local", "model": "m",
             "rules": {"mode": "block", "tags": ["style"], "judges": []}},
        ],
        "snippets": [{"identifier": "style", "name": "Style", "tags": ["style"], "body": "Be brief.\n"}],
        "term_lists": [{"name": "Screen words", "configurations": ["plain"], "forbidden": ["Kunde"],
                        "message": "Say client."}],
    })


def test_screen_exit_0_when_allowed(screen_policy, tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("A short, harmless sentence.", encoding="utf-8")
    status, out = screen_status("--configuration", "plain", str(path))
    assert status == 0
    body = json.loads(out)
    assert body["outcome"] == "allowed" and body["text"] == "A short, harmless sentence."
    assert [c["check"] for c in body["checks"]][0] == "secret_redaction"


def test_screen_exit_1_when_allowed_with_hints(screen_policy):
    # Report mode: a rule set that cannot be judged is a "not checked" hint.
    status, out = screen_status("--configuration", "reported", "-", stdin=FORTY_WORDS)
    assert status == 1
    assert json.loads(out)["outcome"] == "allowed_with_hints"


def test_screen_exit_2_when_a_term_list_blocks(screen_policy):
    status, out = screen_status("--configuration", "plain", "-", stdin="Der Kunde zahlt.")
    assert status == 2
    body = json.loads(out)
    assert body["outcome"] == "blocked" and "text" not in body and body["block"]["check"] == "term_list"
    assert "Kunde" in body["block"]["message"]


def test_screen_exit_2_when_the_rules_cannot_be_judged_in_block_mode(screen_policy):
    # Block mode fails closed when the rule set cannot be judged (SPEC §4).
    status, out = screen_status("--configuration", "strict", "-", stdin=FORTY_WORDS)
    assert status == 2
    body = json.loads(out)
    assert body["outcome"] == "blocked" and "text" not in body and body["block"]["check"] == "rules_judge"
    assert GovernanceEvent.objects.filter(decision="blocked", actor="cli", configuration="strict").exists()


def test_screen_also_applies_further_configurations(screen_policy):
    status, _ = screen_status("--configuration", "reported", "-", stdin="Der Kunde zahlt.")
    assert status == 0
    status, out = screen_status("--configuration", "reported", "--also", "plain", "-", stdin="Der Kunde zahlt.")
    assert status == 2 and json.loads(out)["block"]["check"] == "term_list"


def test_screen_exit_3_on_errors(screen_policy):
    status, out = screen_status("--configuration", "ghost", "-", stdin="Hello.")
    assert status == 3
    assert json.loads(out)["error"]["code"] == "unknown_configuration"
    status, out = screen_status("--configuration", "plain", "--format", "json", "-", stdin="{not json")
    assert status == 3
    assert json.loads(out)["error"]["fields"] == {"text": ["format is json but the text is not JSON."]}
    status, out = screen_status("--configuration", "plain", "/no/such/file.txt")
    assert status == 3


def test_screen_json_format_is_screened_by_its_strings(screen_policy):
    text = json.dumps({"title": "Hello", "words": FORTY_WORDS})
    status, out = screen_status("--configuration", "strict", "--format", "json", "-", stdin=text)
    assert status == 2


# --- seed_demo -------------------------------------------------------------------------------


def test_seed_demo_is_idempotent_and_prints_the_same_token():
    first, _ = run("seed_demo")
    counts = (Provider.objects.count(), Configuration.objects.count(), TermList.objects.count(),
              Consumer.objects.count(), get_user_model().objects.count(), PatternRule.objects.count())
    second, _ = run("seed_demo")
    assert first.splitlines()[-1] == second.splitlines()[-1]
    assert "0 created, 0 changed" in second
    corpus = yaml.safe_load(EDITORIAL_CORPUS.read_text(encoding="utf-8"))["pattern_rules"]
    # One provider (the demo model, answered by litellm's mock_response), four configurations, three lists.
    assert counts == (1, 4, 3, 1, 3, len(corpus))
    assert counts == (Provider.objects.count(), Configuration.objects.count(), TermList.objects.count(),
                      Consumer.objects.count(), get_user_model().objects.count(), PatternRule.objects.count())
    # Passwords are kept in the data folder too, so the printed logins stay true on every run.
    assert [line for line in first.splitlines() if " / " in line] == \
        [line for line in second.splitlines() if " / " in line]

    token = second.splitlines()[-1]
    assert token.startswith("gvl_")
    assert "http://127.0.0.1:8000/admin/" in second
    assert "demo-logins.json" in second
    consumer = Consumer.objects.get(name="demo-app")
    assert consumer.token_hash == Consumer.hash_token(token)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {Consumer._meta.db_table}")
        assert not any(token in str(value) for row in cursor.fetchall() for value in row)


def test_seed_demo_logins_rights_and_working_token():
    out, _ = run("seed_demo")
    users = {u.username: u for u in get_user_model().objects.all()}
    assert users["admin"].is_superuser and users["admin"].is_staff
    editor_of_policy = users["policy-editor"]
    assert editor_of_policy.is_staff and not editor_of_policy.is_superuser
    assert editor_of_policy.has_perm("termlists.change_termlist")
    assert editor_of_policy.has_perm("governance.add_configuration")
    assert editor_of_policy.has_perm("snippets.view_snippet")
    assert editor_of_policy.has_perm("snippets.change_patternrule")
    assert not editor_of_policy.has_perm("governance.delete_provider")
    assert not editor_of_policy.has_perm("governance.change_consumer")
    assert list(users["editor"].groups.values_list("name", flat=True)) == ["editors"]
    assert not users["editor"].is_staff
    for line in out.splitlines():
        if " / " in line:
            username, password = line.split()[0], line.split()[2]
            assert users[username].check_password(password), username

    term_list = TermList.objects.get(name="Demo brand words")
    assert "Kunde" in term_list.forbidden.splitlines() and "Rabatt*" in term_list.forbidden.splitlines()
    assert list(term_list.configurations.values_list("identifier", flat=True)) == ["demo"]

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {out.splitlines()[-1]}")
    response = client.post("/api/v1/screenings", {"text": "Hello.", "configuration": "demo"}, format="json")
    assert response.status_code == 200


def test_seed_demo_checks_the_english_rules_of_the_editorial_corpus():
    out, _ = run("seed_demo")
    demo = Configuration.objects.get(identifier="demo")
    prompt = system_prompt_for(demo)
    assert "[rule:editorial.click-here]" in prompt and "[rule:editorial.slash-date]" in prompt  # en, en+de
    assert "[rule:editorial.hier-klicken]" not in prompt  # de only
    set_links(demo, "rule_judges", [])  # no model call in this test

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {out.splitlines()[-1]}")
    text = ("# Summer sale starts today!\n\nFor the full range of colours, click here. The offer ends on "
            "03/04/2026. " + FORTY_WORDS)
    body = client.post("/api/v1/screenings", {"text": text, "configuration": "demo"}, format="json").json()
    hits = {h["rule"]["identifier"]: h["passage"] for h in body["hints"] if h["check"] == "pattern_rules"}
    assert hits == {"editorial.headline-exclamation": "# Summer sale starts today!",
                    "editorial.click-here": "click here", "editorial.slash-date": "03/04/2026"}
    assert body["outcome"] == "allowed_with_hints"  # the demo reports, it does not block
    assert body["verification"]["status"] == "unverified"


def test_seed_demo_logins_and_token_are_random_per_install_and_kept_in_the_data_folder(settings, tmp_path):
    """Nothing public derives them (not SECRET_KEY either): two installs with the same key differ,
    and the file that keeps them is readable by its owner only."""
    first_folder, second_folder = tmp_path / "one", tmp_path / "two"
    settings.GAVEL_DATA_DIR = first_folder
    first, _ = run("seed_demo")
    stored = json.loads((first_folder / "demo-logins.json").read_text())
    assert (first_folder / "demo-logins.json").stat().st_mode & 0o077 == 0
    assert first.splitlines()[-1] == stored["token"]
    assert f"admin / {stored['passwords']['admin']}" in first
    settings.GAVEL_DATA_DIR = second_folder
    second, _ = run("seed_demo")  # another install: same SECRET_KEY, other folder
    other = json.loads((second_folder / "demo-logins.json").read_text())
    assert other["token"] != stored["token"]
    assert set(other["passwords"].values()).isdisjoint(stored["passwords"].values())
    assert get_user_model().objects.get(username="admin").check_password(other["passwords"]["admin"])
    assert Consumer.objects.get(name="demo-app").token_hash == Consumer.hash_token(other["token"])
    assert len(set(stored["passwords"].values())) == 3 and all(len(p) >= 16 for p in stored["passwords"].values())


def test_seed_demo_restores_a_revoked_demo_consumer():
    first, _ = run("seed_demo")
    run("revoke_consumer", "demo-app")
    second, _ = run("seed_demo")
    assert first.splitlines()[-1] == second.splitlines()[-1]
    assert Consumer.objects.get(name="demo-app").is_active


def test_seed_demo_queues_demo_tasks_in_every_state_with_no_model_server(settings, django_capture_on_commit_callbacks):
    """The first run shows an editor a populated queue: the echo provider answers through
    litellm's mock_response, so no model server runs (SPEC §10, issue 8)."""
    from governance.celery import app
    from governance.models import Task

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.GAVEL_TASK_RETRY_BASE_SECONDS = 0
    try:
        with django_capture_on_commit_callbacks(execute=True):
            out, _ = run("seed_demo")
        assert "Demo tasks: 4 queued now" in out
        with django_capture_on_commit_callbacks(execute=True):
            again, _ = run("seed_demo")
        assert "Demo tasks: 0 queued now" in again
    finally:
        app.conf.task_always_eager = previous
    tasks = {(t.kind, t.status): t for t in Task.objects.all()}
    assert set(tasks) == {("queued_task", "ready"), ("queued_task", "blocked"), ("queued_task", "failed"),
                          ("field_fill", "ready")}
    hinted = tasks["queued_task", "ready"]
    assert hinted.outcome == "allowed_with_hints" and "term_list" in {h["check"] for h in hinted.hints}
    assert tasks["queued_task", "blocked"].refusal["check"] == "term_list"
    assert tasks["queued_task", "failed"].failure["code"] == "provider_error"
    fill = tasks["field_fill", "ready"]
    assert fill.field["record"] == "page:42" and "too_long" in {h["type"] for h in fill.hints}
    assert hinted.completion["provider"] == "demo-model"


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_existing_consumers_completion_only():
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("governance", "0010_field_explanations_2")], [("governance", "0011_i16_consumer_kinds")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("governance", "Consumer")
    old.objects.create(name="older-app", token_hash="0" * 64, token_prefix="gvl_x")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(after)
    new = executor.loader.project_state(after).apps.get_model("governance", "Consumer")
    assert new.objects.get(name="older-app").kinds == ["completion"]
    MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
