"""Malformed input found by the issue-41 probe: each a 400 naming the field (SPEC §11.1), never a 500; and
the login pages' 503 while the database is down, in DEBUG too (`make run`'s mode)."""
import json

import pytest
from django.db import OperationalError
from django.db.models.sql import compiler
from django.test import Client
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from governance import policy
from governance.api.parsers import MAX_BODY_DEPTH
from governance.models import PolicyDraft
from governance.screening.text import nesting_beyond
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401
from tests.governance.test_policy_example_admin import form
from tests.governance.test_policy_examples import small_policy

pytestmark = pytest.mark.django_db


def deep(depth: int, inner='"x"') -> str:
    return "[" * depth + inner + "]" * depth


@pytest.fixture
def admin_api(make_consumer):
    _consumer, token = make_consumer("release-admin", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


# --- the protocols: a member of the wrong type ---
@pytest.mark.parametrize("reference", [["msg_1"], {"id": "msg_1"}, 7, None])
def test_an_item_reference_id_that_is_no_string_is_a_400_naming_it(api, provider_server, reference):
    response = api.post("/openai/v1/responses", {"model": "newsroom", "input": [
        {"type": "item_reference", "id": reference}]}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["param"] == "input[0].id" and error["type"] == "invalid_request_error"
    assert provider_server.chat_requests == []


@pytest.mark.parametrize("kind", [["auto"], {"type": "auto"}, 3, True])
def test_a_messages_tool_choice_type_that_is_no_string_is_a_400_naming_it(configuration, make_consumer,
                                                                          provider_server, kind):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=token, HTTP_ANTHROPIC_VERSION="2023-06-01")
    response = client.post("/anthropic/v1/messages", {
        "model": "newsroom", "max_tokens": 50, "messages": [{"role": "user", "content": "Hi."}],
        "tools": [{"name": "search", "input_schema": {"type": "object"}}], "tool_choice": {"type": kind}},
        format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["param"] == "tool_choice"
    assert provider_server.chat_requests == []


# --- bodies nested past any document: refused before they are parsed ---
def deep_draft_paths(provider) -> list[str]:
    policy.import_policy(small_policy(provider))
    draft = PolicyDraft.objects.create(title="Deep", base_version=1)
    return ["/api/v1/policy/test", "/api/v1/policy/drafts", f"/api/v1/policy/drafts/{draft.pk}/publish"]


@pytest.mark.parametrize("depth", [5_000, 100_000])
@pytest.mark.parametrize("member", ["draft", "document", "allow_regressions"])
def test_a_body_nested_thousands_deep_is_a_400_naming_its_member_on_every_policy_path(
        admin_api, provider, depth, member):
    raw = '{"' + member + '": ' + deep(depth) + "}"
    for path in deep_draft_paths(provider):
        response = admin_api.post(path, raw, content_type="application/json")
        assert response.status_code == 400, (path, response.status_code, response.content[:300])
        error = response.json()["error"]
        assert error["fields"] == {member: [f"The JSON is nested more than {MAX_BODY_DEPTH} levels deep."]}, path


def test_the_depth_is_read_before_the_body_is_parsed(admin_api, provider, monkeypatch):
    from rest_framework.parsers import JSONParser

    parsed = []
    real = JSONParser.parse
    monkeypatch.setattr(JSONParser, "parse", lambda *a, **k: parsed.append(1) or real(*a, **k))
    response = admin_api.post("/api/v1/policy/test", '{"draft": ' + deep(MAX_BODY_DEPTH + 1) + "}",
                              content_type="application/json")
    assert response.status_code == 400 and parsed == []
    assert admin_api.post("/api/v1/policy/test", '{"draft": null}', content_type="application/json").status_code \
        == 200 and parsed == [1]


def test_a_body_just_inside_the_bound_is_parsed_and_judged_by_the_document_rules(admin_api, provider):
    policy.import_policy(small_policy(provider))
    raw = '{"draft": {"examples": ' + deep(MAX_BODY_DEPTH - 3, "{}") + "}}"
    response = admin_api.post("/api/v1/policy/test", raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert "draft" in response.json()["error"]["fields"]


def test_a_string_that_looks_deep_is_no_depth(admin_api, provider):
    policy.import_policy(small_policy(provider))
    body = {"draft": None, "only": ["plain-news-allowed"], "judges": "skip"}
    raw = json.dumps(body)[:-1] + ', "_": "' + "[" * 10_000 + '"}'
    response = admin_api.post("/api/v1/policy/test", raw, content_type="application/json")
    assert response.status_code == 400  # the unknown member, not the brackets inside its string
    assert list(response.json()["error"]["fields"]) == ["_"]


# --- an example's tool-call arguments nested thousands deep ---
@pytest.mark.parametrize("as_string", [True, False])
def test_an_example_whose_tool_call_arguments_nest_3000_deep_is_refused_naming_them(admin_api, provider, as_string):
    document = small_policy(provider)
    document["examples"].append({"name": "deep-call", "configuration": "newsroom",
                                 "tool_calls": [{"name": "save", "arguments": deep(3_000) if as_string else "DEEP"}],
                                 "expect": {"outcome": "allowed"}})
    policy.import_policy(small_policy(provider))
    raw = json.dumps({"draft": document, "judges": "skip"})
    if not as_string:  # the arguments as an array in the body itself
        raw = raw.replace('"DEEP"', deep(3_000))
    response = admin_api.post("/api/v1/policy/test", raw, content_type="application/json")
    # A JSON text too deep is schema-valid (a string) that the import refuses: 422 (decision 0051); a body
    # nested too deep is refused before it is parsed: 400.
    assert response.status_code == (422 if as_string else 400), response.content[:400]
    fields = response.json()["error"]["fields"]
    assert list(fields) == ["draft.examples[2].tool_calls[0].arguments" if as_string else "draft"], fields


def test_an_example_with_deep_arguments_is_refused_by_the_import_too(provider):
    document = small_policy(provider)
    document["examples"].append({"name": "deep-call", "configuration": "newsroom",
                                 "tool_calls": [{"name": "save", "arguments": deep(3_000)}],
                                 "expect": {"outcome": "allowed"}})
    with pytest.raises(policy.PolicyInvalid) as refused:
        policy.import_policy(document)
    assert "examples[2].tool_calls[0].arguments" in refused.value.errors


@pytest.mark.parametrize("arguments", [deep(3_000), '{"a": ' + deep(3_000) + "}"], ids=["string", "object"])
def test_an_example_written_in_the_admin_with_deep_arguments_is_a_form_error(superuser_client, provider, arguments):
    policy.import_policy(small_policy(provider))
    tool_calls = '[{"name": "save", "arguments": ' + (json.dumps(arguments) if arguments.startswith("[") else
                                                     arguments) + "}]"
    page = superuser_client.post("/admin/governance/policyexample/add/",
                                 form(text="", tool_calls=tool_calls))
    assert page.status_code == 200, page.status_code
    assert "nested more than" in page.content.decode()


# --- the login pages while the database is down ---
def unreachable(*args, **kwargs):
    raise OperationalError('connection to server at "db.internal" failed: password=hunter2')


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/admin/login/", "/accounts/login/"])
def test_a_login_while_the_database_is_down_is_a_503_page(settings, monkeypatch, path, debug):
    settings.DEBUG = debug
    client = Client(raise_request_exception=False)
    assert client.get(path).status_code == 200  # the form itself needs no database
    monkeypatch.setattr(compiler.SQLCompiler, "execute_sql", unreachable)
    response = client.post(path, {"username": "root", "password": "pw-12345678"})
    assert response.status_code == 503, (path, response.status_code)
    assert response["Retry-After"] and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert "cannot reach its database" in page
    assert "hunter2" not in page and "Traceback" not in page and "OperationalError" not in page


def test_in_debug_a_real_bug_on_a_page_is_still_django_s_debug_page(settings, monkeypatch):
    settings.DEBUG = True
    client = Client(raise_request_exception=False)
    monkeypatch.setattr(compiler.SQLCompiler, "execute_sql", lambda *a, **k: 1 / 0)
    response = client.post("/admin/login/", {"username": "root", "password": "pw-12345678"})
    assert response.status_code == 500


# --- the depth read without parsing (governance/screening/text.py) ---
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab:,'),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\ab'), inner,
                                                                                 max_size=3), max_leaves=30)


def depth_of(node) -> int:
    children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else None
    return 0 if children is None else 1 + max(map(depth_of, children), default=0)


@settings(max_examples=400, deadline=None)
@given(JSON, st.integers(0, 6))
def test_the_depth_read_without_parsing_is_the_parsed_depth(document, limit):
    text = json.dumps(document)
    beyond = nesting_beyond(text, limit)
    assert (beyond is not None) == (depth_of(document) > limit)
    assert nesting_beyond(text.encode(), limit) == beyond  # bytes read as the text
    if beyond:  # the member named is one whose value goes too deep
        assert depth_of(document[beyond]) >= limit


def test_the_member_named_is_the_outermost_one():
    assert nesting_beyond('{"a": 1, "b\\"c": [[[]]], "d": []}', 2) == 'b"c'
    assert nesting_beyond('[{"a": [[[]]]}]', 2) == ""
    assert nesting_beyond('{"a": "[[[[[[", "b": [1]}', 2) is None
