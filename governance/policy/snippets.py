"""The `snippets:` section: the rule text library (rule lines and context blocks)."""
from __future__ import annotations

from governance.models import normalise_tags
from governance.policy.format import SNIPPET_KEYS
from governance.policy.reading import Errors, Reader, Record, default_of, or_none
from snippets.models import Snippet


def export() -> list[dict]:
    """Every snippet, in rule-set order (sort, then identifier)."""
    return [
        {
            "identifier": s.identifier,
            "name": s.name,
            "tags": list(s.tags),
            "sort": s.sort,
            "data_class": or_none(s.data_class),
            "is_active": s.is_active,
            "hidden": s.hidden,
            "body": s.body,
        }
        for s in Snippet.objects.order_by("sort", "identifier")
    ]


def read(errors: Errors, path: str, data: dict) -> Record:
    r = Reader(errors, path, data, SNIPPET_KEYS)
    identifier = r.string("identifier", required=True)
    values = {
        "identifier": identifier,
        "name": r.string("name", required=True),
        "tags": normalise_tags(r.strings("tags")),
        "sort": r.integer("sort", default_of(Snippet, "sort")),
        "data_class": r.choice("data_class", [c for c, _label in Snippet._meta.get_field("data_class").choices],
                               "", nullable=True),
        "is_active": r.boolean("is_active", default_of(Snippet, "is_active")),
        "hidden": r.boolean("hidden", default_of(Snippet, "hidden")),
        "body": r.string("body", nullable=True),
    }
    return Record("snippets", path, identifier, values, paths={f: f for f in values}, failed=set(r.failed))
