"""Term lists as the pipeline reads them: the lists in scope of a call (SPEC §5.1), each with its
matchers compiled once per list version and kept in this process (SPEC §5.5).
"""
from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass

from django.db import DatabaseError, transaction

from governance import text as textlib
from termlists.matcher import TermMatcher

logger = logging.getLogger("gavel.termlists")

# Scope of a list for one call (SPEC §5.1).
ALL_TERMS = "all"  # forbidden and required terms apply
FORBIDDEN_ONLY = "forbidden_only"  # the call does not state the site or language the list is bound to


class TableMissing(Exception):
    """The term list table does not exist yet (code deployed, migrations not run)."""


@dataclass(frozen=True)
class CompiledList:
    """One saved version of a list, its terms compiled."""

    id: int
    name: str
    mode: str
    message: str
    forbidden: TermMatcher
    required: TermMatcher


@dataclass(frozen=True)
class ListInScope:
    """A list that applies to a call, how far it applies, and the configuration through which it does."""

    compiled: CompiledList
    scope: str
    configuration: object  # governance.models.Configuration

    @property
    def required_apply(self) -> bool:
        return self.scope == ALL_TERMS


# --- scope (SPEC §5.1) ---
def _language_matches(list_language: str, call_language: str) -> bool:
    """Equal, or the call's is a regional form of the list's (`de` matches `de-AT`), case aside."""
    wanted = list_language.strip().lower().replace("_", "-")
    stated = call_language.strip().lower().replace("_", "-")
    return stated == wanted or stated.startswith(wanted + "-")


def scope_of(site: str, language: str, facts) -> str | None:
    """How a list bound to `site`/`language` applies to a call: ALL_TERMS, FORBIDDEN_ONLY, or None.

    A binding narrows, never widens: a call stating another site or language is out of scope; a call
    stating none gets the forbidden terms (a false block is visible) but not the required ones
    (demanding another site's term would be a false block with no way out).
    """
    scope = ALL_TERMS
    if site:
        if not facts.site:
            scope = FORBIDDEN_ONLY
        elif facts.site != site:
            return None
    if language:
        if not facts.language:
            scope = FORBIDDEN_ONLY
        elif not _language_matches(language, facts.language):
            return None
    return scope


# --- loading ---
_TABLE_MISSING_MARKERS = ("no such table", "does not exist", "doesn't exist")


def _is_missing_table(exc: Exception) -> bool:
    message = str(exc).lower()
    return "termlists_termlist" in message and any(marker in message for marker in _TABLE_MISSING_MARKERS)


def _guarded(query):
    """Run `query()`; a missing term-list table becomes TableMissing, anything else propagates.

    Inside a transaction the query runs under a savepoint, so a failed query (the table missing on
    PostgreSQL) does not poison the caller's transaction.
    """
    try:
        if transaction.get_connection().in_atomic_block:
            with transaction.atomic():
                return query()
        return query()
    except DatabaseError as exc:
        if _is_missing_table(exc):
            raise TableMissing(str(exc)) from exc
        raise


def _scope_rows(configuration_ids: list[int]) -> list:
    """(link to a configuration, its active list) rows: one query, terms deferred."""
    from termlists.models import TermList

    through = TermList.configurations.through
    rows = (
        through.objects.filter(configuration_id__in=configuration_ids, termlist__is_active=True)
        .select_related("termlist")
        .defer("termlist__forbidden", "termlist__required")
        .order_by("termlist__name", "termlist_id")
    )
    return list(rows)


def lists_for(facts) -> list[ListInScope]:
    """The active lists that apply to the call, by name, each once, with compiled matchers.

    Raises TableMissing when the table does not exist; any other failure propagates (the caller
    fails closed).
    """
    configurations = facts.configurations
    if not configurations:
        return []  # no configuration on a call: no list applies
    by_id = {config.pk: config for config in configurations}
    rank = {config.pk: position for position, config in enumerate(configurations)}
    rows = _guarded(lambda: _scope_rows(list(by_id)))
    chosen: dict[int, tuple] = {}
    for row in rows:
        term_list = row.termlist
        scope = scope_of(term_list.site, term_list.language, facts)
        if scope is None:
            continue
        # Name the call's own configuration before one of `also` when a list names both.
        held = chosen.get(term_list.pk)
        if held is None or rank[row.configuration_id] < rank[held[1]]:
            chosen[term_list.pk] = (term_list, row.configuration_id, scope)
    if not chosen:
        return []
    version = _policy_version()
    return [
        ListInScope(compiled_list(term_list, version), scope, by_id[config_id])
        for term_list, config_id, scope in chosen.values()
    ]


def any_list_applies(facts) -> bool:
    """Whether any list applies to the call (decides whether a stream is held). No compiling."""
    configurations = facts.configurations
    if not configurations:
        return False
    rows = _guarded(lambda: _scope_rows([config.pk for config in configurations]))
    return any(scope_of(row.termlist.site, row.termlist.language, facts) for row in rows)


def _policy_version() -> int:
    from governance.models import PolicyVersion

    return PolicyVersion.current()


# --- compiled matchers, per list version (SPEC §5.5) ---
# list id -> (key, CompiledList). One entry per list: a newer key replaces the older one, so the dict
# never holds more than one version of a list. The key carries the policy version (bumped by every
# policy edit, governance/signals.py) and the list's own `updated_at` (changed by every save), so a
# saved list is never matched with its former terms, whichever process saved it.
_compiled: dict[int, tuple[tuple, CompiledList]] = {}
_compile_lock = threading.Lock()


def compiled_list(term_list, version: int | None = None) -> CompiledList:
    """The list's matchers for its saved version, compiled on first use in this process."""
    if version is None:
        version = _policy_version()
    key = (version, term_list.updated_at)
    held = _compiled.get(term_list.pk)
    if held is not None and held[0] == key:
        return held[1]
    with _compile_lock:
        held = _compiled.get(term_list.pk)
        if held is not None and held[0] == key:
            return held[1]
        forbidden, required = _terms_of(term_list)
        compiled = CompiledList(
            id=term_list.pk,
            name=term_list.name,
            mode=term_list.mode,
            message=term_list.message,
            forbidden=TermMatcher(forbidden),
            required=TermMatcher(required),
        )
        _compiled[term_list.pk] = (key, compiled)
        return compiled


def _terms_of(term_list) -> tuple[str, str]:
    deferred = term_list.get_deferred_fields()
    if not deferred & {"forbidden", "required"}:
        return term_list.forbidden, term_list.required
    from termlists.models import TermList

    return _guarded(
        lambda: TermList.objects.filter(pk=term_list.pk).values_list("forbidden", "required").get()
    )


def forget_compiled() -> None:
    """Drop every compiled matcher of this process (tests, benchmarks)."""
    _compiled.clear()


# --- the admin's "try it" box ---
def try_text(term_list, text: str) -> dict:
    """What the saved list finds in `text`: each forbidden term with a passage, the required terms
    present and missing, and whether the text is finished text (long enough to be asked for them)."""
    compiled = compiled_list(term_list)
    found = compiled.forbidden.find(text)
    present = set(compiled.required.find(text))
    words = textlib.count_words(text)
    return {
        "forbidden": [{"term": term, "passage": locate(term, text)[0]} for term in found],
        "required_present": [term for term in compiled.required.terms if term in present],
        "required_missing": [term for term in compiled.required.terms if term not in present],
        "words": words,
        "minimum_words": textlib.FINISHED_TEXT_MIN_WORDS,
        "finished": words >= textlib.FINISHED_TEXT_MIN_WORDS,
    }


# --- what a hit looks like ---
def locate(term: str, text: str) -> tuple[str | None, int | None]:
    """Where `term` occurs in `text`: (passage, offset into `text`) as delivered; else (passage found
    with markup removed, None); else (None, None).

    Mirrors the matcher's contract closely enough to point at a hit; the matcher alone decides
    whether a term is found.
    """
    pattern = _locator(term)
    if pattern is None:
        return None, None
    stripped = textlib.strip_markup(text)
    for form, offsets in ((text, True), (stripped, stripped == text)):
        lowered = form.lower()
        if len(lowered) == len(form):
            match = pattern.search(lowered)
        else:  # lower-casing changed the length (e.g. `İ`): match the original, case aside
            match = pattern.search(form)
        if match:
            return form[match.start():match.end()], match.start() if offsets else None
    return None, None


def _locator(term: str) -> re.Pattern | None:
    term = term.strip()
    star = term.endswith("*")
    words = term.rstrip("*").lower().split()
    if not words:
        return None
    body = r"\s+".join(re.escape(word) for word in words)
    if star:
        if term.rstrip("*") != term.rstrip("*").rstrip():
            body += r"\s+"
        body += r"[^\W_]*"
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)

