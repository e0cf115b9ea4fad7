"""The rule-set step of the pipeline (SPEC §6): judges run last."""
from governance import messages


def judge_rules(screening) -> None:
    facts = screening.facts
    mode = facts.strictest_mode
    if mode == "off":
        screening.check("rules_judge", "skipped", "mode_off")
        return
    if screening.judged_text() is None:
        screening.check("rules_judge", "skipped", "not_finished_text")
        return
    # Judging arrives with its own issue; until then the check cannot run, and
    # a check that cannot run is handled as SPEC §4 says (fail closed in block).
    _failed_check(screening, mode, "not_available")


def _failed_check(screening, mode: str, reason: str) -> None:
    lang = screening.facts.reader_language
    for config in screening.facts.configurations:
        if config.rule_mode == "off":
            continue
        facts = {"configuration": config.identifier, "reason": messages.reason_text(reason, lang)}
        if mode == "block" and config.rule_default != "allow":
            text = messages.render(messages.RULES_NOT_CHECKED_BLOCK, lang, **facts)
            screening.stop("rules_judge", text, text)
            screening.record("blocked", "rules_judge", {"reason": reason}, configuration=config, mode=mode)
        else:
            screening.add_hint({
                "check": "rules_judge", "type": "not_checked", "configuration": config.identifier,
                "reason": reason, "message": messages.render(messages.RULES_NOT_CHECKED, lang, **facts),
            })
            screening.record("not_checked", "rules_judge", {"reason": reason}, configuration=config, mode=mode)
    screening.check("rules_judge", "blocked" if screening.block else "not_checked", reason)
