"""The governance log read by people (issue 11): what an event is about, and its facts as one sentence in
the reader's language. Rendered from the stored facts only (SPEC §2.7), never from text a model wrote."""
from django.utils.translation import gettext as _

from governance import messages as core
from governance.models import GovernanceEvent, HintFeedback

# The models' choice labels: the admin's columns and filters say the same words as the sentence.
DECISIONS = dict(GovernanceEvent.Decision.choices)
CHECKS = dict(GovernanceEvent.Check.choices)


def subject(detail: dict) -> str:
    """What the event is about, by name: the term list, the rules, or the judges."""
    detail = detail if isinstance(detail, dict) else {}
    if detail.get("list"):
        return str(detail["list"])
    failures = [f for f in detail.get("failures") or () if isinstance(f, dict)]
    if failures:
        return ", ".join(dict.fromkeys(str(f.get("provider", "?")) for f in failures))
    names = []
    for rule in detail.get("rules") or ():
        if isinstance(rule, dict):
            names.append(str(rule.get("identifier") or (f"#{rule['number']}" if "number" in rule else "")))
    judges = [str(j.get("judge")) for j in detail.get("judges") or () if isinstance(j, dict) and j.get("judge")]
    parts = [", ".join(n for n in names if n), ", ".join(dict.fromkeys(judges))]
    return " · ".join(p for p in parts if p)


def sentence(event) -> str:
    """The event's facts as one sentence, in the active language."""
    detail = event.detail if isinstance(event.detail, dict) else {}
    decision = str(DECISIONS.get(event.decision, event.decision))
    check = str(CHECKS.get(event.check_name, event.check_name))
    # A provider failure is no check's decision: "Provider failed for configuration …".
    parts = [decision if event.check_name == "provider" else
             _("%(decision)s by the %(check)s check") % {"decision": decision, "check": check}]
    if event.configuration:
        parts[0] += " " + _("for configuration %(configuration)s") % {"configuration": event.configuration}
    if event.decision == "feedback":
        facts = [str(detail.get(key)) for key in ("list", "term", "snippet", "rule") if detail.get(key)]
        parts.append(_("an editor marked %(finding)s %(verdict)s") % {
            "finding": " · ".join(facts) or check, "verdict": _verdict(str(detail.get("verdict", "")))})
    elif detail.get("list"):
        if detail.get("terms"):
            parts.append(_("term list “%(list)s” found: %(terms)s") % {
                "list": detail["list"], "terms": ", ".join(map(str, detail["terms"]))})
        if detail.get("missing"):
            parts.append(_("term list “%(list)s” misses: %(terms)s") % {
                "list": detail["list"], "terms": ", ".join(map(str, detail["missing"]))})
    rules = [r for r in detail.get("rules") or () if isinstance(r, dict)]
    if rules:
        parts.append(_("rules: %(rules)s") % {"rules": "; ".join(_rule(r) for r in rules)})
    judges = [j for j in detail.get("judges") or () if isinstance(j, dict)]
    if judges:
        parts.append(_("judges: %(judges)s") % {"judges": "; ".join(_judge(j) for j in judges)})
    if str(detail.get("event", "")).startswith("draft."):
        parts.append(_draft_facts(detail))
    if detail.get("reason"):
        parts.append(_("reason: %(reason)s") % {"reason": core.reason_text(str(detail["reason"]))})
    failures = [f for f in detail.get("failures") or () if isinstance(f, dict)]
    if failures:
        parts.append("; ".join(core.failure_sentence(f, for_admin=True) for f in failures))
        if detail.get("answered_by"):
            parts.append(_("answered by the fallback %(configuration)s") % {"configuration": detail["answered_by"]})
    if detail.get("failed_open"):
        parts.append(_("the check failed open (rule default: allow)"))
    if event.check_name == "tool_call" and detail.get("tool"):
        parts.append(_("tool %(tool)s on the MCP server %(server)s: %(result)s") % {
            "tool": detail["tool"], "server": detail.get("server") or "—", "result": detail.get("result", "")})
    if detail.get("count") and event.check_name == "secret_redaction":
        parts.append(_("%(count)s value(s) masked") % {"count": detail["count"]})
    return "; ".join(parts) + "."


def _draft_facts(detail: dict) -> str:
    """A policy draft's event (issue 27): which draft, at which version, with how many changes."""
    text = _("draft %(draft)s, %(changes)s change(s), live version %(live)s") % {
        "draft": detail.get("draft"), "changes": detail.get("changes", 0), "live": detail.get("live_version")}
    if detail.get("version"):
        text += "; " + _("published as version %(version)s, %(accepted)s regression(s) accepted") % {
            "version": detail["version"], "accepted": detail.get("regressions_accepted", 0)}
    return text


def _rule(rule: dict) -> str:
    if rule.get("identifier"):
        return str(rule["identifier"])
    if "number" in rule:
        return _("rule %(number)s (“%(line)s”, snippet %(snippet)s)") % {
            "number": rule["number"], "line": rule.get("line", ""), "snippet": rule.get("snippet", "")}
    return "?"


def _judge(judge: dict) -> str:
    text = _("%(judge)s answered %(choice)s") % {"judge": judge.get("judge", "?"), "choice": judge.get("choice", "?")}
    if judge.get("reason"):
        text += f" ({core.reason_text(str(judge['reason']))})"
    return text


def _verdict(verdict: str) -> str:
    return str(dict(HintFeedback.Verdict.choices).get(verdict, verdict))
