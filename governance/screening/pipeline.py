"""The screening pipeline (SPEC §3): ordered steps over an output and its call facts.

Each step reads the text the step before left, adds hints, may stop the text,
and reports itself once in `checks`. The result has the shape of SPEC §11.1.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from functools import cached_property

from django.utils.module_loading import import_string

from governance.evidence import tracing
from governance.screening import text as textlib
from governance.messages import settle_reported_hints
from governance.models import GovernanceEvent

logger = logging.getLogger("gavel.screening")

# Order is the contract (SPEC §3): redaction first, judges last, so a judge
# reads redacted text and a text a term list stopped costs no judge call.
PIPELINE = (
    "governance.screening.steps.redact_secrets",
    "termlists.guardrail.check_term_lists",
    "snippets.guardrail.check_pattern_rules",
    "snippets.guardrail.check_citations",
    "judging.guardrail.judge_rules",
)

# Where a forbidden term in a tool call's name or id is reported (a hint's `argument`): never a path
# into the arguments, which are keys and indexes (SPEC §11.1).
NAME_PLACE, ID_PLACE = "(name)", "(id)"

KINDS = ("completion", "queued_task", "field_fill", "image_description", "internal")
MODE_STRICTNESS = {"off": 0, "report": 1, "block": 2}


@dataclass
class ToolCall:
    name: str
    arguments: dict | list | str
    id: str | None = None

    def as_dict(self) -> dict:
        data = {"name": self.name, "arguments": self.arguments}
        if self.id is not None:
            data = {"id": self.id, **data}
        return data


@dataclass
class Output:
    text: str = ""
    format: str = "text"  # text | json
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class CallFacts:
    configuration: object | None = None  # governance.models.Configuration
    also: list = field(default_factory=list)
    kind: str = "completion"
    offers_tools: bool = False
    read_tools: frozenset = frozenset()
    served_by: object | None = None  # governance.models.Provider
    site: str = ""
    language: str = ""
    actor: str = ""
    reader_language: str | None = None
    correlation_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # The term lists' scope rows, when deciding whether to hold a stream already read them for this
    # call (termlists.services.any_list_applies): the screening then reuses them, one query per call.
    term_list_rows: list | None = field(default=None, repr=False, compare=False)
    # The policy version read with the configurations: what is cached per version (the term lists in
    # scope) is looked up by it without a query of its own.
    policy_version: int | None = field(default=None, compare=False)
    # The answer may be replaced by an escalation (SPEC §6.6, governance/runs/escalation.py): while its
    # verification fails, no judge is asked about it and its events are left to the escalation.
    escalates: bool = False
    # How judges are asked (SPEC §12.2, §12.4): "" in a live screening (the verdict cache as each
    # configuration's judge_cache_seconds allows); in a policy test or replay "cached" (reuse verdicts),
    # "live" (ask, and keep the verdict) or "skip" (ask no judge).
    judges: str = ""
    # A policy test or replay screens a text nobody receives: its governance events are not written.
    log_events: bool = True

    @property
    def configurations(self) -> list:
        """The named configuration and those in `also`, each once."""
        seen, result = set(), []
        for config in [self.configuration, *self.also]:
            if config is not None and config.pk not in seen:
                seen.add(config.pk)
                result.append(config)
        return result

    @property
    def strictest_mode(self) -> str:
        modes = [c.rule_mode for c in self.configurations] or ["off"]
        return max(modes, key=MODE_STRICTNESS.__getitem__)


@dataclass
class Block:
    check: str
    message: str
    stored_message: str
    suggestion: dict | None = None  # term lists: found term -> the list's replacement (SPEC §10.2)

    def as_dict(self) -> dict:
        body = {"check": self.check, "message": self.message, "stored_message": self.stored_message}
        if self.suggestion:
            body["suggestion"] = self.suggestion
        return body


class Screening:
    """The state one output carries through the pipeline."""

    def __init__(self, output: Output, facts: CallFacts):
        self.output = output
        self.facts = facts
        self.hints: list[dict] = []
        self.block: Block | None = None
        self.checks: list[dict] = []
        self.events: list[dict] = []
        self.verification: dict = {"status": "not_applicable", "checks": []}
        self.held_tool_calls_blocked = False

    # --- what steps call ---
    def check(self, name: str, result: str, reason: str | None = None) -> None:
        entry = {"check": name, "result": result}
        if reason:
            entry["reason"] = reason
        self.checks.append(entry)

    def stop(self, check: str, message: str, stored_message: str, suggestion: dict | None = None) -> None:
        """Stop the text. The first block wins; later steps are skipped."""
        if self.block is None:
            self.block = Block(check, message, stored_message, suggestion)
            # Hints written before the stop said the text was delivered; it is not.
            settle_reported_hints(self.hints, self.facts.reader_language)

    def add_hint(self, hint: dict) -> None:
        passage = hint.get("passage")
        hint.setdefault("passage", None)
        start = end = None
        if passage and "tool_call" not in hint:
            found = self.output.text.find(passage)
            if found >= 0:
                start, end = found, found + len(passage)
        hint.setdefault("start", start)
        hint.setdefault("end", end)
        self.hints.append(hint)

    def record(self, decision: str, check: str, detail: dict, *, configuration=None, mode: str = "") -> None:
        """Queue a governance event: policy facts only, never generated text (SPEC §9)."""
        config = configuration or self.facts.configuration
        served = self.facts.served_by
        self.events.append(
            {
                "correlation_id": self.facts.correlation_id,
                "decision": decision,
                "check_name": check,
                "configuration": getattr(config, "identifier", "") or "",
                "provider": getattr(served, "name", "") or getattr(getattr(config, "provider", None), "name", ""),
                "model": getattr(config, "model", "") or "",
                "actor": self.facts.actor[:150],
                "mode": mode,
                "detail": detail,
            }
        )

    # --- what the text is, for each check (SPEC §3, §5.3, §8.2) ---
    @cached_property
    def read_tools(self) -> frozenset:
        """The tools whose calls only read (SPEC §8.2): declared by the configuration and every `also`
        configuration (its owner, admin-only), narrowed by the caller's `read_tools` when it names any."""
        declared = None
        for config in self.facts.configurations:
            names = frozenset(getattr(config, "read_tools", None) or ())
            declared = names if declared is None else declared & names
        declared = declared or frozenset()
        return declared & self.facts.read_tools if self.facts.read_tools else declared

    def undeclared_read_tools(self) -> list[str]:
        """The tools the caller named as reads that the configurations do not declare: screened."""
        return sorted(self.facts.read_tools - self.read_tools)

    def screened_tool_calls(self) -> list[tuple[int, ToolCall]]:
        calls = list(enumerate(self.output.tool_calls))
        if self.facts.offers_tools:
            # Only a tool the configuration declares as a read is exempt; unknown tools are screened.
            calls = [(i, c) for i, c in calls if c.name not in self.read_tools]
        return calls

    def tool_call_labels(self) -> list[tuple[int, str, str]]:
        """(tool call index, "(name)" or "(id)", value) of every screened call: the model writes a call's
        name and id too, so forbidden terms are searched there like in its arguments (SPEC §11.8)."""
        found = []
        for index, call in self.screened_tool_calls():
            found.append((index, NAME_PLACE, call.name or ""))
            if call.id:
                found.append((index, ID_PLACE, call.id))
        return found

    def tool_argument_texts(self, keys: bool = False) -> list[tuple[int, str, str]]:
        """(tool call index, argument path, string value) for every screened call; with `keys`, object
        keys and duplicate keys' values too (the forbidden-term search, textlib.argument_strings)."""
        found = []
        for index, call in self.screened_tool_calls():
            for path, value in textlib.argument_strings(call.arguments, keys=keys):
                found.append((index, path, value))
        return found

    @cached_property
    def answer_json_text(self) -> str | None:
        """A `json` answer's strings, one per line; None for a text answer or one that does not parse."""
        if self.output.format != "json":
            return None
        try:
            return textlib.json_text(self.output.text)
        except textlib.NotJSON:
            return None

    @property
    def reads_as_json(self) -> bool:
        """Whether the answer is screened as JSON: asked to be JSON, and it parses. An answer that was to
        be JSON and does not parse (cut off, or prose) is screened as text (docs/termlists.md)."""
        return self.answer_json_text is not None

    def answer_texts(self) -> list[str]:
        """The answer as delivered and, for JSON, as its decoded strings, keys included (so `\\u004b`
        hides nothing, in a value or in a key). An answer that was to be JSON and does not parse is read
        with its `\\u` escapes decoded too: a lenient parser would decode them. Offering a tool never
        takes the answer out (SPEC §8.2)."""
        texts = [self.output.text]
        if self.output.format == "json":
            try:
                texts.append(textlib.json_search_text(self.output.text))
            except textlib.NotJSON:
                decoded = textlib.decode_unicode_escapes(self.output.text)
                if decoded != self.output.text:
                    texts.append(decoded)
        return texts

    def finished_answer(self) -> str | None:
        """The answer when it is finished text (SPEC §3); JSON counts by its strings. The answer of a
        run that offers tools is screened but is finished text only when it proposes no tool call
        (a text answer, SPEC §8.2): an answer that proposes one is not asked for required terms."""
        if (self.facts.offers_tools and self.output.tool_calls) or self.facts.kind in ("image_description", "internal"):
            return None
        text = self.answer_json_text if self.reads_as_json else self.output.text
        return text if textlib.is_finished_text(text) else None

    def judged_text(self) -> str | None:
        """What a rule set judges (SPEC §6.8): finished text only, once per response.

        The answer (JSON by its strings) together with the string arguments of
        every screened tool call: in a run that offers tools those are the calls
        not declared as reads, in any other call all of them (SPEC §8.2). Offering
        a tool never takes the answer out of what is judged. The 30-word floor
        applies to what is judged.
        """
        if self.facts.kind in ("internal", "image_description"):
            return None
        arguments = [value for _, _, value in self.tool_argument_texts()]
        answer = self.answer_json_text if self.reads_as_json else self.output.text
        parts = [p for p in [answer or "", *arguments] if p]
        joined = "\n".join(parts)
        return joined if textlib.is_finished_text(joined) else None

    # --- the result ---
    @property
    def verification_failed(self) -> bool:
        """Whether `verification` is `unverified` (SPEC §6.6): a pattern rule or citation check failed.
        What escalation asks before it asks the escalation configuration."""
        return self.verification.get("status") == "unverified"

    @property
    def outcome(self) -> str:
        if self.block is not None:
            return "blocked"
        return "allowed_with_hints" if self.hints else "allowed"

    def as_response(self, policy_version: int) -> dict:
        body = {
            "id": self.facts.correlation_id,
            "policy_version": policy_version,
            "outcome": self.outcome,
        }
        if self.block is None:
            body["text"] = self.output.text
            body["tool_calls"] = [c.as_dict() for c in self.output.tool_calls]
        body["hints"] = self.hints
        body["block"] = self.block.as_dict() if self.block else None
        body["verification"] = self.verification
        body["checks"] = self.checks
        return body


_steps_cache: list | None = None


def pipeline_steps() -> list:
    global _steps_cache
    if _steps_cache is None:
        _steps_cache = [(name, tracing.traced(STEP_CHECK_NAMES[name], import_string(path)))
                        for name, path in ((p.rsplit(".", 1)[1], p) for p in PIPELINE)]
    return _steps_cache


STEP_CHECK_NAMES = {
    "redact_secrets": "secret_redaction",
    "check_term_lists": "term_list",
    "check_pattern_rules": "pattern_rules",
    "check_citations": "citations",
    "judge_rules": "rules_judge",
}


def run_pipeline(output: Output, facts: CallFacts) -> Screening:
    """Pass the output through every step, in order; write the governance events."""
    screening = Screening(output, facts)
    started = tracing.start_run(screening)  # a span per run and per check, the time it adds (SPEC §13.2)
    undeclared = screening.undeclared_read_tools() if facts.offers_tools else []
    if undeclared:
        # The caller asked for reads the owner never declared: screened, and `checks` says so (SPEC §8.2).
        screening.check("read_tools", "screened", "not_declared")
        screening.checks[-1]["tools"] = undeclared
    for step_name, step in pipeline_steps():
        if screening.block is not None:
            screening.check(STEP_CHECK_NAMES[step_name], "skipped", "earlier_block")
            continue
        step(screening)
    if screening.block is not None and screening.output.tool_calls:
        # A block stops the whole response: no proposed tool call is returned.
        screening.held_tool_calls_blocked = True
    if facts.log_events and not (facts.escalates and screening.verification_failed):
        write_events(screening.events)
    tracing.finish_run(started, screening)
    return screening


def write_events(events: list[dict]) -> None:
    if not events:
        return
    GovernanceEvent.objects.bulk_create([GovernanceEvent(**event) for event in events])
