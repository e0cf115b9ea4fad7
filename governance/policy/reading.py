"""Reading a policy document: every error is collected with its path, values are typed at their key."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext as _

from governance.policy.messages import (MSG_AT_LEAST, MSG_CHOICE, MSG_EMPTY, MSG_LISTED_TWICE, MSG_NOT_BOOLEAN,
                                        MSG_NOT_INTEGER, MSG_NOT_LIST, MSG_NOT_MAPPING, MSG_NOT_NUMBER,
                                        MSG_NOT_STRING, MSG_RANGE, MSG_REQUIRED, MSG_SELF_REFERENCE,
                                        MSG_UNKNOWN_KEY)


# The largest value every supported database keeps in an integer column (PostgreSQL's integer).
LARGEST_INTEGER = 2_147_483_647

class Errors:
    def __init__(self):
        self.by_path: dict[str, list[str]] = {}
        self.structural = False  # the document breaks the policy schema (governance/policy/schema.py)

    def add(self, path: str, message) -> None:
        messages = self.by_path.setdefault(path, [])
        text = str(message)
        if text not in messages:
            messages.append(text)

    def __bool__(self) -> bool:
        return bool(self.by_path)


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value)


MISSING = object()


class Reader:
    """Typed access to one mapping of the document; each problem is reported at its path."""

    def __init__(self, errors: Errors, path: str, data: dict, keys: tuple[str, ...]):
        self.errors = errors
        self.path = path
        self.data = data
        self.failed: set[str] = set()
        for key in data:
            if key not in keys:
                errors.add(self.at(key), MSG_UNKNOWN_KEY)

    def at(self, key) -> str:
        return f"{self.path}.{key}"

    def fail(self, key: str, message) -> None:
        self.errors.add(self.at(key), message)
        self.failed.add(key)

    def raw(self, key: str, *, required: bool = False):
        value = self.data.get(key, MISSING)
        if value is MISSING and required:
            self.fail(key, MSG_REQUIRED)
        return value

    def string(self, key: str, default: str = "", *, required=False, nullable=False, non_empty=False) -> str:
        """A string; with `nullable`, null (and a missing key) means blank."""
        value = self.raw(key, required=required)
        if value is MISSING:
            return default
        if value is None and nullable:
            return ""
        if not isinstance(value, str):
            self.fail(key, MSG_NOT_STRING)
            return default
        if (required or non_empty) and not value.strip():
            self.fail(key, MSG_EMPTY)
        return value

    def choice(self, key: str, choices, default: str, *, nullable=False) -> str:
        value = self.raw(key)
        if value is MISSING or (value is None and nullable):
            return default if value is MISSING else ""
        if value not in choices:
            shown = ", ".join(choices) + (", null" if nullable else "")
            self.fail(key, _(str(MSG_CHOICE)) % {"choices": shown})
            return default
        return value

    def integer(self, key: str, default, *, minimum=None, maximum=LARGEST_INTEGER, nullable=False):
        value = self.raw(key)
        if value is MISSING or (value is None and nullable):
            return default if value is MISSING else None
        if not is_int(value):
            self.fail(key, MSG_NOT_INTEGER)
            return default
        if minimum is not None and value < minimum:
            self.fail(key, _(str(MSG_AT_LEAST)) % {"minimum": minimum})
        elif value > maximum or (minimum is None and value < -maximum - 1):
            # Past what its integer column holds: an error at its path, never a failed write.
            self.fail(key, _(str(MSG_RANGE)) % {"minimum": -maximum - 1 if minimum is None else minimum,
                                                "maximum": maximum})
        return value

    def number(self, key: str, default, *, minimum=None, maximum=None, nullable=False):
        value = self.raw(key)
        if value is MISSING or (value is None and nullable):
            return default if value is MISSING else None
        if not is_number(value):
            self.fail(key, MSG_NOT_NUMBER)
            return default
        if maximum is not None and not minimum <= value <= maximum:
            self.fail(key, _(str(MSG_RANGE)) % {"minimum": minimum, "maximum": maximum})
        elif minimum is not None and value < minimum:
            self.fail(key, _(str(MSG_AT_LEAST)) % {"minimum": minimum})
        return float(value)

    def decimal(self, key: str, default, *, nullable=False):
        """A number for a DecimalField: read through its shortest decimal spelling (0.15, not 0.1499…)."""
        value = self.raw(key)
        if value is MISSING or (value is None and nullable):
            return default if value is MISSING else None
        if not is_number(value):
            self.fail(key, MSG_NOT_NUMBER)
            return default
        if value < 0:
            self.fail(key, _(str(MSG_AT_LEAST)) % {"minimum": 0})
        try:
            return Decimal(str(value))
        except InvalidOperation:
            self.fail(key, MSG_NOT_NUMBER)
            return default

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is MISSING:
            return default
        if not isinstance(value, bool):
            self.fail(key, MSG_NOT_BOOLEAN)
            return default
        return value

    def strings(self, key: str, *, required=False, keep_positions=False) -> list:
        """A list of strings; a wrong item is reported at `key[index]` (None in its place with keep_positions)."""
        value = self.raw(key, required=required)
        if value is MISSING or value is None:
            return []
        if not isinstance(value, list):
            self.fail(key, MSG_NOT_LIST)
            return []
        result = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.errors.add(f"{self.at(key)}[{index}]", MSG_NOT_STRING)
                self.failed.add(key)
                if keep_positions:
                    result.append(None)
            else:
                result.append(item)
        return result

    def mapping(self, key: str, keys: tuple[str, ...]) -> Reader:
        value = self.raw(key)
        if value is MISSING or value is None:
            value = {}
        elif not isinstance(value, dict):
            self.fail(key, MSG_NOT_MAPPING)
            value = {}
        return Reader(self.errors, self.at(key), value, keys)


@dataclass
class Record:
    """One record of the document, read: model field values plus references by name."""

    section: str
    path: str
    name: str
    values: dict  # model field -> value, as stored
    refs: dict = field(default_factory=dict)  # provider / escalation / configurations, by name
    # model field -> path within the record, for field-level validation messages
    paths: dict = field(default_factory=dict)
    failed: set = field(default_factory=set)  # model fields whose value could not be read

    @property
    def label(self) -> str:
        return f"{self.section}:{self.name}"


def default_of(model, field_name: str):
    return model._meta.get_field(field_name).get_default()


def identifiers(reader: Reader, key: str, errors: Errors, *, own: str | None = None) -> list[str]:
    """A list of configuration identifiers: no duplicates, never the configuration itself.

    A wrong item stays in the list as None, so later checks report the others at their own index.
    """
    values = reader.strings(key, keep_positions=True)
    seen = set()
    for index, value in enumerate(values):
        item_path = f"{reader.at(key)}[{index}]"
        if value is None:
            continue
        if value in seen:
            errors.add(item_path, MSG_LISTED_TWICE)
        elif own is not None and value == own:
            errors.add(item_path, MSG_SELF_REFERENCE)
        seen.add(value)
    return values


def number(value):
    """A Decimal or float as a plain number for YAML and JSON; None stays None."""
    if value is None:
        return None
    return float(value)


def or_none(value: str):
    return value or None


@dataclass
class Document:
    """A validated document: the records of each section present in it."""

    sections: dict[str, list[Record]]

    def present(self, section: str) -> bool:
        return section in self.sections

    def records(self, section: str) -> list[Record]:
        return self.sections.get(section, [])

