"""Schemathesis hooks for the schema fuzz run (SCHEMATHESIS_HOOKS=tests.production.schemathesis_hooks).

Teaches the fuzzer Gavel's one custom string format: `json`, a string holding a JSON document
(tool-call arguments, as OpenAI sends them).
"""
import json
import re

import schemathesis
from hypothesis import strategies as st

_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)

schemathesis.openapi.format("json", _json.map(json.dumps))

# `served_by` names a provider, and an unknown one is a 400 (SPEC §11.1): no schema can list the
# providers a database holds (and a fuzzed PUT policy may have removed any the test made). A
# schema-valid name is replaced by null ("not known"), which the schema allows too; a value the
# schema refuses is left as it is, so negative cases stay negative.
_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,100}$")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    """Every phase (coverage included) sends through here."""
    if case.operation.method.upper() != "POST" or not case.operation.path.endswith("/screenings"):
        return
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("served_by"), str) and _SLUG.match(body["served_by"]):
        body["served_by"] = None
