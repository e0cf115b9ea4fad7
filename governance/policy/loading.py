"""Reading a policy document safely (issue 25): no YAML aliases, bounded nesting and size, before any
part of Gavel walks it. Every place that reads a policy file as YAML, or takes a document as JSON,
passes here, so a 400-byte alias bomb or a 500-deep draft is a clear 400, never minutes of CPU or a 500.
"""
from __future__ import annotations

import yaml
from django.utils.translation import gettext as _

# A policy document is shallow (document, section, record, expect, findings, finding); an example's tool
# calls add their arguments. Past these it is refused before it is read.
MAX_DEPTH = 64
MAX_NODES = 200_000


class DocumentTooLarge(yaml.YAMLError):
    """Refused before it is read: an alias, too deep, too many values. A YAMLError, so every place that
    reports a document that does not parse reports this too."""


def _too_deep() -> str:
    return _("The policy document is nested more than %(n)d levels deep.") % {"n": MAX_DEPTH}


def _too_many() -> str:
    return _("The policy document holds more than %(n)d values.") % {"n": MAX_NODES}


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses aliases (a policy document never needs one: each record is written out)
    and counts nesting and values while it composes, so a bomb is refused before it is built."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise DocumentTooLarge(_("YAML aliases (*name) are not allowed in a policy document; write the "
                                     "value out.") + f" ({event.start_mark})".replace("\n", " "))
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise DocumentTooLarge(_too_many())
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise DocumentTooLarge(_too_deep())
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text):
    """The document a policy file holds (YAML, or JSON, which is YAML), bounded; DocumentTooLarge or
    another yaml.YAMLError when it cannot be read."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except RecursionError as exc:
        raise DocumentTooLarge(_too_deep()) from exc


def check_document(document) -> None:
    """Raise DocumentTooLarge when a document already parsed (JSON) is nested or sized past the bounds.
    Walks with a stack, never recursion, so the check itself cannot overflow."""
    stack = [(document, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise DocumentTooLarge(_too_many())
        if depth > MAX_DEPTH:
            raise DocumentTooLarge(_too_deep())
        if isinstance(node, dict):
            stack.extend((value, depth + 1) for value in node.values())
            nodes += len(node)  # the keys count too
        elif isinstance(node, list):
            stack.extend((item, depth + 1) for item in node)
