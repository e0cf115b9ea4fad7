"""Schemathesis hooks for the schema fuzz run (SCHEMATHESIS_HOOKS=tests.production.schemathesis_hooks).

Teaches the fuzzer Gavel's one custom string format: `json`, a string holding a JSON document
(tool-call arguments, as OpenAI sends them).
"""
import ast
import json
import re
import threading

import schemathesis
from hypothesis import strategies as st

_scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)

schemathesis.openapi.format("json", _json.map(json.dumps))

# CPython 3.11 keeps the AST constructor's recursion depth in one counter per interpreter, so two
# threads turning source into an AST at once can raise "SystemError: AST constructor recursion depth
# mismatch" (python/cpython#106905). The fuzzer's two workers are threads, and Hypothesis parses
# the source of every lambda it describes: CI once failed on that error inside the fuzzer, not on a
# finding. One parse at a time keeps the run about Gavel.
_parse_lock = threading.RLock()
_parse = ast.parse


def _parse_one_at_a_time(*args, **kwargs):
    with _parse_lock:
        return _parse(*args, **kwargs)


ast.parse = _parse_one_at_a_time

# `served_by` names a provider, and an unknown one is a 400 (SPEC §11.1): no schema can list the
# providers a database holds (and a fuzzed PUT policy may have removed any the test made). A
# schema-valid name is replaced by null ("not known"), which the schema allows too; a value the
# schema refuses is left as it is, so negative cases stay negative.
_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,100}$")


# `callback_url` must name a host on GAVEL_CALLBACK_HOSTS (empty in the test): a schema-valid URL is
# replaced by "" (no callback), which the schema allows too.


def _is_positive(case) -> bool:
    meta = getattr(case, "meta", None)
    return meta is None or meta.generation.mode.is_positive


def _json_arguments(calls) -> None:
    """Not every phase (the stateful one) draws a `json`-format string from the format's strategy: in a
    positive case, a string of tool arguments that does not parse is sent as the JSON string it spells."""
    if not isinstance(calls, list):
        return
    for call in calls:
        if isinstance(call, dict) and isinstance(call.get("arguments"), str):
            try:
                json.loads(call["arguments"])
            except ValueError:
                call["arguments"] = json.dumps(call["arguments"])


@schemathesis.hook
def before_call(ctx, case, kwargs):
    """Every phase (coverage and stateful included) sends through here."""
    body = case.body
    if case.operation.method.upper() != "POST" or not isinstance(body, dict):
        return
    path = case.operation.path
    if path.endswith("/screenings"):
        if isinstance(body.get("served_by"), str) and _SLUG.match(body["served_by"]):
            body["served_by"] = None
        if _is_positive(case):
            _json_arguments(body.get("tool_calls"))
            # The coverage phase varies `format` to json around a documented example whose text is prose;
            # with format json the schema's text is a `json`-format string, which its validator cannot check.
            if body.get("format") == "json" and isinstance(body.get("text"), str):
                try:
                    json.loads(body["text"])
                except ValueError:
                    body["text"] = json.dumps(body["text"])
    if path.endswith("/batches"):  # the batch's callback and each item's, as for a task
        for holder in [body] + [i for i in body.get("items") or [] if isinstance(i, dict)]:
            url = holder.get("callback_url")
            if isinstance(url, str) and len(url) <= 1000:
                holder["callback_url"] = ""
    if path.endswith("/tasks"):
        url = body.get("callback_url")
        if isinstance(url, str) and len(url) <= 1000:
            body["callback_url"] = ""
        if _is_positive(case):
            _json_arguments(body.get("tool_calls"))


# gunicorn refuses a request line over 4094 bytes itself (limit_request_line), with its own plain
# 400 page, before Gavel sees the request: no schema of Gavel's can document that answer. A query
# that long (the fuzzer repeats a parameter dozens of times) is no request a client of Gavel sends.
_LONGEST_QUERY = 3000


@schemathesis.hook
def filter_query(ctx, query):
    from urllib.parse import urlencode

    try:
        return query is None or len(urlencode(query, doseq=True)) <= _LONGEST_QUERY
    except (TypeError, ValueError):
        return True
