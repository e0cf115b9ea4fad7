"""Why a draft cannot be handed on (SPEC §12.5): its changes make no valid policy. The refusal names every
path as a person reads the draft — a record by its name, not by its place in the file."""
from django.utils.translation import gettext_lazy

from governance.errors import Unprocessable
from governance.policy.format import NAME_KEYS


class DraftInvalid(Unprocessable):
    """The draft's changes, applied to the live policy, do not make a valid policy (each path named)."""

    default_code = "invalid_policy"


MSG_DRAFT_INVALID = gettext_lazy("The draft's changes do not make a valid policy, so it cannot be published: "
                                 "%(errors)s. Fix these in the draft (or withdraw it).")
MSG_DRAFT_CONFLICTS = gettext_lazy("The draft conflicts with the live policy in %(count)d record(s): %(names)s. Resolve "
                                   "each (keep the draft's or the live record) before publishing.")
MSG_DRAFT_CHANGED = gettext_lazy("The draft changed after you read it, so nothing was published: read it again, then "
                                 "publish (or schedule) the revision you read.")


def named_paths(errors: dict, document: dict) -> dict:
    """A policy's error paths with each record named by its name: `examples["plain-news"].expect` rather than
    `examples[3].expect`, where the record at that index has a name (as the draft's report names them)."""
    named = {}
    for path, messages in errors.items():
        section, bracket, rest = path.partition("[")
        index, closed, tail = rest.partition("]")
        records = document.get(section) if bracket and closed and index.isdigit() else None
        record = records[int(index)] if isinstance(records, list) and int(index) < len(records) else None
        name = record.get(NAME_KEYS.get(section, "name")) if isinstance(record, dict) else None
        named[f'{section}["{name}"]{tail}' if name else path] = list(messages)
    return named
