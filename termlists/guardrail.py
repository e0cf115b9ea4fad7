"""The term-list step of the pipeline (SPEC §5): stop an output that holds a forbidden term or lacks a
required one, and say which list and which terms did it — never quoting the text.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from governance import messages
from termlists import services
from termlists.matcher import Prepared, prepare, together

logger = logging.getLogger("gavel.termlists")

CHECK = "term_list"
_UNREAD = object()


@dataclass
class Finding:
    """What one list found in one output: policy facts, plus where the first forbidden term sits."""

    item: services.ListInScope
    forbidden: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    passage: str | None = None
    start: int | None = None
    end: int | None = None
    tool_call: int | None = None
    argument: str | None = None

    @property
    def detail(self) -> dict:
        """The governance event's facts: list and terms (and the list's suggestions for them), never text
        (SPEC §2.7, §9)."""
        detail = {"list": self.item.compiled.name, "terms": self.forbidden, "missing": self.missing}
        if self.suggestions:
            detail["suggestions"] = self.suggestions
        return detail

    @property
    def suggestions(self) -> dict:
        """The found terms' replacements, as the list writes them (`Kunde => Kundin oder Kunde`)."""
        known = self.item.compiled.suggestions
        return {term: known[term] for term in self.forbidden if term in known}


def check_term_lists(screening) -> None:
    """Search the output for every list in scope of the call; block, report or pass (SPEC §5)."""
    try:
        in_scope = services.lists_for(screening.facts)
        if not in_scope:
            screening.check(CHECK, "skipped", "no_list")
            return
        findings = _search(screening, in_scope)
    except services.TableMissing as exc:
        # Between a code update and its migration no list can exist; stopping every output of the
        # installation for a list that cannot exist yet would help no one (SPEC §4).
        logger.warning("term lists not checked: their table does not exist yet (run migrate): %s", exc)
        screening.check(CHECK, "skipped", "table_missing")
        return
    except Exception:
        # Fail closed (SPEC §4): this is the one place that decides. An output nobody could check
        # has not passed, so lists that cannot be read or a matcher that gives up stop the text.
        logger.exception("term lists could not be checked (correlation %s)", screening.facts.correlation_id)
        _stop_unchecked(screening)
        return

    reported = [f for f in findings if f.item.compiled.mode == "report"]
    blocking = [f for f in findings if f.item.compiled.mode != "report"]
    for finding in reported:
        _report(screening, finding)
    if blocking:
        message = _block_message(screening, blocking)
        suggestion = {term: text for finding in blocking for term, text in finding.suggestions.items()}
        # The message names lists and terms only, so it is also what a record may keep.
        screening.stop(CHECK, message, message, suggestion or None)
        for finding in blocking:
            screening.record("blocked", CHECK, finding.detail, configuration=finding.item.configuration,
                             mode="block")
    screening.check(CHECK, "blocked" if blocking else "reported" if reported else "passed")


def lists_apply(facts) -> bool:
    """Whether any term list applies to the call, so its stream must be held (SPEC §8.1)."""
    try:
        return services.any_list_applies(facts)
    except services.TableMissing:
        return False
    except Exception:
        # Hold the stream: the step will then find the lists unreadable and stop the text.
        logger.exception("could not tell whether term lists apply; holding the stream")
        return True


# --- searching ---
def _forbidden_places(screening) -> list[tuple[int | None, str | None, Prepared]]:
    """(tool call index, argument path, prepared text) for every text forbidden terms are searched in
    (§5.3, §8.2).

    The answer (as delivered, and a JSON answer's decoded strings and keys), then the name, id and
    strings of every tool call not declared a read: values and object keys. Each text is prepared once
    for all the lists that search it.
    """
    places = [(None, None, text) for text in screening.answer_texts()]
    places.extend(screening.tool_call_labels())
    places.extend(screening.tool_argument_texts(keys=True))
    return [(index, path, prepare(text)) for index, path, text in places]


def _required_text(screening) -> str | None:
    """The text required terms are demanded from: finished text (§3) that is not JSON (§5.3). An answer
    that was to be JSON and does not parse is text."""
    if screening.reads_as_json:
        return None
    return screening.finished_answer()


def _search(screening, in_scope: list[services.ListInScope]) -> list[Finding]:
    # Both read on first need: a list may hold only required terms, and counting words costs.
    places = None
    required_text = _UNREAD
    findings = []
    for position, item in enumerate(in_scope):
        finding = Finding(item)
        matcher = item.compiled.forbidden
        if len(matcher):
            if places is None:
                places = _forbidden_places(screening)
                # Every list's forbidden terms at every place, each place read once for all the lists.
                lists = together([each.compiled.forbidden for each in in_scope])
                found_at = [lists.find(prepared) for _index, _path, prepared in places]
            found: set[str] = set()
            suggestions = item.compiled.suggestions
            for (index, path, prepared), found_here in zip(places, found_at):
                hits = found_here[position]
                if suggestions and hits:
                    # A term inside its own suggestion is what the list asks for, not a hit.
                    hits = [term for term in hits if term not in suggestions
                            or services.counts_outside_suggestion(term, suggestions[term], prepared.text)]
                if hits and not found:
                    _point_at(screening, finding, hits[0], index, path, prepared.text)
                found.update(hits)
            finding.forbidden = matcher.in_list_order(found)  # never a walk over the whole list
        required = item.compiled.required
        if item.required_apply and len(required):
            if required_text is _UNREAD:
                text = _required_text(screening)
                required_text = None if text is None else prepare(text)
            if required_text is not None:
                present = set(required.find(required_text))
                finding.missing = [term for term in required.terms if term not in present]
        if finding.forbidden or finding.missing:
            findings.append(finding)
    return findings


def _point_at(screening, finding: Finding, term: str, index, path, text: str) -> None:
    """Record where the first forbidden term sits: a passage for the hint, an offset when it has one."""
    finding.passage, offset = services.locate(term, text, finding.item.compiled.suggestions.get(term))
    if index is not None:
        finding.tool_call, finding.argument = index, path
    elif offset is not None and text == screening.output.text:
        # Offsets only into the returned text; a passage found in decoded JSON or with markup
        # removed is not verbatim there (SPEC §11.1: then null).
        finding.start, finding.end = offset, offset + len(finding.passage)


# --- what a person reads ---
def _sentences(finding: Finding, language: str | None) -> list[str]:
    """What one list says: its terms found, its required terms missing, its own message."""
    name = finding.item.compiled.name
    sentences = []
    if finding.forbidden:
        sentences.append(messages.render(messages.TERM_FORBIDDEN, language, list=name,
                                         terms=", ".join(finding.forbidden)))
        for term, suggestion in finding.suggestions.items():
            sentences.append(messages.render(messages.TERM_SUGGESTION, language, term=term, suggestion=suggestion))
    if finding.missing:
        sentences.append(messages.render(messages.TERM_MISSING, language, list=name,
                                         terms=", ".join(finding.missing)))
    own = finding.item.compiled.message.strip()
    if own:
        sentences.append(own)
    return sentences


def _block_message(screening, blocking: list[Finding]) -> str:
    """What each blocking list says; then, when the output proposes tool calls, that none was proposed."""
    language = screening.facts.reader_language
    parts = []
    for finding in blocking:
        parts.extend(_sentences(finding, language))
    if screening.output.tool_calls:
        parts.append(messages.render(messages.TOOL_CHANGE_NOT_PROPOSED, language))
    return " ".join(parts)


def _report(screening, finding: Finding) -> None:
    """Shadow mode: deliver, with one hint for the list (SPEC §11.1), and record what would have been
    blocked. `forbidden` names the terms found and, when required terms are missing too, carries them
    as `missing`; `missing_required` names the missing ones when nothing forbidden was found."""
    language = screening.facts.reader_language
    suffix = messages.render(messages.TERM_REPORTED_SUFFIX, language)
    hint = {"check": CHECK, "configuration": finding.item.configuration.identifier,
            "list": finding.item.compiled.name}
    message = " ".join([*_sentences(finding, language), suffix])
    if finding.forbidden:
        hint.update(type="forbidden", terms=finding.forbidden)
        if finding.suggestions:
            hint["suggestion"] = finding.suggestions
        if finding.missing:
            hint["missing"] = finding.missing
        hint.update(passage=finding.passage, start=finding.start, end=finding.end, message=message)
        if finding.tool_call is not None:
            hint.update(tool_call=finding.tool_call, argument=finding.argument)
    else:
        hint.update(type="missing_required", terms=finding.missing, passage=None, start=None, end=None,
                    message=message)
    screening.add_hint(hint)
    screening.record("reported", CHECK, finding.detail, configuration=finding.item.configuration, mode="report")


def _stop_unchecked(screening) -> None:
    language = screening.facts.reader_language
    parts = [messages.render(messages.TERM_CHECK_FAILED, language)]
    if screening.output.tool_calls:
        parts.append(messages.render(messages.TOOL_CHANGE_NOT_PROPOSED, language))
    message = " ".join(parts)
    screening.stop(CHECK, message, message)
    screening.record("blocked", CHECK, {"reason": "check_failed"}, mode="block")
    screening.check(CHECK, "blocked", "check_failed")
