"""governance/screening/text.py, pure: JSON strings, and the `\\u` escapes an answer that was to be JSON
and does not parse is read with (docs/termlists.md)."""
import pytest

from governance.screening import text as textlib


@pytest.mark.parametrize("written, read", [
    ('{"city": "\\u0052abatt"', '{"city": "Rabatt"'),
    ("\\u004B\\u0075nde", "Kunde"),  # upper-case hex digits
    ("\\ud83d\\ude00", "\U0001F600"),  # a surrogate pair is one character
    ("\\u0022 \\u005c \\u000a \\ud800 x", "\\u0022 \\u005c \\u000a \\ud800 x"),  # kept: a parser reads the same
    ("\\U0052abatt", "\\U0052abatt"),  # not a JSON escape
    ("no escapes", "no escapes"),
])
def test_unicode_escapes_are_decoded_where_a_parser_would_decode_them(written, read):
    assert textlib.decode_unicode_escapes(written) == read


@pytest.mark.parametrize("read", [textlib.json_strings, textlib.json_search_text])
def test_json_nested_too_deep_to_walk_is_no_json(read):
    with pytest.raises(textlib.NotJSON):
        read("[" * 100_000 + "]" * 100_000)
