"""The rule-set step of the pipeline (SPEC §6, §4): judges run last, on finished text only.

Each configuration of the call whose rule mode is not `off` has its rule set judged by
its own judge chain; the strictest mode among them decides what a finding or a failed
check does. This module is the one place that decides: fail closed in block mode.
"""
from __future__ import annotations

import logging
from dataclasses import replace

from governance import messages as core
from judging import cache as verdict_cache
from judging import messages, prompts, zones_service
from judging.chain import ChainResult, run_chain
from judging.judgement import DENY, PASS, Finding, JudgeContext, JudgeDecision, NotAsked
from judging.judges import judge_for
from judging.rulesets import rule_sets_for
from judging.rulesets_pure import RuleSet
from judging.verdicts import find_passage

logger = logging.getLogger("gavel.judging")

CHECK = "rules_judge"
# A block message quotes at most this much of a passage; the hint keeps it whole.
QUOTE_LIMIT = 200


def judge_rules(screening) -> None:
    facts = screening.facts
    configurations = [c for c in facts.configurations if c.rule_mode != "off"]
    if not configurations:
        screening.check(CHECK, "skipped", "mode_off")
        return
    text = screening.judged_text()
    if text is None:
        screening.check(CHECK, "skipped", "not_finished_text")
        return
    if facts.judges == "skip":
        # A policy test run without judges (SPEC §12.2): no judge is asked; the run reports judge
        # expectations as not checked.
        screening.check(CHECK, "skipped", "judges_skipped")
        return
    if facts.escalates and screening.verification_failed:
        # The escalation's answer replaces this one (SPEC §6.6): no judge call for a text nobody receives.
        screening.check(CHECK, "skipped", "escalated")
        return

    mode = facts.strictest_mode
    context = JudgeContext(correlation_id=facts.correlation_id, actor=facts.actor)
    # A text holding a marker-shaped sequence tries to close its own section of the judge's prompt:
    # no judge is asked, and the rules count as not checked (reason `injection`).
    forged = prompts.forges_marker(text)
    if forged:
        logger.warning("text holds a marker-shaped sequence; no judge asked (correlation %s)", facts.correlation_id)
    written = zones_service.text_zone_of(facts)
    answered: dict[tuple, ChainResult] = {}
    outcomes: list[str] = []
    reasons: list[str] = []
    cached = False
    rule_sets: list[RuleSet] | None = None
    for index, configuration in enumerate(configurations):
        try:
            if rule_sets is None:  # read once for every configuration; a failure is each one's failed check
                rule_sets = rule_sets_for(configurations)
            rule_set = rule_sets[index]
            if not rule_set:
                continue
            if forged:
                result = ChainResult(PASS, (JudgeDecision(PASS, "", reason="injection"),))
            else:
                # Two configurations with the same judges, rules and threshold need one answer, not two.
                judges = configuration.ordered_judges()
                key = (tuple(judge.pk for judge in judges), rule_set.key, configuration.min_confidence)
                if key not in answered:
                    # Each configuration's own threshold for its decision judges (SPEC §6.7).
                    own = replace(context, min_confidence=configuration.min_confidence)
                    cache = verdict_cache.for_screening(facts.judges, configuration.judge_cache_seconds)
                    answered[key] = run_chain([_ZoneGated(judge, written, cache) for judge in judges], rule_set,
                                              text, own)
                result = answered[key]
        except verdict_cache.Deferred:
            # A pass under a draft asks no judge (judging.cache.Deferral): this screening is given up,
            # the judge asked after the pass, and the next pass screens the text again.
            screening.check(CHECK, "skipped", "deferred")
            return
        except Exception:
            # Fail closed, here as everywhere: rules nobody could check have not passed. The mode
            # below decides what that means (a block in block mode, a "not checked" hint in report).
            logger.exception("rules of %s could not be judged (correlation %s)", configuration.identifier,
                             facts.correlation_id)
            result = ChainResult(PASS, (JudgeDecision(PASS, "", reason="error"),))
        if result.choice == DENY:
            outcomes.append(_findings(screening, configuration, result, mode, text))
        elif result.choice == PASS:
            outcomes.append(_failed_check(screening, configuration, result, mode))
            reasons.append(result.reason)  # for a block, the last one is the block's
        else:
            outcomes.append("passed")
        if any(decision.cached for decision in result.decisions):
            cached = True
        if screening.block is not None:
            break  # a stopped text costs no further judge call

    if not outcomes:
        screening.check(CHECK, "skipped", "no_rules")
    elif screening.block is not None:
        # A block ends the loop, so the last outcome is the block; its reason, when a failed check.
        failed = result.choice == PASS
        screening.check(CHECK, "blocked", reasons[-1] if failed else None)
    elif "reported" in outcomes:
        screening.check(CHECK, "reported")
    elif "not_checked" in outcomes:
        screening.check(CHECK, "not_checked", reasons[0])
    else:
        screening.check(CHECK, "passed")
    if cached:
        screening.checks[-1]["cached"] = True  # a verdict reused from the verdict cache (SPEC §12.4)


# --- the chain of one configuration ---
class _ZoneGated:
    """A judge asked only when it may read the text (SPEC §7); decided lazily, when its turn comes."""

    def __init__(self, judge_configuration, written: str, cache=None):
        self.configuration = judge_configuration
        self.identifier = judge_configuration.identifier
        self.written = written
        self.cache = cache  # judging.cache.VerdictCache, or None: ask the judge every time

    def decide(self, rule_set: RuleSet, text: str, context: JudgeContext):
        refused = zones_service.refusal(self.configuration, self.written, rule_set)
        if refused is not None:
            logger.info("judge %s not asked (correlation %s): zone %s", self.identifier, context.correlation_id,
                        refused)
            return NotAsked(self.identifier, "zone").decide(rule_set, text, context)
        judge = judge_for(self.configuration)
        if self.cache is None:
            return judge.decide(rule_set, text, context)
        return self.cache.decide(judge, self.configuration, rule_set, text, context)


# --- what a finding does ---
def _findings(screening, configuration, result: ChainResult, mode: str, text: str) -> str:
    language = screening.facts.reader_language
    findings = result.violations
    detail = _detail(result, findings)
    if mode == "block":
        message = " ".join(_violation_message(f, language, with_passage=True) for f in findings)
        # What a record keeps: the rule facts, never the passage (SPEC §9).
        stored = " ".join(dict.fromkeys(_violation_message(f, language, with_passage=False) for f in findings))
        message, stored = _tool_suffix(screening, message, language), _tool_suffix(screening, stored, language)
        screening.stop(CHECK, message, stored)
        screening.record("blocked", CHECK, detail, configuration=configuration, mode=mode)
        return "blocked"
    for finding in findings:
        hint = {
            "check": CHECK, "type": "violation", "configuration": configuration.identifier,
            "rule": finding.rule.as_fact(), "passage": finding.passage,
            "message": _violation_message(finding, language, with_passage=True, quote_limit=None),
        }
        hint.update(_place(screening, finding, text))
        screening.add_hint(hint)
    screening.record("reported", CHECK, detail, configuration=configuration, mode=mode)
    return "reported"


def _quote(passage: str, limit: int | None) -> str:
    passage = " ".join(passage.split())
    if limit is not None and len(passage) > limit:
        return passage[: limit - 1].rstrip() + "…"
    return passage


def _violation_message(finding: Finding, language, *, with_passage: bool, quote_limit: int | None = QUOTE_LIMIT) -> str:
    # The rule line comes from the snippet record and the passage from the judged text, both
    # checked before this point; the judge's own words are never quoted.
    facts = {"number": finding.rule.number, "line": finding.rule.line, "snippet": finding.rule.snippet}
    if finding.passage is None:
        # A decision judge names no passage (SPEC §6.4): every message says so, the stored one too.
        return core.render(core.RULE_VIOLATION_NO_PASSAGE, language, **facts)
    if not with_passage:
        return core.render(core.RULE_VIOLATION_STORED, language, **facts)
    return core.render(core.RULE_VIOLATION, language, passage=_quote(finding.passage, quote_limit), **facts)


def _place(screening, finding: Finding, judged_text: str) -> dict:
    """Where the passage sits in what the caller gets back: offsets into `text`, or a tool call.

    Offsets are code points into the returned text (SPEC §11.1): the judged text's own when
    the two are the same, else where the passage (the verbatim slice of the judged text)
    occurs verbatim in it. A passage the text does not hold is looked for in the screened tool
    arguments: a hint on a tool call names the call and the argument. Null when neither holds it (inside a JSON escape,
    say). Never a match white space and case aside: `text[start:end]` is always exactly the passage.
    """
    if finding.passage is None:
        return {"start": None, "end": None}
    # The answer (judged together with any tool arguments) is where a reader looks first.
    returned = screening.output.text
    if returned == judged_text and finding.start is not None:
        return {"start": finding.start, "end": finding.end}
    at = returned.find(finding.passage)
    if at >= 0:
        return {"start": at, "end": at + len(finding.passage)}
    for index, path, value in screening.tool_argument_texts():
        if finding.passage in value or find_passage(finding.passage, value):
            return {"tool_call": index, "argument": path, "start": None, "end": None}
    return {"start": None, "end": None}


# --- what a failed check does (SPEC §4) ---
def _failed_check(screening, configuration, result: ChainResult, mode: str) -> str:
    language = screening.facts.reader_language
    reason_words = "; ".join(core.reason_text(reason, language) for reason in result.reasons)
    facts = {"configuration": configuration.identifier, "reason": reason_words}
    detail = _detail(result, ())
    if mode == "block" and configuration.rule_default != "allow":
        # Fail closed: an output that could disable its own check has not passed.
        message = _tool_suffix(screening, core.render(core.RULES_NOT_CHECKED_BLOCK, language, **facts), language)
        screening.stop(CHECK, message, message)
        screening.record("blocked", CHECK, detail, configuration=configuration, mode=mode)
        return "blocked"
    message = core.render(core.RULES_NOT_CHECKED, language, **facts)
    if mode == "block":
        # rule_default: allow — deliver, and say and record that the check failed open.
        message = f"{message} {core.render(messages.RULES_FAILED_OPEN, language)}"
        detail["failed_open"] = True
    screening.add_hint({
        "check": CHECK, "type": "not_checked", "configuration": configuration.identifier,
        "reason": result.reason, "passage": None, "message": message,
    })
    screening.record("not_checked", CHECK, detail, configuration=configuration, mode=mode)
    return "not_checked"


def _detail(result: ChainResult, findings) -> dict:
    """Policy facts for the governance log: rules, judges, choice, reason — never a passage (SPEC §2.7, §9)."""
    detail: dict = {"choice": result.choice, "judges": [d.as_fact() for d in result.decisions]}
    if result.deciding is not None:
        detail["judge"] = result.deciding.judge
    if result.choice == PASS:
        detail["reason"] = result.reason
    if findings:
        rules, seen = [], set()
        for finding in findings:
            if finding.rule.number not in seen:
                seen.add(finding.rule.number)
                rules.append(finding.rule.as_fact())
        detail["rules"] = rules
        detail["snippets"] = sorted({rule["snippet"] for rule in rules})
    return detail


def _tool_suffix(screening, message: str, language) -> str:
    if screening.output.tool_calls:
        return f"{message} {core.render(core.TOOL_CHANGE_NOT_PROPOSED, language)}"
    return message
