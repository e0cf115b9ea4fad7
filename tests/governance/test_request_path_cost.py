"""What the request path was cut to (docs/operations.md, "The request path, profiled") still refuses
what it refused: a lone surrogate in a string field is a 400 naming the field, with DRF's message."""

import pytest
from rest_framework import serializers

from governance.api.validators import ProhibitSurrogates

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value, code_point", [("a\udfffb", "DFFF"), ("\ud800", "D800"), ("x" * 5000 + "\udbff", "DBFF")])
def test_the_surrogate_check_names_the_first_surrogate(value, code_point):
    with pytest.raises(serializers.ValidationError) as raised:
        ProhibitSurrogates()(value)
    assert raised.value.detail == [f"Surrogate characters are not allowed: U+{code_point}."]


@pytest.mark.parametrize("value", ["", "plain", "emoji \U0001F600 and umlauts äöü", "\ue000\uffff"])
def test_text_without_surrogates_passes(value):
    ProhibitSurrogates()(value)


def test_a_screening_with_a_lone_surrogate_is_a_400_naming_text(api, configuration):
    body = '{"configuration": "newsroom", "text": "Harbour \\ud83d news"}'  # a lone high surrogate, as JSON allows
    response = api.post("/api/v1/screenings", body, content_type="application/json")
    assert response.status_code == 400, response.content
    fields = response.json()["error"]["fields"]
    assert fields["text"] == ["Surrogate characters are not allowed: U+D83D."]



# --- a request serializer's field tree is built once per class and thread ------------------------------
def _completion(data):
    from governance.api.serializers import CompletionRequestSerializer

    serializer = CompletionRequestSerializer(data=data)
    serializer.is_valid()
    return serializer


def test_a_request_serializer_reuses_its_field_tree_bound_to_the_new_instance():
    first, second = _completion({}), _completion({})
    assert second.fields["messages"] is first.fields["messages"]  # not built again
    assert second.fields["messages"].child.fields["content"] is first.fields["messages"].child.fields["content"]
    assert second.fields["messages"].root is second and second.fields["configuration"].parent is second


def test_a_reused_field_tree_keeps_nothing_of_the_request_before():
    bad = _completion({"configuration": "Not a slug!", "messages": [{"role": "wizard", "content": 3}]})
    assert set(bad.errors) == {"configuration", "messages"}
    good = _completion({"configuration": "newsroom", "messages": [{"role": "user", "content": "Hello"}]})
    assert good.errors == {}
    assert good.validated_data["messages"] == [{"role": "user", "content": "Hello"}]
    assert good.validated_data["configuration"] == "newsroom"
    again = _completion({"configuration": "newsroom", "messages": []})
    assert set(again.errors) == {"messages"}


def test_two_threads_never_share_a_field_tree():
    import threading

    trees = {}

    def build(name):
        trees[name] = _completion({}).fields["messages"]

    threads = [threading.Thread(target=build, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert trees["a"] is not trees["b"]
    assert _completion({}).fields["messages"] is not trees["a"]


# --- the middleware of every path ------------------------------------------------------------------------
def test_the_admin_still_refuses_a_post_without_its_csrf_token(db):
    from django.test import Client

    response = Client(enforce_csrf_checks=True).post("/admin/login/", {"username": "a", "password": "b"})
    assert response.status_code == 403


def test_the_csp_header_is_django_csps_own_and_follows_the_setting(client, settings):
    from csp.utils import build_policy

    for path in ("/healthz", "/admin/login/"):
        assert set(client.get(path)["Content-Security-Policy"].split("; ")) == set(build_policy().split("; "))
    assert "script-src 'self'" in build_policy()
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert client.get("/admin/login/")["Content-Security-Policy"] == "default-src 'none'"
