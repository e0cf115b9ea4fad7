"""POST /api/v1/screenings: redaction end to end, the response shape, headers."""
import json

import pytest

from governance.models import Configuration, GovernanceEvent, PolicyVersion
from snippets.models import Snippet
from termlists.models import TermList

pytestmark = pytest.mark.django_db

SECRETS = {
    "openai": "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "github": "ghp_" + "a" * 36,
    "github_pat": "github_pat_" + "11ABCDEFG0" * 3,
    "slack": "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "google": "AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer": "Bearer abcdefghijklmnop1234567890",
    "url_user": "https://deploy:hunter2secret@git.example.com/repo.git",
    "url_query": "https://api.example.com/v1/items?api_key=abcdef1234567890&page=2",
}


def screen(api, **body):
    body.setdefault("configuration", "newsroom")
    return api.post("/api/v1/screenings", body, format="json")


def test_plain_text_comes_back_byte_identical(api):
    text = "Ein ganz normaler Satz.\n  With  odd spacing, ümlauts, a hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 and /usr/local/bin."
    response = screen(api, text=text)
    assert response.status_code == 200
    body = response.json()
    assert body["text"] == text
    assert body["outcome"] == "allowed"
    assert {"check": "secret_redaction", "result": "passed"} in body["checks"]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_secret_shape_is_masked_and_checks_say_so(api, kind):
    secret = SECRETS[kind]
    response = screen(api, text=f"Deploy with {secret} today.")
    body = response.json()
    assert response.status_code == 200
    assert body["outcome"] == "allowed"
    assert {"check": "secret_redaction", "result": "redacted"} in body["checks"]
    assert "***" in body["text"]
    # The secret's value is gone from the answer and from the log.
    tail = {"url_user": "hunter2secret", "url_query": "abcdef1234567890"}.get(kind, secret[-10:])
    assert tail not in body["text"]
    event = GovernanceEvent.objects.get(correlation_id=body["id"])
    assert event.decision == "redacted" and event.check_name == "secret_redaction"
    assert tail not in str(event.detail)


def test_secret_in_tool_call_arguments_is_masked(api):
    response = screen(api, text="ok", tool_calls=[{"name": "save", "arguments": {"body": f"key {SECRETS['aws']}"}}])
    body = response.json()
    assert SECRETS["aws"] not in str(body["tool_calls"])
    assert body["tool_calls"][0]["name"] == "save"


def test_a_tool_call_s_name_and_id_are_masked_like_its_arguments(api):
    # SPEC §11.8: the model writes them too; a key there reached the client before.
    key = SECRETS["github"]
    body = screen(api, text="ok", tool_calls=[{"id": f"call_{key}", "name": f"save_{key}",
                                               "arguments": {"body": "x"}}]).json()
    assert body["tool_calls"] == [{"id": "call_ghp_***", "name": "save_ghp_***", "arguments": {"body": "x"}}]
    event = GovernanceEvent.objects.get(correlation_id=body["id"])
    assert event.detail == {"kinds": {"github_token": 2}, "count": 2}


def test_response_has_every_field_and_headers(api):
    response = screen(api, text="Hello.", format="text")
    body = response.json()
    assert set(body) == {"id", "policy_version", "outcome", "text", "tool_calls", "hints", "block", "verification", "checks"}
    assert body["block"] is None
    assert body["verification"]["status"] == "not_applicable"
    assert [c["check"] for c in body["checks"]] == [
        "secret_redaction", "term_list", "pattern_rules", "citations", "rules_judge"]
    assert response["X-Gavel-Policy-Version"] == str(body["policy_version"]) == str(PolicyVersion.current())
    assert response["X-Request-ID"] == body["id"]


def test_request_id_is_echoed(api):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": "x"}, format="json",
                        HTTP_X_REQUEST_ID="trace-123")
    assert response["X-Request-ID"] == "trace-123"
    # Echoed, never the correlation id (two requests sending it are two screenings).
    assert response.json()["id"] != "trace-123"


def test_policy_version_changes_with_an_edit(api, configuration):
    before = screen(api, text="x").json()["policy_version"]
    configuration.system_prompt = "Changed."
    configuration.save()
    after = screen(api, text="x").json()["policy_version"]
    assert after > before


@pytest.fixture
def policy_records(configuration):
    """One record of each kind an edit can touch, besides `newsroom` itself."""
    other = Configuration.objects.create(identifier="sports", provider=configuration.provider, model="test-model")
    term_list = TermList.objects.create(name="Competitors", forbidden="Acme")
    term_list.configurations.set([configuration])
    snippet = Snippet.objects.create(identifier="house-style", name="House style", body="Use short sentences.")
    return {"configuration": configuration, "other": other, "term_list": term_list, "snippet": snippet}


def save_with(record, **changes):
    for name, value in changes.items():
        setattr(record, name, value)
    record.save()


POLICY_EDITS = {
    "term list scope added": lambda r: r["term_list"].configurations.add(r["other"]),
    "term list scope replaced": lambda r: r["term_list"].configurations.set([r["other"]]),
    "term list scope added from the configuration": lambda r: r["other"].term_lists.add(r["term_list"]),
    "term list saved": lambda r: save_with(r["term_list"], forbidden="Acme\nGlobex"),
    "snippet saved": lambda r: save_with(r["snippet"], body="Use shorter sentences."),
    "configuration deleted": lambda r: r["other"].delete(),
    "term list deleted": lambda r: r["term_list"].delete(),
    "snippet deleted": lambda r: r["snippet"].delete(),
    "provider saved": lambda r: save_with(r["configuration"].provider, timeout=7),
}


@pytest.mark.parametrize("edit", POLICY_EDITS.values(), ids=POLICY_EDITS.keys())
def test_every_policy_edit_changes_the_policy_version(api, policy_records, edit):
    # Cached matchers and verdicts are keyed by this number (SPEC §5.5, §11.1): an edit it misses serves stale policy.
    before = screen(api, text="x")
    edit(policy_records)
    after = screen(api, text="x")
    assert after.json()["policy_version"] > before.json()["policy_version"]
    assert after["X-Gavel-Policy-Version"] == str(after.json()["policy_version"])


def test_json_output_is_screened_by_its_strings(api):
    response = screen(api, text='{"title": "x", "token": "' + SECRETS["github"] + '"}', format="json")
    body = response.json()
    assert response.status_code == 200
    assert SECRETS["github"] not in body["text"]


ESCAPED_KEY = "\\u0073k-proj-abcdefghij1234567890XYZ"  # `sk-proj-…` with its `s` as a JSON escape


def test_a_secret_behind_a_json_escape_is_masked_in_a_json_answer(api):
    text = '{"k": "' + ESCAPED_KEY + '"}'
    body = screen(api, text=text, format="json").json()
    assert "abcdefghij1234567890XYZ" not in body["text"]
    assert json.loads(body["text"]) == {"k": "sk-***"}
    assert {"check": "secret_redaction", "result": "redacted"} in body["checks"]
    event = GovernanceEvent.objects.get(correlation_id=body["id"])
    assert event.detail == {"kinds": {"openai_key": 1}, "count": 1}


def test_json_keys_and_duplicate_keys_are_masked_and_kept(api):
    text = '{"' + ESCAPED_KEY + '": 1, "a": "' + ESCAPED_KEY + '", "a": "x", "n": [1.5, null, true]}'
    body = screen(api, text=text, format="json").json()
    assert body["text"] == '{"sk-***": 1, "a": "sk-***", "a": "x", "n": [1.5, null, true]}'


def test_a_secret_behind_a_json_escape_is_masked_in_tool_arguments(api):
    arguments = '{"body": "' + ESCAPED_KEY + '", "' + ESCAPED_KEY + '": ["ok"]}'
    body = screen(api, text="ok", tool_calls=[{"name": "save", "arguments": arguments}]).json()
    assert body["tool_calls"][0]["arguments"] == '{"body": "sk-***", "sk-***": ["ok"]}'
    assert {"check": "secret_redaction", "result": "redacted"} in body["checks"]


@pytest.mark.parametrize("arguments", [
    pytest.param({SECRETS["openai"]: "v"}, id="object"),
    pytest.param(json.dumps({SECRETS["openai"]: "v"}), id="json-string"),
])
def test_a_secret_shaped_key_in_tool_arguments_is_masked(api, arguments):
    # The same arguments, as an object or as a JSON string, come back masked alike.
    body = screen(api, text="ok", tool_calls=[{"name": "save", "arguments": arguments}]).json()
    delivered = body["tool_calls"][0]["arguments"]
    assert (json.loads(delivered) if isinstance(delivered, str) else delivered) == {"sk-***": "v"}
    assert {"check": "secret_redaction", "result": "redacted"} in body["checks"]
    event = GovernanceEvent.objects.get(correlation_id=body["id"])
    assert event.detail == {"kinds": {"openai_key": 1}, "count": 1}
    assert SECRETS["openai"][-10:] not in str(event.detail)


def test_json_inside_a_json_string_is_masked_in_answers_and_tool_arguments(api):
    # One walker for both: a string that is itself JSON is masked in its decoded strings.
    document = json.dumps({"payload": '{"k": "' + ESCAPED_KEY + '"}'})
    body = screen(api, text=document, format="json", tool_calls=[
        {"name": "save", "arguments": json.loads(document)}, {"name": "save", "arguments": document},
    ]).json()
    as_object, as_string = (call["arguments"] for call in body["tool_calls"])
    for delivered in (json.loads(body["text"]), as_object, json.loads(as_string)):
        assert json.loads(delivered["payload"]) == {"k": "sk-***"}


def test_clean_json_comes_back_byte_identical(api):
    text = '{ "title":"Caf\\u00e9 \\u004bunde",\n  "n": 1.50, "a": 1, "a": [ "x" ] }'
    body = screen(api, text=text, format="json", tool_calls=[{"name": "save", "arguments": text}]).json()
    assert body["text"] == text
    assert body["tool_calls"][0]["arguments"] == text
    assert {"check": "secret_redaction", "result": "passed"} in body["checks"]


def test_rule_mode_block_fails_closed_when_no_judge_can_run(api, configuration):
    from snippets.models import Snippet

    Snippet.objects.create(identifier="tone", name="Tone", tags=["style"], body="Address the reader formally.")
    configuration.rule_mode, configuration.rule_tags = "block", ["style"]
    configuration.save()
    body = screen(api, text=" ".join(["word"] * 40)).json()
    assert body["outcome"] == "blocked"
    assert "text" not in body
    assert body["block"]["check"] == "rules_judge"
    assert {"check": "rules_judge", "result": "blocked", "reason": "no_judge"} in body["checks"]


def test_short_text_is_not_judged(api, configuration):
    configuration.rule_mode = "block"
    configuration.save()
    body = screen(api, text="Too short to judge.").json()
    assert body["outcome"] == "allowed"
    assert {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"} in body["checks"]


def _judged_configuration(configuration, provider):
    from governance.models import Configuration, set_links
    from snippets.models import Snippet

    Snippet.objects.create(identifier="tone", name="Tone", tags=["style"], body="Address the reader formally.")
    judge = Configuration.objects.create(identifier="judge", provider=provider, model="judge-model")
    configuration.rule_mode, configuration.rule_tags = "block", ["style"]
    configuration.save()
    set_links(configuration, "rule_judges", [judge])


def test_tool_arguments_are_judged_when_no_tools_were_offered(api, configuration, provider, provider_server):
    """SPEC §8.2: a call that offers no tools is screened whole, tool arguments included."""
    _judged_configuration(configuration, provider)
    provider_server.script([{"text": '{"violations": []}'}])
    body = screen(api, text="Saved the page.", tool_calls=[
        {"name": "save_page", "arguments": {"body": " ".join(["hey"] * 40)}}]).json()
    assert len(provider_server.chat_requests) == 1
    assert "hey hey hey" in str(provider_server.chat_requests[0].json)
    assert body["outcome"] == "allowed"
    assert {"check": "rules_judge", "result": "passed"} in body["checks"]


def test_an_image_description_is_never_judged_even_in_a_tool_run(granted_api, configuration, provider,
                                                                 provider_server):
    _judged_configuration(configuration, provider)
    body = screen(granted_api, text="x", kind="image_description", offers_tools=True, tool_calls=[
        {"name": "save_page", "arguments": {"body": " ".join(["word"] * 40)}}]).json()
    assert provider_server.chat_requests == []
    assert {"check": "rules_judge", "result": "skipped", "reason": "not_finished_text"} in body["checks"]
