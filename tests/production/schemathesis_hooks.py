"""Schemathesis hooks for the schema fuzz run (SCHEMATHESIS_HOOKS=tests.production.schemathesis_hooks).

None of them touches a request, a response or a check (issue 25, finding 17: the run finds nothing
without help). What is left works around the fuzzer's own environment:

CPython 3.11 keeps the AST constructor's recursion depth in one counter per interpreter, so two threads
turning source into an AST at once can raise "SystemError: AST constructor recursion depth mismatch"
(python/cpython#106905). The fuzzer's two workers are threads, and Hypothesis parses the source of every
lambda it describes: CI once failed on that error inside the fuzzer, not on a finding. One parse at a
time keeps the run about Gavel.
"""
import ast
import threading

_parse_lock = threading.RLock()
_parse = ast.parse


def _parse_one_at_a_time(*args, **kwargs):
    with _parse_lock:
        return _parse(*args, **kwargs)


ast.parse = _parse_one_at_a_time
