"""The `term_lists:` section: forbidden and required terms, one item per term, with their scope."""
from __future__ import annotations

from django.utils.translation import gettext as _

from governance.policy.format import LANGUAGE_RE, TERM_LIST_KEYS
from governance.policy.messages import (MSG_LANGUAGE, MSG_NO_CONFIGURATION, MSG_NOT_LIST, MSG_NOT_STRING,
                                        MSG_SURROUNDING_SPACE, MSG_TERM_LINE_BREAK)
from governance.policy.reading import MISSING, Errors, Reader, Record, default_of, identifiers, or_none
from termlists.matcher import entry_line, parse_entries, parse_terms, validate_entry
from termlists.models import TermList


def export() -> list[dict]:
    """Every term list, by name, its terms as a list."""
    return [
        {
            "name": t.name,
            "configurations": sorted(c.identifier for c in t.configurations.all()),
            # A term with a suggestion is written as the list writes it: "Kunde => Kundin oder Kunde".
            "forbidden": [entry_line(*entry) for entry in parse_entries(t.forbidden)],
            "required": parse_terms(t.required),
            "site": or_none(t.site),
            "language": or_none(t.language),
            "mode": t.mode,
            "message": t.message,
            "is_active": t.is_active,
        }
        for t in TermList.objects.prefetch_related("configurations").order_by("name")
    ]


def _terms(reader: Reader, key: str, errors: Errors) -> str:
    """A term list's terms as stored (one per line, normalised); each bad term reported at its index.

    Forbidden terms may carry a suggestion (`"Kunde => Kundin oder Kunde"`); required terms may not.
    """
    terms = reader.raw(key)
    if terms is MISSING or terms is None:
        return ""
    if not isinstance(terms, list):
        reader.fail(key, MSG_NOT_LIST)
        return ""
    good = []
    for index, term in enumerate(terms):
        item_path = f"{reader.at(key)}[{index}]"
        if not isinstance(term, str):
            errors.add(item_path, MSG_NOT_STRING)
        elif "\n" in term.strip() or "\r" in term.strip():
            errors.add(item_path, MSG_TERM_LINE_BREAK)
        elif (problem := validate_entry(term, suggestion_allowed=key == "forbidden")) is not None:
            # The matcher's messages are plain English constants, translated by identity.
            errors.add(item_path, _(problem))
        else:
            good.append(term)
    if key == "forbidden":
        return "\n".join(entry_line(*entry) for entry in parse_entries(good))
    return "\n".join(parse_terms(good))


def read(errors: Errors, path: str, data: dict) -> Record:
    r = Reader(errors, path, data, TERM_LIST_KEYS)
    name = r.string("name", required=True)
    if name != name.strip():
        r.fail("name", MSG_SURROUNDING_SPACE)
    site = r.string("site", nullable=True)
    language = r.string("language", nullable=True)
    if language and not LANGUAGE_RE.match(language):
        r.fail("language", MSG_LANGUAGE)
    configurations = identifiers(r, "configurations", errors)
    if not configurations and "configurations" not in r.failed:
        r.fail("configurations", MSG_NO_CONFIGURATION)
    values = {
        "name": name,
        "forbidden": _terms(r, "forbidden", errors),
        "required": _terms(r, "required", errors),
        "site": site,
        "language": language,
        "mode": r.choice("mode", TermList.Mode.values, default_of(TermList, "mode")),
        "message": r.string("message", nullable=True),
        "is_active": r.boolean("is_active", default_of(TermList, "is_active")),
    }
    return Record("term_lists", path, name, values, refs={"configurations": configurations},
                   paths={f: f for f in values}, failed=set(r.failed))
