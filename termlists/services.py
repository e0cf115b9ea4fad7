"""Term lists as the pipeline reads them: the lists in scope of a call (SPEC §5.1), each with its
matchers compiled once per list version and kept in this process (SPEC §5.5).
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from django.db import DatabaseError, transaction
from django.db.models import Subquery

from governance.models import PolicyVersion
from governance.screening import text as textlib
from termlists.matcher import TermMatcher, first_match, forget_together, matches_outside, parse_entries
from termlists.models import TermList

# Scope of a list for one call (SPEC §5.1).
ALL_TERMS = "all"  # forbidden and required terms apply
FORBIDDEN_ONLY = "forbidden_only"  # the call does not state the site or language the list is bound to


class TableMissing(Exception):
    """The term list table does not exist yet (code deployed, migrations not run)."""


@dataclass(frozen=True)
class CompiledList:
    """One saved version of a list, its terms compiled."""

    name: str
    mode: str
    message: str
    forbidden: TermMatcher
    required: TermMatcher
    # forbidden term (as the matcher reports it) -> its replacement, for the terms that carry one
    suggestions: dict = field(default_factory=dict)


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

    A site binding narrows, never widens: a call stating another site is out of scope; a call stating
    none gets the forbidden terms (a false block is visible) but not the required ones (demanding another
    site's term would be a false block with no way out).

    A language binding never takes a list out of scope (issue 41): the language is a property of the text,
    which Gavel does not detect, so the text's language is unknown whatever the caller states, and a list's
    forbidden terms apply to a text of unknown language (SPEC §5.1). A caller stating the list's language
    adds its required terms; stating another one, or none, leaves the forbidden terms only -- a caller
    cannot switch a check off (§3). docs/termlists.md says why.
    """
    scope = ALL_TERMS
    if site:
        if not facts.site:
            scope = FORBIDDEN_ONLY
        elif facts.site != site:
            return None
    if language and not (facts.language and _language_matches(language, facts.language)):
        scope = FORBIDDEN_ONLY
    return scope


# --- loading ---
# A missing term-list table, as PostgreSQL, SQLite and MySQL word it. Only a table: SPEC §4 lets the
# text pass only while the lists cannot exist yet. A missing column means the table is there, with
# lists in it that cannot be read, and those fail closed like any other unreadable list. The
# lookbehind keeps out PostgreSQL's `column "mode" of relation "termlists_termlist" does not exist`.
_MISSING_TABLE_RE = re.compile(
    r'(?<!of )relation "(?:\w+\.)?termlists_termlist\w*" does not exist'
    r"|no such table: (?:\w+\.)?termlists_termlist\w*"
    r"|table '(?:\w+\.)?termlists_termlist\w*' doesn't exist"
)


def _is_missing_table(exc: Exception) -> bool:
    return _MISSING_TABLE_RE.search(str(exc).lower()) is not None


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


@dataclass(frozen=True)
class ScopeRow:
    """What the scope query reads of one list named by one of the call's configurations."""

    configuration_id: int
    id: int
    name: str
    site: str
    language: str
    mode: str
    message: str
    updated_at: object
    policy_version: int


def _scope_rows(configuration_ids: list[int]) -> list[ScopeRow]:
    """The active lists naming any of these configurations, one row per link, by list name.

    One query: the links joined to their lists, the policy version as a subquery, terms left out
    (they are read only when a list version is compiled). Plain values, no model instances: this
    runs on every screening.
    """
    version = PolicyVersion.objects.filter(pk=1).values("value")[:1]
    rows = (
        TermList.configurations.through.objects.filter(
            configuration_id__in=configuration_ids, termlist__is_active=True
        )
        .annotate(policy_version=Subquery(version))
        .values_list("configuration_id", "termlist_id", "termlist__name", "termlist__site",
                     "termlist__language", "termlist__mode", "termlist__message", "termlist__updated_at",
                     "policy_version")
    )
    # No row yet means the version was never bumped: PolicyVersion.current() calls that 1.
    found = [ScopeRow(*row[:-1], policy_version=row[-1] or 1) for row in rows]
    found.sort(key=lambda row: (row.name, row.id))
    return found


# (policy version, {configuration ids: scope rows}), in this process. Every edit of a list, its scope or
# a configuration bumps the policy version, which each request reads with its configurations
# (governance.screening.service.resolve_configurations): rows are only used under the version they were read
# at, so they are never staler than the version the request read. A request that finds another
# version starts a new dict, so two threads on different versions never mix.
_scope_cache: dict = {"entry": (None, {})}
SCOPE_CACHE_ENTRIES = 1024  # sets of configurations kept per version


def _cached_scope_rows(configuration_ids: list[int], facts) -> list[ScopeRow]:
    version = getattr(facts, "policy_version", None)
    if version is None:
        return _guarded(lambda: _scope_rows(configuration_ids))
    key = tuple(sorted(configuration_ids))
    held_version, held = _scope_cache["entry"]
    if held_version != version:
        held = {}
        _scope_cache["entry"] = (version, held)
    rows = held.get(key)
    if rows is None:
        rows = _guarded(lambda: _scope_rows(configuration_ids))
        if len(held) < SCOPE_CACHE_ENTRIES:
            held[key] = rows
    return rows


def lists_for(facts) -> list[ListInScope]:
    """The active lists that apply to the call, by name, each once, with compiled matchers.

    Reuses the scope rows any_list_applies read for the same call facts. Raises TableMissing when the
    table does not exist; any other failure propagates (the caller fails closed).
    """
    configurations = facts.configurations
    if not configurations:
        return []  # no configuration on a call: no list applies
    # The queries inside are guarded one by one (a cache hit costs no savepoint).
    return _load(facts, configurations)


def _load(facts, configurations) -> list[ListInScope]:
    by_id = {config.pk: config for config in configurations}
    rank = {config.pk: position for position, config in enumerate(configurations)}
    chosen: dict[int, ScopeRow] = {}
    scopes: dict[int, str] = {}
    rows = facts.term_list_rows
    if rows is None:
        rows = _cached_scope_rows(list(by_id), facts)
    if rows:
        _forget_stale(rows[0].policy_version)
    for row in rows:
        scope = scope_of(row.site, row.language, facts)
        if scope is None:
            continue
        # Name the call's own configuration before one of `also` when a list names both.
        held = chosen.get(row.id)
        if held is None or rank[row.configuration_id] < rank[held.configuration_id]:
            chosen[row.id], scopes[row.id] = row, scope
    return [
        ListInScope(compiled_list(row), scopes[row.id], by_id[row.configuration_id]) for row in chosen.values()
    ]


def any_list_applies(facts) -> bool:
    """Whether any list applies to the call (decides whether a stream is held). No compiling."""
    configurations = facts.configurations
    if not configurations:
        return False
    rows = _cached_scope_rows([config.pk for config in configurations], facts)
    # A held stream is screened next, with these facts: lists_for then reads no scope again.
    facts.term_list_rows = rows
    return any(scope_of(row.site, row.language, facts) for row in rows)


# --- compiled matchers, per list version (SPEC §5.5) ---
# list id -> (key, CompiledList). One entry per list: a newer key replaces the older one, so the dict
# never holds more than one version of a list. The key carries the policy version (bumped by every
# policy edit, governance/records/signals.py) and the list's own `updated_at` (changed by every save), so a
# saved list is never matched with its former terms, whichever process saved it.
_compiled: dict[int, tuple[tuple, CompiledList]] = {}
_compile_lock = threading.Lock()
_pruned_at = 0  # the policy version _forget_stale last pruned for


def _forget_stale(policy_version: int) -> None:
    """Drop the matchers compiled under an older policy version: their key can never match again.

    This is how a deleted list leaves every process (its delete bumps the policy version); lists of
    other configurations compiled under the current version stay. Prunes once per version seen.
    """
    global _pruned_at
    if policy_version <= _pruned_at:
        return
    _pruned_at = policy_version
    for list_id, (key, _) in list(_compiled.items()):
        if key[0] < policy_version:
            _compiled.pop(list_id, None)
    forget_together()


def compiled_list(row: ScopeRow, terms: tuple[str, str] | None = None) -> CompiledList:
    """The list's matchers for the saved version `row` describes, compiled on first use in this process.

    `terms` (forbidden, required) saves a query when the caller already holds them.
    """
    key = (row.policy_version, row.updated_at)
    held = _compiled.get(row.id)
    if held is not None and held[0] == key:
        return held[1]
    with _compile_lock:  # one thread compiles; the others then find its result
        held = _compiled.get(row.id)
        if held is not None and held[0] == key:
            return held[1]
        forbidden, required = terms if terms is not None else _guarded(lambda: _terms_of(row.id))
        # The list splits a line's suggestion off (`Kunde => Kundin oder Kunde`): the matcher sees the term.
        entries = parse_entries(forbidden)
        compiled = CompiledList(
            name=row.name,
            mode=row.mode,
            message=row.message,
            forbidden=TermMatcher([term for term, _ in entries]),
            required=TermMatcher(required),
            suggestions={term: suggestion for term, suggestion in entries if suggestion},
        )
        _compiled[row.id] = (key, compiled)
        return compiled


def compiled_record(term_list) -> CompiledList:
    """The compiled matchers of a TermList record as saved (the admin's "try it" box)."""
    row = ScopeRow(
        configuration_id=0, id=term_list.pk, name=term_list.name, site=term_list.site,
        language=term_list.language, mode=term_list.mode, message=term_list.message,
        updated_at=term_list.updated_at, policy_version=PolicyVersion.current(),
    )
    return compiled_list(row, (term_list.forbidden, term_list.required))


def _terms_of(list_id: int) -> tuple[str, str]:
    return TermList.objects.filter(pk=list_id).values_list("forbidden", "required").get()


def forget_compiled() -> None:
    """Drop every compiled matcher and cached scope of this process (tests, benchmarks)."""
    global _pruned_at
    _compiled.clear()
    _scope_cache["entry"] = (None, {})
    _pruned_at = 0
    forget_together()


# --- the admin's "try it" box ---
def try_text(term_list, text: str) -> dict:
    """What the saved list finds in `text`: each forbidden term with a passage, the required terms
    present and missing, and whether the text is finished text (long enough to be asked for them)."""
    compiled = compiled_record(term_list)
    found = [term for term in compiled.forbidden.find(text)
             if term not in compiled.suggestions
             or counts_outside_suggestion(term, compiled.suggestions[term], text)]
    present = set(compiled.required.find(text))
    words = textlib.count_words(text)
    return {
        "forbidden": [{"term": term, "passage": locate(term, text, compiled.suggestions.get(term))[0],
                       "suggestion": compiled.suggestions.get(term)} for term in found],
        "required_present": [term for term in compiled.required.terms if term in present],
        "required_missing": [term for term in compiled.required.terms if term not in present],
        "words": words,
        "minimum_words": textlib.FINISHED_TEXT_MIN_WORDS,
        "finished": words >= textlib.FINISHED_TEXT_MIN_WORDS,
    }


# --- what a hit looks like ---
def counts_outside_suggestion(term: str, suggestion: str, text: str) -> bool:
    """Whether `term` occurs in `text` (as delivered or with markup removed) other than inside its own
    suggestion: `Kundin oder Kunde` holds `Kunde`, but is what the list asks for."""
    if matches_outside(term, suggestion, text):
        return True
    stripped = textlib.strip_markup(text)
    return stripped != text and bool(matches_outside(term, suggestion, stripped))


def locate(term: str, text: str, suggestion: str | None = None) -> tuple[str | None, int | None]:
    """Where `term` occurs in `text`: (passage, offset into `text`) as delivered; else (passage found
    with markup removed, None); else (None, None).

    The matcher's own rules decide where (matcher.first_match), so the passage is a hit find() counts:
    a combining mark belongs to its word, and a trailing `*` quotes the whole word.
    """
    span = _first(term, text, suggestion)
    if span is not None:
        return text[span[0]:span[1]], span[0]
    stripped = textlib.strip_markup(text)
    if stripped != text:
        span = _first(term, stripped, suggestion)
        if span is not None:
            return stripped[span[0]:span[1]], None
    return None, None


def _first(term: str, text: str, suggestion: str | None) -> tuple[int, int] | None:
    if not suggestion:
        return first_match(term, text)
    spans = matches_outside(term, suggestion, text)
    return spans[0] if spans else None
