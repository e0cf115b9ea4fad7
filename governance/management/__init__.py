"""Gavel's management commands (in commands/) and what more than one of them needs."""
import sys


def read_input(file: str, stdin=None) -> str:
    """The text of `file` as UTF-8, or standard input for '-'.

    `stdin` stands in for sys.stdin: call_command(..., stdin=StringIO(...)) lets tests feed it.
    Raises OSError or UnicodeDecodeError; each command reports those in its own error shape.
    """
    if file == "-":
        return (stdin or sys.stdin).read()
    with open(file, encoding="utf-8") as handle:
        return handle.read()
