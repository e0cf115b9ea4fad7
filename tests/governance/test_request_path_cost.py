"""What the request path was cut to (docs/operations.md, "The request path, profiled") still refuses
what it refused: a lone surrogate in a string field is a 400 naming the field, with DRF's message."""
import json

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

