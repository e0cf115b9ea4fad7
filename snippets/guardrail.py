"""The pattern-rule and citation steps of the pipeline (SPEC §6.5, §6.6, §4), and `verification`.

Pattern rules of the rule set, then the rules a text cites, are evaluated by machine on finished
text of every configuration whose rule mode is not `off`; the strictest mode decides what a
finding or a failed check does. This module is the one place that decides: fail closed in block mode.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from governance import messages as core
from governance.models import normalise_tags
from judging.messages import RULES_FAILED_OPEN
from snippets import messages, patterns, services

logger = logging.getLogger("gavel.patterns")

PATTERN_CHECK = "pattern_rules"
CITATION_CHECK = "citations"
# A block message quotes at most this much of a passage; the hint keeps it whole.
QUOTE_LIMIT = 200
UNKNOWN_RULE = "unknown_rule"
_UNREAD = object()


@dataclass
class _State:
    """What the two steps learn about one screening; `verification` is rendered from it."""

    in_set: set[str] = field(default_factory=set)  # identifiers the pattern step enforced
    library: patterns.Library | None = None  # read once per screening, for both steps
    text: object = None  # the judged text, once read (_UNREAD until then)
    entries: list[dict] = field(default_factory=list)
    failed: bool = False  # a rule was violated, a citation unknown, or a check could not run


@dataclass
class _Item:
    """One rule to enforce, or one unknown citation, with the configuration it is enforced for."""

    check: str
    configuration: object
    rule: patterns.CompiledRule | None
    verdict: patterns.Verdict
    identifier: str

    @property
    def statement(self) -> str:
        return self.rule.spec.statement if self.rule is not None else ""

    def fact(self) -> dict:
        """The rule as a hint field and governance fact: identifier, statement, severity; no text."""
        if self.rule is None:
            return {"identifier": self.identifier}
        return {"identifier": self.identifier, "statement": self.statement, "severity": self.rule.spec.severity}


def _state(screening) -> _State:
    state = getattr(screening, "_patterns", None)
    if state is None:
        state = screening._patterns = _State(text=_UNREAD)
    return state


def _settle(screening, state: _State) -> None:
    """`verified` only when a machine check gave a verdict and nothing failed; a rule without a pattern
    alone verifies nothing (docs/patterns.md)."""
    if state.failed:
        status = "unverified"
    elif any(entry["result"] in ("passed", "violated") for entry in state.entries):
        status = "verified"
    else:
        status = "not_applicable"
    screening.verification = {"status": status, "checks": list(state.entries)}


def _configurations(screening) -> list:
    return [c for c in screening.facts.configurations if c.rule_mode != "off"]


def _text_or_skip(screening, check: str):
    """The finished text both steps read (SPEC §6.8), or None after reporting the step skipped."""
    if not _configurations(screening):
        screening.check(check, "skipped", "mode_off")
        return None
    state = _state(screening)
    if state.text is _UNREAD:  # counting the words of a long text costs: once for both steps
        state.text = screening.judged_text()
    text = state.text
    if text is None:
        screening.check(check, "skipped", "not_finished_text")
    return text


# --- the steps ---
def check_pattern_rules(screening) -> None:
    """Evaluate every active pattern rule carrying one of the rule tags of the call's configurations."""
    text = _text_or_skip(screening, PATTERN_CHECK)
    if text is None:
        return
    state = _state(screening)
    configurations = _configurations(screening)
    try:
        library = _library(screening, state)
        owner: dict[str, tuple] = {}
        for configuration in configurations:
            for rule in library.tagged(_tags(configuration.rule_tags)):
                owner.setdefault(rule.identifier, (rule, configuration))
        timeout = services.pattern_timeout()
        prose = patterns.without_citations(text)
        items = [_Item(PATTERN_CHECK, config, rule, _evaluate(rule, text, prose, timeout), rule.identifier)
                 for rule, config in owner.values()]
    except Exception:
        # Fail closed: rules nobody could read have not passed (SPEC §4).
        logger.exception("pattern rules could not be checked (correlation %s)", screening.facts.correlation_id)
        _unreadable(screening, state, PATTERN_CHECK, configurations[0])
        return
    state.in_set = set(owner)
    if not items:
        screening.check(PATTERN_CHECK, "skipped", "no_rules")
        _settle(screening, state)
        return
    _enforce(screening, state, PATTERN_CHECK, items, text)


def check_citations(screening) -> None:
    """Every `[rule:<id>]` the text cites must name an active pattern rule, and the text must obey it."""
    text = _text_or_skip(screening, CITATION_CHECK)
    if text is None:
        return
    state = _state(screening)
    configuration = _configurations(screening)[0]
    cited = patterns.citations(text)
    if not cited:
        screening.check(CITATION_CHECK, "skipped", "no_citations")
        _settle(screening, state)
        return
    try:
        library = _library(screening, state)
        timeout = services.pattern_timeout()
        prose = patterns.without_citations(text)
        items = []
        for citation in cited:
            rule = library.rules.get(citation.identifier)
            if rule is None:
                verdict = patterns.Verdict(citation.identifier, patterns.VIOLATED, UNKNOWN_RULE,
                                           text[citation.start:citation.end], citation.start, citation.end)
            elif citation.identifier in state.in_set:
                continue  # the pattern step enforced it already
            else:
                # Enforced although outside the rule set: the text claims to obey it (SPEC §6.6).
                verdict = _evaluate(rule, text, prose, timeout)
            items.append(_Item(CITATION_CHECK, configuration, rule, verdict, citation.identifier))
    except Exception:
        logger.exception("citations could not be checked (correlation %s)", screening.facts.correlation_id)
        _unreadable(screening, state, CITATION_CHECK, configuration)
        return
    if not items:
        screening.check(CITATION_CHECK, "passed")
        _settle(screening, state)
        return
    _enforce(screening, state, CITATION_CHECK, items, text)


def _library(screening, state: _State) -> patterns.Library:
    if state.library is None:
        # The version the request read with its configurations (None outside a request: read now).
        state.library = services.library(screening.facts.policy_version)
    return state.library


def _evaluate(rule, text: str, prose: str, timeout: float) -> patterns.Verdict:
    """The rule on the text's prose (citations blanked); the passage is the text's own, at the same offsets."""
    verdict = patterns.evaluate(rule, prose, timeout)
    if verdict.start is not None:
        verdict = replace(verdict, passage=text[verdict.start:verdict.end])
    return verdict


# --- what the verdicts do (SPEC §4) ---
def _enforce(screening, state: _State, check: str, items: list[_Item], text: str) -> None:
    mode = screening.facts.strictest_mode
    language = screening.facts.reader_language
    violated = [i for i in items if i.verdict.result == patterns.VIOLATED]
    failed = [i for i in items if i.verdict.result == patterns.FAILED]
    for item in items:
        entry = {"check": check, "rule": item.identifier,
                 "result": patterns.NO_VERDICT if item.verdict.result == patterns.FAILED else item.verdict.result}
        if item.verdict.reason and item.verdict.reason != "satisfied":
            entry["reason"] = item.verdict.reason
        state.entries.append(entry)
    if violated or failed:
        state.failed = True
    _settle(screening, state)

    if mode == "block" and violated:
        message = " ".join(_violation_message(i, language, with_passage=True) for i in violated)
        stored = " ".join(_violation_message(i, language, with_passage=False) for i in violated)
        screening.stop(check, _tool_suffix(screening, message, language), _tool_suffix(screening, stored, language))
        _record(screening, "blocked", check, violated, mode)
        screening.check(check, "blocked")
        return
    closed = [i for i in failed if i.configuration.rule_default != "allow"]
    if mode == "block" and closed:
        # Fail closed: an output that could disable its own check has not passed.
        message = " ".join(_not_checked_message(i, language, block=True) for i in closed)
        message = _tool_suffix(screening, message, language)
        screening.stop(check, message, message)
        _record(screening, "blocked", check, closed, mode)
        screening.check(check, "blocked", closed[0].verdict.reason)
        return
    for item in violated:
        hint = {"check": check, "type": "violation", "configuration": item.configuration.identifier,
                "rule": item.fact(), "passage": item.verdict.passage,
                "message": _violation_message(item, language, with_passage=True, quote_limit=None)}
        hint.update(_place(screening, item.verdict, text))
        screening.add_hint(hint)
    if violated:
        _record(screening, "reported", check, violated, mode)
    for item in failed:
        message = _not_checked_message(item, language, block=False)
        if mode == "block":
            # rule_default: allow — deliver, and say and record that the check failed open.
            message = f"{message} {core.render(RULES_FAILED_OPEN, language)}"
        screening.add_hint({"check": check, "type": "not_checked", "configuration": item.configuration.identifier,
                            "rule": item.fact(), "reason": item.verdict.reason, "passage": None,
                            "start": None, "end": None, "message": message})
    if failed:
        _record(screening, "not_checked", check, failed, mode, failed_open=mode == "block")
    if violated:
        screening.check(check, "reported")
    elif failed:
        screening.check(check, "not_checked", failed[0].verdict.reason)
    elif all(i.verdict.result == patterns.NO_VERDICT for i in items):
        screening.check(check, "skipped", "no_verdict")
    else:
        screening.check(check, "passed")


def _unreadable(screening, state: _State, check: str, configuration) -> None:
    """The rules could not be read: a failed check for the whole step, handled by the mode."""
    state.failed = True
    _settle(screening, state)
    mode = screening.facts.strictest_mode
    language = screening.facts.reader_language
    reason_words = str(messages.PATTERN_REASONS["error"])
    facts = {"configuration": configuration.identifier, "reason": core.render(reason_words, language)}
    detail = {"reason": "error"}
    if mode == "block" and configuration.rule_default != "allow":
        message = _tool_suffix(screening, core.render(core.RULES_NOT_CHECKED_BLOCK, language, **facts), language)
        screening.stop(check, message, message)
        screening.record("blocked", check, detail, configuration=configuration, mode=mode)
        screening.check(check, "blocked", "error")
        return
    screening.add_hint({"check": check, "type": "not_checked", "configuration": configuration.identifier,
                        "reason": "error", "passage": None, "start": None, "end": None,
                        "message": core.render(core.RULES_NOT_CHECKED, language, **facts)})
    screening.record("not_checked", check, {**detail, "failed_open": mode == "block"}, configuration=configuration,
                     mode=mode)
    screening.check(check, "not_checked", "error")


def _record(screening, decision: str, check: str, items: list[_Item], mode: str, *, failed_open=False) -> None:
    """One governance event per configuration: rule identifiers, statements and reasons, never a passage."""
    by_configuration: dict[str, list[_Item]] = {}
    for item in items:
        by_configuration.setdefault(item.configuration.identifier, []).append(item)
    for group in by_configuration.values():
        detail = {"rules": [{**i.fact(), **({"reason": i.verdict.reason} if i.verdict.reason else {})}
                            for i in group]}
        if failed_open:
            detail["failed_open"] = True
        screening.record(decision, check, detail, configuration=group[0].configuration, mode=mode)


# --- what a person reads ---
def _quote(passage: str, limit: int | None) -> str:
    passage = " ".join(passage.split())
    if limit is not None and len(passage) > limit:
        return passage[: limit - 1].rstrip() + "…"
    return passage


def _violation_message(item: _Item, language, *, with_passage: bool, quote_limit: int | None = QUOTE_LIMIT) -> str:
    if item.rule is None:
        return core.render(messages.UNKNOWN_CITATION, language, identifier=item.identifier)
    facts = {"identifier": item.identifier, "statement": item.statement}
    if not with_passage or item.verdict.passage is None:
        return core.render(messages.PATTERN_VIOLATION_STORED, language, **facts)
    return core.render(messages.PATTERN_VIOLATION, language, passage=_quote(item.verdict.passage, quote_limit),
                       **facts)


def _not_checked_message(item: _Item, language, *, block: bool) -> str:
    reason = core.render(messages.PATTERN_REASONS.get(item.verdict.reason, item.verdict.reason), language)
    template = messages.PATTERN_NOT_CHECKED_BLOCK if block else messages.PATTERN_NOT_CHECKED
    return core.render(template, language, identifier=item.identifier, statement=item.statement, reason=reason)


def _tool_suffix(screening, message: str, language) -> str:
    if screening.output.tool_calls:
        return f"{message} {core.render(core.TOOL_CHANGE_NOT_PROPOSED, language)}"
    return message


def _place(screening, verdict: patterns.Verdict, judged_text: str) -> dict:
    """Where the passage sits in what the caller gets back (SPEC §11.1): code-point offsets into `text`
    when it is there verbatim, else the tool call and argument that hold it, else nulls."""
    passage = verdict.passage
    if not passage:
        return {"start": None, "end": None}
    # The answer is judged in every run (SPEC §8.2).
    returned = screening.output.text
    if returned == judged_text and verdict.start is not None:
        return {"start": verdict.start, "end": verdict.end}
    at = returned.find(passage)
    if at >= 0:
        return {"start": at, "end": at + len(passage)}
    for index, path, value in screening.tool_argument_texts():
        if passage in value:
            return {"tool_call": index, "argument": path, "start": None, "end": None}
    return {"start": None, "end": None}


def _tags(values) -> list[str]:
    return normalise_tags(values)
