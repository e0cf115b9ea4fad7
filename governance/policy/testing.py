"""Testing a policy (SPEC §12.2): every example screened through the live pipeline, compared with what
the team expects, with precision and recall per rule and term and what the judges cost.

The screening is `run_pipeline` itself (same steps, chain, zones and timeouts); only its events are not
written and the verdict cache is used as the run asks. `drafts.under_draft` runs it under a draft.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from governance.errors import UnknownRecord
from governance.models import PolicyExample, PolicyVersion
from governance.screening.pipeline import CallFacts, Output, ToolCall, run_pipeline
from judging import cache as verdict_cache
from governance.screening.service import resolve_configurations

JUDGE_MODES = ("live", "cached", "skip")
ACTOR = "policy test"


def finding_key(finding: dict) -> str:
    """One label per rule or term, in policy-file terms: `term_list:Brand words:Rabatt*`."""
    check = finding["check"]
    if check == "term_list":
        return f"term_list:{finding['list']}" + (f":{finding['term']}" if "term" in finding else "")
    if check == "rules_judge":
        return f"rules_judge:{finding['snippet']}" + (f":{finding['rule']}" if "rule" in finding else "")
    if check in ("pattern_rules", "citations"):
        return f"{check}:{finding['rule']}" if "rule" in finding else check
    return check


def findings_of(screening) -> list[dict]:
    """What fired, as findings in policy-file terms, read from the screening's events (blocks and hints)."""
    found: list[dict] = []
    for event in screening.events:
        if event["decision"] not in ("blocked", "reported"):
            continue
        check, detail = event["check_name"], event["detail"]
        if check == "term_list":
            for term in [*(detail.get("terms") or ()), *(detail.get("missing") or ())]:
                found.append({"check": "term_list", "list": detail.get("list"), "term": term})
        elif check == "rules_judge":
            for rule in detail.get("rules") or ():
                found.append({"check": "rules_judge", "snippet": rule["snippet"], "rule": rule["line_no"]})
        elif check in ("pattern_rules", "citations"):
            for rule in detail.get("rules") or ():
                if rule.get("identifier"):
                    found.append({"check": check, "rule": rule["identifier"]})
        elif check == "field":
            found.append({"check": "field"})
    unique = {finding_key(f): f for f in found}
    return list(unique.values())


def matches(expected: dict, found: list[dict]) -> bool:
    """An expected finding is present when a finding agrees on every key it names (a list without a
    term matches any term of that list)."""
    return any(all(f.get(k) == v for k, v in expected.items()) for f in found)


@dataclass
class ExampleResult:
    name: str
    passed: bool
    outcome: str | None = None
    expected_outcome: str = ""
    missing: list[dict] = field(default_factory=list)  # expected, not found
    unexpected: list[dict] = field(default_factory=list)  # found, though expected absent
    not_checked: list[dict] = field(default_factory=list)  # judge expectations with judges skipped
    found: list[dict] = field(default_factory=list)
    error: str | None = None

    def as_dict(self) -> dict:
        data = {"name": self.name, "passed": self.passed, "outcome": self.outcome,
                "expected_outcome": self.expected_outcome, "missing": self.missing, "unexpected": self.unexpected,
                "not_checked": self.not_checked, "found": self.found}
        if self.error:
            data["error"] = self.error
        return data


@dataclass
class RuleStats:
    """Per rule or term, over the examples: the confusion counts, and precision and recall from them."""

    key: str
    true_positive: int = 0  # fired where expected
    false_positive: int = 0  # fired where not expected
    false_negative: int = 0  # expected, did not fire
    true_negative: int = 0  # neither

    @property
    def fired(self) -> int:
        return self.true_positive + self.false_positive

    @property
    def expected(self) -> int:
        return self.true_positive + self.false_negative

    @property
    def precision(self) -> float | None:
        return self.true_positive / self.fired if self.fired else None

    @property
    def recall(self) -> float | None:
        return self.true_positive / self.expected if self.expected else None

    def as_dict(self) -> dict:
        return {"rule": self.key, "fired": self.fired, "expected": self.expected,
                "precision": None if self.precision is None else round(self.precision, 4),
                "recall": None if self.recall is None else round(self.recall, 4),
                "true_positive": self.true_positive, "false_positive": self.false_positive,
                "false_negative": self.false_negative, "true_negative": self.true_negative}


@dataclass
class PolicyTestReport:
    examples: list[ExampleResult]
    rules: list[RuleStats]
    judges: dict
    judge_mode: str
    policy_version: int | None = None
    draft: bool = False

    @property
    def passed(self) -> int:
        return sum(1 for e in self.examples if e.passed)

    @property
    def failed(self) -> int:
        return len(self.examples) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def result_of(self, name: str) -> ExampleResult | None:
        return next((e for e in self.examples if e.name == name), None)

    def as_dict(self) -> dict:
        return {"passed": self.passed, "failed": self.failed, "judges": {"mode": self.judge_mode, **self.judges},
                "policy_version": self.policy_version, "draft": self.draft,
                "examples": [e.as_dict() for e in self.examples], "rules": [r.as_dict() for r in self.rules]}


class UnknownExamples(UnknownRecord):
    """`only` names an example that does not exist."""


def select_examples(only: list[str] | None = None) -> list[PolicyExample]:
    examples = list(PolicyExample.objects.order_by("name"))
    if only:
        known = {e.name for e in examples}
        unknown = [name for name in only if name not in known]
        if unknown:
            from django.utils.translation import gettext as _

            raise UnknownExamples(_("Unknown example: %(names)s") % {"names": ", ".join(unknown)},
                                  code="unknown_example", fields={"only": unknown})
        examples = [e for e in examples if e.name in set(only)]
    return examples


def screen_example(example: PolicyExample, judges: str, resolved: dict | None = None):
    """Screen one example as a live screening would, writing no event. Raises UnknownRecord when its
    configuration is gone. `resolved` keeps the configurations read for earlier examples of the same run."""
    configuration, also = resolve_once(example.configuration, list(example.also), resolved)
    facts = CallFacts(configuration=configuration, also=also, kind=example.kind, site=example.site,
                      language=example.language, actor=ACTOR, judges=judges, log_events=False,
                      correlation_id=uuid.uuid4().hex)
    facts.policy_version = configuration.policy_version
    output = Output(text=example.text, format=example.format,
                    tool_calls=[ToolCall(name=c["name"], arguments=c.get("arguments", {}), id=c.get("id"))
                                for c in example.tool_calls])
    return run_pipeline(output, facts)


def resolve_once(identifier: str, also: list[str], resolved: dict | None):
    """The configurations of a screening, read once per run for each (configuration, also): a run reads
    the policy at one version, and the screenings only read them."""
    if resolved is None:
        return resolve_configurations(identifier, also, None)
    key = (identifier, tuple(also))
    if key not in resolved:
        resolved[key] = resolve_configurations(identifier, also, None)
    return resolved[key]


def evaluate(example: PolicyExample, screening, judges: str) -> ExampleResult:
    found = findings_of(screening)
    result = ExampleResult(example.name, passed=True, outcome=screening.outcome,
                           expected_outcome=example.expect_outcome, found=found)
    skipped = judges == "skip"
    for expected in example.expect_findings:
        if skipped and expected["check"] == "rules_judge":
            result.not_checked.append(expected)
        elif not matches(expected, found):
            result.missing.append(expected)
    for absent in example.expect_absent:
        if skipped and absent["check"] == "rules_judge":
            result.not_checked.append(absent)
        elif matches(absent, found):
            result.unexpected.append(absent)
    # With judges skipped, an outcome that rests on a judge's finding cannot be checked either.
    outcome_checked = not (skipped and any(f["check"] == "rules_judge" for f in example.expect_findings))
    result.passed = not result.missing and not result.unexpected and (
        not outcome_checked or screening.outcome == example.expect_outcome)
    return result


def rule_table(examples: list[PolicyExample], results: list[ExampleResult]) -> list[RuleStats]:
    """Precision and recall per rule or term over the examples: a key counts as expected in an example
    that expects it, as fired where the screening found it."""
    by_name = {r.name: r for r in results}
    keys: set[str] = set()
    for example in examples:
        keys.update(finding_key(f) for f in [*example.expect_findings, *example.expect_absent])
        if example.name in by_name:
            keys.update(finding_key(f) for f in by_name[example.name].found)
    stats = {key: RuleStats(key) for key in sorted(keys)}
    for example in examples:
        result = by_name.get(example.name)
        if result is None or result.error:
            continue
        fired_keys = {finding_key(f) for f in result.found}
        # A term the example names without its term ("any term of the list") counts at list level.
        fired_keys |= {key.rsplit(":", 1)[0] for key in fired_keys if key.count(":") >= 2}
        expected_keys = {finding_key(f) for f in example.expect_findings}
        for key, row in stats.items():
            fired = key in fired_keys
            expected = key in expected_keys
            if key.startswith("rules_judge") and any(f["check"] == "rules_judge" for f in result.not_checked):
                continue
            if fired and expected:
                row.true_positive += 1
            elif fired:
                row.false_positive += 1
            elif expected:
                row.false_negative += 1
            else:
                row.true_negative += 1
    return list(stats.values())


def run_examples(examples: list[PolicyExample], *, judges: str = "cached") -> PolicyTestReport:
    """Screen every example under the policy as it stands (a draft: drafts.under_draft)."""
    if judges not in JUDGE_MODES:
        raise ValueError(f"judges must be one of {JUDGE_MODES}")
    results: list[ExampleResult] = []
    resolved: dict = {}
    with verdict_cache.counting() as tally:
        for example in examples:
            try:
                screening = screen_example(example, judges, resolved)
            except UnknownRecord as exc:
                results.append(ExampleResult(example.name, passed=False, expected_outcome=example.expect_outcome,
                                             error=str(exc)))
                continue
            results.append(evaluate(example, screening, judges))
    return PolicyTestReport(results, rule_table(examples, results), tally.as_dict(), judges,
                      policy_version=PolicyVersion.current())
