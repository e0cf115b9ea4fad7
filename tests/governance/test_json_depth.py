"""JSON nested deeper than Gavel walks is bad input (400 naming the field), never a 500 (SPEC §11.1)."""
import json

import pytest

from governance.screening.text import MAX_JSON_DEPTH, nested_deeper_than
from termlists.models import TermList
from tests.governance.test_api_errors import assert_error

pytestmark = pytest.mark.django_db

KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"


def nested(depth: int, inner: str) -> str:
    return "[" * depth + json.dumps(inner) + "]" * depth


@pytest.fixture
def zebra_list(configuration):
    term_list = TermList.objects.create(name="Animals", forbidden="zebra")
    term_list.configurations.set([configuration])
    return term_list


def screen(api, configuration, **body):
    return api.post("/api/v1/screenings", {"configuration": configuration.identifier, **body}, format="json")


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 900, 100_000])
def test_a_json_text_nested_too_deeply_is_refused_naming_the_field(api, configuration, depth):
    error = assert_error(screen(api, configuration, text=nested(depth, "x"), format="json"), 400, "invalid")
    assert error["fields"] == {"text": [f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep."]}


@pytest.mark.parametrize("arguments", [
    nested(MAX_JSON_DEPTH + 1, "x"), nested(100_000, "x"),  # a JSON string
    json.loads(nested(MAX_JSON_DEPTH + 1, "x")), json.loads(nested(500, "x")),  # an array in the body
])
def test_tool_arguments_nested_too_deeply_are_refused_naming_the_field(api, configuration, arguments):
    response = screen(api, configuration, text="Saved.", tool_calls=[{"name": "save", "arguments": arguments}])
    error = assert_error(response, 400, "invalid")
    assert error["fields"] == {"tool_calls[0].arguments": [f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep."]}


def test_a_body_nested_beyond_what_json_can_read_is_malformed(api, configuration):
    raw = '{"text": ' + nested(100_000, "x") + "}"
    response = api.post("/api/v1/screenings", raw, content_type="application/json")
    assert_error(response, 400, "malformed")


def test_the_deepest_json_allowed_is_screened_in_full(api, configuration, zebra_list):
    body = screen(api, configuration, text=nested(MAX_JSON_DEPTH, "a zebra"), format="json").json()
    assert body["outcome"] == "blocked" and body["block"]["check"] == "term_list"
    arguments = {"page": json.loads(nested(MAX_JSON_DEPTH - 1, KEY))}
    body = screen(api, configuration, text="Saved.", tool_calls=[{"name": "save", "arguments": arguments}]).json()
    assert KEY not in json.dumps(body) and "sk-***" in json.dumps(body["tool_calls"])


def test_a_deep_document_inside_a_string_is_masked_as_plain_text(api, configuration):
    # Redaction decodes a string that is itself JSON; one too deep to walk is masked as it stands.
    arguments = {"note": nested(5_000, KEY)}
    body = screen(api, configuration, text="Saved.", tool_calls=[{"name": "save", "arguments": arguments}]).json()
    assert KEY not in json.dumps(body)
    assert body["tool_calls"][0]["arguments"]["note"].startswith("[[[")


def test_depth_is_measured_without_recursion():
    assert not nested_deeper_than(json.loads(nested(MAX_JSON_DEPTH, "x")))
    assert nested_deeper_than(json.loads(nested(MAX_JSON_DEPTH + 1, "x")))
    deep: list = []
    node = deep
    for _ in range(200_000):  # far past Python's recursion limit
        node.append([])
        node = node[0]
    assert nested_deeper_than(deep)
    assert not nested_deeper_than({"a": [1, {"b": "c"}]}, limit=3)
    assert nested_deeper_than({"a": [1, {"b": ["c"]}]}, limit=3)


def test_the_refusal_is_in_the_readers_language(api, configuration):
    response = api.post("/api/v1/screenings", {"configuration": configuration.identifier, "format": "json",
                                               "text": nested(MAX_JSON_DEPTH + 1, "x")},
                        format="json", HTTP_ACCEPT_LANGUAGE="de")
    error = assert_error(response, 400, "invalid")
    assert error["fields"] == {"text": [f"Das JSON ist mehr als {MAX_JSON_DEPTH} Ebenen tief verschachtelt."]}
