"""What a draft's replay cannot see, named in its report (proposals_report.draft_report): blocked tasks (no
text kept, counted from the governance log), judged rule lines not replayed, generation settings, conflicts.

A blocked task keeps no answer, so no replay can screen it again. Its block events do say which list and
terms (or which pattern rule or judged rule line) stopped it: those are what a draft changes, so the report
counts them here and says whether the draft would lift every block of each task (decision 0052).
"""
from __future__ import annotations

import copy
import difflib
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from governance.models import GovernanceEvent, Task
from governance.policy.format import NAME_KEYS
from governance.policy.proposals import NotPublishable
from governance.policy.replay import at_least, min_texts
from termlists.matcher import parse_entries

# Task ids listed per record an approver may open (the count is always whole).
MAX_TASK_IDS = 200
# The configuration fields that shape generation, which stored texts cannot test.
GENERATION_FIELDS = ("system_prompt", "temperature", "model", "max_tokens")
# What a draft does to the tasks one record blocked.
DELIVER, STILL_BLOCK, MIXED, UNKNOWN = "deliver", "still_block", "mixed", "unknown"
BLOCKING_SECTIONS = ("term_lists", "pattern_rules", "snippets", "configurations")


def set_replay_judges(draft, on: bool) -> None:
    """Whether the draft's report runs the judges (the draft page's button). No change of the draft's content:
    its revision, submission and schedule stay."""
    if draft.status not in ("open", "submitted"):
        raise NotPublishable(_("This cannot be done with a draft that is %(status)s.")
                             % {"status": draft.get_status_display()}, fields={"status": [draft.status]})
    draft.replay_judges = bool(on)
    draft.save(update_fields=["replay_judges", "updated_at"])


# --- blocked texts ----------------------------------------------------------------------------


def _record(document: dict, section: str, name: str) -> dict | None:
    key = NAME_KEYS[section]
    return next((r for r in document.get(section) or () if r.get(key) == name), None)


def _terms(lines) -> set[str]:
    return {term for term, _suggestion in parse_entries(list(lines or ()))}


def _active(record: dict | None) -> bool:
    return record is not None and record.get("is_active", True) is not False


def _rule_mode(record: dict | None) -> str:
    return ((record or {}).get("rules") or {}).get("mode") or "off"


def blocked_tasks(window: dict, *, now=None) -> list[tuple[str, str]]:
    """(task id, correlation id) of the tasks in the replay's window whose screening blocked them: the
    newest `tasks` tasks (blocked or not), or those of the last `hours` hours; within the retention."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.GAVEL_TASK_RETENTION_DAYS)
    if window.get("hours") is not None:
        cutoff = max(cutoff, now - timedelta(hours=window["hours"]))
        limit = None
    else:
        limit = int(window.get("tasks") or 0)
        if limit <= 0:
            return []
    rows = Task.objects.filter(created__gte=cutoff).order_by("-created").values_list("id", "outcome", "correlation_id")
    rows = rows[:limit] if limit is not None else rows
    return [(str(pk), correlation) for pk, outcome, correlation in rows if outcome == "blocked" and correlation]


def _lifted(event, document: dict) -> bool | None:
    """Whether the draft lifts this block event (True), keeps it (False), or cannot tell without the text."""
    detail, check = event.detail or {}, event.check_name
    if check == "term_list":
        record = _record(document, "term_lists", detail.get("list"))
        if not _active(record) or record.get("mode") == "report":
            return True
        scoped = record.get("configurations") or []
        if scoped and event.configuration and event.configuration not in scoped:
            return True
        if detail.get("reason"):  # the lists could not be read: a fault, not a term
            return False
        kept = (set(detail.get("terms") or ()) & _terms(record.get("forbidden"))) | (
            set(detail.get("missing") or ()) & _terms(record.get("required")))
        return not kept
    if check in ("pattern_rules", "rules_judge"):
        configuration = _record(document, "configurations", event.configuration)
        if configuration is not None and _rule_mode(configuration) != "block":
            return True
        section, key = ("pattern_rules", "identifier") if check == "pattern_rules" else ("snippets", "snippet")
        names = {rule.get(key) for rule in detail.get("rules") or () if rule.get(key)}
        if names and all(not _active(_record(document, section, name)) for name in names):
            return True
        return None
    return False


def _blocks(event) -> list[tuple[str, str]]:
    """The records a block event names: (section, name)."""
    detail, check = event.detail or {}, event.check_name
    if check == "term_list" and detail.get("list"):
        return [("term_lists", detail["list"])]
    if check == "pattern_rules":
        return [("pattern_rules", r["identifier"]) for r in detail.get("rules") or () if r.get("identifier")]
    if check == "rules_judge":
        return list(dict.fromkeys(("snippets", r["snippet"]) for r in detail.get("rules") or () if r.get("snippet")))
    return []


def _changes_blocking(changes: list[dict], live: dict, document: dict) -> list[tuple[str, str]]:
    """The records of the draft's changes that can stop a text: term lists, pattern rules, snippets, and
    configurations whose rule mode changes."""
    found = []
    for change in changes:
        section, name = change["section"], change["name"]
        if section not in BLOCKING_SECTIONS:
            continue
        if section == "configurations" and _rule_mode(_record(live, section, name)) == _rule_mode(
                _record(document, section, name)):
            continue
        found.append((section, name))
    return found


def blocked_part(changes: list[dict], live: dict, document: dict, window: dict, *, task_ids: bool) -> dict:
    """`report["blocked"]`: for each record the draft changes that can stop a text, the window's tasks the
    live policy stopped by it (from the governance log) and what the draft would do with them."""
    records = _changes_blocking(changes, live, document)
    tasks = blocked_tasks(window) if records else []
    by_correlation = {correlation: task_id for task_id, correlation in tasks}
    events: dict[str, list] = {}
    if by_correlation:
        for event in GovernanceEvent.objects.filter(decision="blocked", correlation_id__in=list(by_correlation)):
            events.setdefault(by_correlation[event.correlation_id], []).append(event)
    # A task is delivered only when the draft lifts every block it had; one it cannot judge stays unknown.
    fate = {}
    for task_id, its_events in events.items():
        lifted = [_lifted(e, document) for e in its_events]
        fate[task_id] = DELIVER if all(lifted) else (STILL_BLOCK if False in lifted else UNKNOWN)
    n = min_texts()
    rows = []
    for section, name in records:
        ids = [task_id for task_id, its_events in events.items()
               if any((section, name) in _blocks(e) for e in its_events)]
        if section == "configurations":
            ids = [task_id for task_id, its_events in events.items()
                   if any(e.configuration == name and e.check_name in ("pattern_rules", "rules_judge")
                          for e in its_events)]
        counts = {kind: sum(1 for t in ids if fate[t] == kind) for kind in (DELIVER, STILL_BLOCK, UNKNOWN)}
        row = {"section": section, "name": name, "verdict": _verdict(counts)}
        if task_ids:
            row.update(blocked=len(ids), **{k: v for k, v in counts.items()},
                       sentence=blocked_sentence(name, len(ids), counts), task_ids=ids[:MAX_TASK_IDS])
        else:
            # As the replay's counts: nothing below GAVEL_REPORT_MIN_TEXTS, zero included, for readers of counts.
            shown = {k: at_least(v, n) for k, v in counts.items()}
            row.update(blocked=at_least(len(ids), n), **shown,
                       sentence=blocked_sentence(name, len(ids), counts, n=n), task_ids=None)
            if len(ids) < n:
                row["verdict"] = None  # what the draft does with so few tasks is an answer about them too
        rows.append(row)
    return {"window": window, "source": "governance_log", "min_texts": None if task_ids else n,
            "records": rows, "note": _("Blocked tasks keep no text, so the replay cannot screen them; these counts "
                                       "come from the governance log's block events (a purged log counts none).")
            if rows else None}


def _verdict(counts: dict) -> str | None:
    present = [k for k in (DELIVER, STILL_BLOCK, UNKNOWN) if counts[k]]
    if not present:
        return None
    return present[0] if len(present) == 1 else MIXED


def blocked_sentence(name: str, blocked: int, counts: dict, *, n: int | None = None) -> str:
    """"24 tasks were blocked by Kunde; this draft would deliver them" (or still block them, or a mix)."""
    if n is not None and blocked < n:
        return _("Fewer than %(n)d tasks were blocked by %(name)s.") % {"n": n, "name": name}
    if not blocked:
        return _("No task in the window was blocked by %(name)s.") % {"name": name}
    head = ngettext("%(count)d task was blocked by %(name)s", "%(count)d tasks were blocked by %(name)s",
                    blocked) % {"count": blocked, "name": name}
    deliver, still, unknown = counts[DELIVER], counts[STILL_BLOCK], counts[UNKNOWN]
    if deliver == blocked:
        tail = ngettext("this draft would deliver it", "this draft would deliver them", blocked)
    elif still == blocked:
        tail = ngettext("this draft would still block it", "this draft would still block them", blocked)
    elif unknown == blocked:
        tail = _("the draft changes it, and without the texts whether it would still block them cannot be told")
    else:
        tail = _("this draft would deliver %(deliver)s, still block %(still)s and for %(unknown)s it cannot be "
                 "told without the texts") % {"deliver": at_least(deliver, n) if n else deliver,
                                                 "still": at_least(still, n) if n else still,
                                                 "unknown": at_least(unknown, n) if n else unknown}
    return f"{head}; {tail}."


# --- judged rule lines ------------------------------------------------------------------------


def judged_lines_changed(changes: list[dict]) -> int:
    """How many rule lines of snippets (what judges read) the draft adds, changes or removes."""
    count = 0
    for change in changes:
        if change["section"] != "snippets":
            continue
        before = _rule_lines(change.get("base"))
        after = _rule_lines(change.get("record"))
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
            if op != "equal":
                count += max(i2 - i1, j2 - j1)
    return count


def _rule_lines(record: dict | None) -> list[str]:
    if not _active(record):
        return []
    return [line.strip() for line in str(record.get("body") or "").splitlines() if line.strip()]


def without_judges(changes: list[dict], with_judges: bool) -> str | None:
    """The sentence the report gives when judges were not run and judged rule lines change."""
    lines = judged_lines_changed(changes)
    if with_judges or not lines:
        return None
    return ngettext("judges were not run: %(n)d judged rule line changes, so hints from judges are not compared",
                    "judges were not run: %(n)d judged rule lines change, so hints from judges are not compared",
                    lines) % {"n": lines}


def judged_sentence(texts: int, judged: int, cap: float, stopped: bool) -> str | None:
    if not stopped:
        return None
    return ngettext("the cost cap of %(cap).2f was reached: %(judged)d of %(texts)d text was judged",
                    "the cost cap of %(cap).2f was reached: %(judged)d of %(texts)d texts were judged",
                    texts) % {"cap": cap, "judged": judged, "texts": texts}


# --- generation -------------------------------------------------------------------------------


def generation_part(changes: list[dict], live: dict, document: dict) -> dict | None:
    """`report["generation"]`: the configuration fields that shape generation which the draft changes."""
    fields = []
    for change in changes:
        if change["section"] != "configurations":
            continue
        before = _record(live, "configurations", change["name"]) or change.get("base") or {}
        after = _record(document, "configurations", change["name"]) or change.get("record") or {}
        if not before or not after:
            continue  # a configuration added or removed: no stored text was generated by both
        for field in GENERATION_FIELDS:
            if before.get(field) != after.get(field):
                fields.append({"configuration": change["name"], "field": field})
    if not fields:
        return None
    names = ", ".join(f"{f['configuration']}.{f['field']}" for f in fields)
    return {"fields": fields, "sentence": ngettext(
        "This draft changes how texts are generated (%(fields)s); the replay screens stored texts, so it cannot "
        "test this change.",
        "This draft changes how texts are generated (%(fields)s); the replay screens stored texts, so it cannot "
        "test these changes.", len(fields)) % {"fields": names}}


# --- conflicts --------------------------------------------------------------------------------


def with_draft_side(document: dict, conflicts: list) -> dict:
    """The draft's document with each conflicting record as the draft has it (the draft's side)."""
    if not conflicts:
        return document
    document = copy.deepcopy(document)
    for conflict in conflicts:
        key = NAME_KEYS[conflict.section]
        records = [r for r in document.get(conflict.section) or () if r.get(key) != conflict.name]
        if conflict.draft is not None:
            at = next((i for i, r in enumerate(document.get(conflict.section) or ()) if r.get(key) == conflict.name),
                      len(records))
            records.insert(at, copy.deepcopy(conflict.draft))
        document[conflict.section] = records
    return document


def conflict_side(conflicts: list, live_version: int) -> list[dict] | None:
    if not conflicts:
        return None
    rows = []
    for conflict in conflicts:
        record = f"{conflict.section}:{conflict.name}"
        live = (_("removed in version %(version)s") if conflict.live is None
                else _("the record as version %(version)s has it")) % {"version": live_version}
        rows.append({"section": conflict.section, "name": conflict.name, "tested": "draft",
                     "sentence": _("%(record)s: tested with this draft's side; the live side is %(live)s (shown "
                                   "beside it under the conflicts).") % {"record": record, "live": live}})
    return rows


# --- examples the draft makes invalid ---------------------------------------------------------


def split_example_errors(errors: dict, document: dict) -> tuple[dict[str, dict], dict]:
    """The errors of a draft's document by example name (paths named `examples["greeting"]…`), and the rest."""
    examples = document.get("examples") or []
    by_example: dict[str, dict] = {}
    rest = {}
    for path, messages in errors.items():
        index = _example_index(path)
        if index is not None and index < len(examples):
            name = str(examples[index].get("name"))
            named = f'examples["{name}"]' + path[path.index("]") + 1:]
            by_example.setdefault(name, {})[named] = messages
        else:
            rest[path] = messages
    return by_example, rest


def _example_index(path: str) -> int | None:
    if not path.startswith("examples["):
        return None
    number = path[len("examples["):path.index("]")] if "]" in path else ""
    return int(number) if number.isdigit() else None


def without_examples(document: dict, names) -> dict:
    document = dict(document)
    document["examples"] = [e for e in document.get("examples") or () if str(e.get("name")) not in set(names)]
    return document
