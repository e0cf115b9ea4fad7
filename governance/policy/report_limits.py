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
from governance.models.policy import normalise_tags
from governance.policy.draft_refusals import named_paths
from governance.policy.format import NAME_KEYS
from governance.policy.proposals import NotPublishable
from governance.policy.replay import MAX_WINDOW_TASKS, at_least, min_texts
from termlists.matcher import dedupe_key, parse_entries

# Task ids listed per record an approver may open (the count is always whole).
MAX_TASK_IDS = 200
# The configuration fields that shape generation, which stored texts cannot test.
GENERATION_FIELDS = ("provider", "model", "fallbacks", "system_prompt", "context_tags", "temperature", "max_tokens")
# Correlation ids per query of the governance log (an IN list of the whole window would be one huge query).
EVENT_CHUNK = 500
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
    """The terms of a list as the matcher compares them (case-folded, spaces collapsed: its dedupe key)."""
    return {dedupe_key(term) for term, _suggestion in parse_entries(list(lines or ()))}


def _active(record: dict | None) -> bool:
    return record is not None and record.get("is_active", True) is not False


def _rule_mode(record: dict | None) -> str:
    return ((record or {}).get("rules") or {}).get("mode") or "off"


def blocked_tasks(window: dict, *, now=None) -> list[tuple[str, str]]:
    """(task id, correlation id) of the tasks in the replay's window whose screening blocked them: the
    newest `tasks` tasks (blocked or not), or those of the last `hours` hours (the blocked ones among them, at
    most MAX_WINDOW_TASKS as the replay reads); within the retention."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.GAVEL_TASK_RETENTION_DAYS)
    tasks = Task.objects.filter(created__gte=cutoff).order_by("-created")
    if window.get("hours") is not None:
        cutoff = max(cutoff, now - timedelta(hours=window["hours"]))
        rows = (tasks.filter(created__gte=cutoff, outcome="blocked").exclude(correlation_id="")
                .values_list("id", "correlation_id")[:MAX_WINDOW_TASKS])
        return [(str(pk), correlation) for pk, correlation in rows]
    limit = int(window.get("tasks") or 0)
    if limit <= 0:
        return []
    # The newest `limit` tasks whatever their outcome: the window the replay reads, then its blocked ones.
    newest = tasks.values("pk")[:limit]
    rows = (Task.objects.filter(pk__in=newest, outcome="blocked").exclude(correlation_id="")
            .order_by("-created").values_list("id", "correlation_id"))
    return [(str(pk), correlation) for pk, correlation in rows]


def _block_events(correlations: list[str]):
    """The governance log's block events of these correlation ids, EVENT_CHUNK ids per query."""
    for start in range(0, len(correlations), EVENT_CHUNK):
        yield from GovernanceEvent.objects.filter(decision="blocked",
                                                  correlation_id__in=correlations[start:start + EVENT_CHUNK])


def _lifted(event, live: dict, document: dict) -> bool | None:
    """Whether the draft lifts this block event (True), keeps it (False), or cannot tell without the text
    (None: a pattern rule or judged rule it names, or the configuration's rules, is changed by the draft)."""
    detail, check = event.detail or {}, event.check_name
    if check == "term_list":
        if detail.get("reason"):  # the lists could not be read: a fault, not a term, whatever the draft does
            return False
        record = _record(document, "term_lists", detail.get("list"))
        if not _active(record) or record.get("mode") == "report":
            return True
        scoped = record.get("configurations") or []
        if scoped and event.configuration and event.configuration not in scoped:
            return True
        kept = ({dedupe_key(t) for t in detail.get("terms") or ()} & _terms(record.get("forbidden"))) | (
            {dedupe_key(t) for t in detail.get("missing") or ()} & _terms(record.get("required")))
        return not kept
    if check in ("pattern_rules", "rules_judge"):
        configuration = _record(document, "configurations", event.configuration)
        if configuration is not None and _rule_mode(configuration) != "block":
            return True
        section, key = ("pattern_rules", "identifier") if check == "pattern_rules" else ("snippets", "snippet")
        names = {rule.get(key) for rule in detail.get("rules") or () if rule.get(key)}
        if names and all(not _active(_record(document, section, name)) for name in names):
            return True
        unchanged = names and all(_record(live, section, name) == _record(document, section, name) for name in names)
        rules_kept = (_record(live, "configurations", event.configuration) or {}).get("rules") == (
            configuration or {}).get("rules")
        # Neither the rules that stopped it nor the configuration's rules change: it would stop it again.
        return False if unchanged and rules_kept else None
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
    for event in _block_events(list(by_correlation)):
        events.setdefault(by_correlation[event.correlation_id], []).append(event)
    # A task is delivered only when the draft lifts every block it had; one it cannot judge stays unknown.
    fate = {}
    for task_id, its_events in events.items():
        lifted = [_lifted(e, live, document) for e in its_events]
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
        elif all(v >= n for v in counts.values()):
            row.update(blocked=len(ids), **counts, sentence=blocked_sentence(name, len(ids), counts), task_ids=None)
        else:
            # For readers of counts, nothing about fewer than GAVEL_REPORT_MIN_TEXTS tasks: a small part (zero
            # included) is withheld, with the verdict and the sentence that would say it; the total stays.
            row.update(blocked=at_least(len(ids), n), **{k: None for k in counts}, verdict=None,
                       sentence=blocked_sentence(name, len(ids), None, n=n), task_ids=None)
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


def blocked_sentence(name: str, blocked: int, counts: dict | None, *, n: int | None = None) -> str:
    """"24 tasks were blocked by Kunde; this draft would deliver them" (or still block them, or a mix). Without
    `counts` (withheld from a reader of counts) only how many were blocked, or "fewer than `n`"."""
    if n is not None and blocked < n:
        return _("Fewer than %(n)d tasks were blocked by %(name)s.") % {"n": n, "name": name}
    if not blocked:
        return _("No task in the window was blocked by %(name)s.") % {"name": name}
    head = ngettext("%(count)d task was blocked by %(name)s", "%(count)d tasks were blocked by %(name)s",
                    blocked) % {"count": blocked, "name": name}
    if counts is None:
        return f"{head}."
    deliver, still, unknown = counts[DELIVER], counts[STILL_BLOCK], counts[UNKNOWN]
    if deliver == blocked:
        tail = ngettext("this draft would deliver it", "this draft would deliver them", blocked)
    elif still == blocked:
        tail = ngettext("this draft would still block it", "this draft would still block them", blocked)
    elif unknown == blocked:
        tail = _("the draft changes it, and without the texts whether it would still block them cannot be told")
    elif not unknown:  # a part that is zero is not named
        tail = _("this draft would deliver %(deliver)d and still block %(still)d") % {"deliver": deliver,
                                                                                     "still": still}
    elif not still:
        tail = _("this draft would deliver %(deliver)d and for %(unknown)d it cannot be told without the texts") % {
            "deliver": deliver, "unknown": unknown}
    elif not deliver:
        tail = _("this draft would still block %(still)d and for %(unknown)d it cannot be told without the "
                 "texts") % {"still": still, "unknown": unknown}
    else:
        tail = _("this draft would deliver %(deliver)s, still block %(still)s and for %(unknown)s it cannot be "
                 "told without the texts") % {"deliver": deliver, "still": still, "unknown": unknown}
    return f"{head}; {tail}."


# --- judged rule lines ------------------------------------------------------------------------


def judged_lines_changed(changes: list[dict], live: dict, document: dict) -> int:
    """How many rule lines of snippets (what judges read) the draft adds, changes or removes against the live
    policy (`document` as tested: a conflicting record with the draft's side)."""
    count = 0
    for change in changes:
        if change["section"] != "snippets":
            continue
        before = _rule_lines(_record(live, "snippets", change["name"]))
        after = _rule_lines(_record(document, "snippets", change["name"]))
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
            if op != "equal":
                count += max(i2 - i1, j2 - j1)
    return count


def _in_prompt(record: dict | None) -> bool:
    """Whether a snippet (active, not hidden) or pattern rule (active) is appended to a prompt whose context
    tags it carries."""
    return _active(record) and not record.get("hidden")


def _rule_lines(record: dict | None) -> list[str]:
    if not _active(record):
        return []
    return [line.strip() for line in str(record.get("body") or "").splitlines() if line.strip()]


def without_judges(changes: list[dict], with_judges: bool, live: dict, document: dict) -> str | None:
    """The sentence the report gives when judges were not run and judged rule lines change."""
    lines = judged_lines_changed(changes, live, document)
    if with_judges or not lines:
        return None
    return ngettext("judges were not run: %(n)d judged rule line changes, so hints from judges are not compared",
                    "judges were not run: %(n)d judged rule lines change, so hints from judges are not compared",
                    lines) % {"n": lines}


def judged_sentence(texts: int, judged: int, cap: float, stopped: bool) -> str | None:
    """Said only when the cap stopped a replay's judges (`replay.screen_all`'s flag). Each policy's replay
    ran within half the report's cap, and the sentence says so."""
    if not stopped:
        return None
    return ngettext("the cost cap of %(cap).2f (%(side).2f for each policy's replay) was reached: %(judged)d of "
                    "%(texts)d text was judged",
                    "the cost cap of %(cap).2f (%(side).2f for each policy's replay) was reached: %(judged)d of "
                    "%(texts)d texts were judged",
                    texts) % {"cap": cap, "side": cap / 2, "judged": judged, "texts": texts}


# --- generation -------------------------------------------------------------------------------


def generation_part(changes: list[dict], live: dict, document: dict) -> dict | None:
    """`report["generation"]`: the configuration fields that shape generation which the draft changes against
    the live policy (`document` as tested: a conflicting record with the draft's side), and the snippets the
    draft changes that a configuration's `context_tags` append to its prompt, and the pattern rules whose
    statements they append (snippets.services.context_block)."""
    fields = []
    for change in changes:
        if change["section"] != "configurations":
            continue
        before = _record(live, "configurations", change["name"])
        after = _record(document, "configurations", change["name"])
        if not before or not after:
            continue  # a configuration added or removed: no stored text was generated by both
        for field in GENERATION_FIELDS:
            if before.get(field) != after.get(field):
                fields.append({"configuration": change["name"], "field": field})
    for change in changes:
        if change["section"] not in ("snippets", "pattern_rules"):
            continue
        before = _record(live, change["section"], change["name"])
        after = _record(document, change["section"], change["name"])
        if before == after:
            continue
        tags = {t for record in (before, after) if _in_prompt(record) for t in normalise_tags(record.get("tags"))}
        for configuration in document.get("configurations") or ():
            if tags & set(normalise_tags(configuration.get("context_tags"))):
                fields.append({"configuration": configuration.get("identifier"), "field": "context",
                               "record": f"{change['section']}:{change['name']}"})
    if not fields:
        return None
    names = ", ".join(f"{f['configuration']}.{f['field']}" + (f" ({f['record']})" if "record" in f else "")
                      for f in fields)
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
    """The errors of a draft's document by example name (paths named `examples["greeting"]…` as a refusal
    names them: draft_refusals.named_paths), and the rest."""
    examples = document.get("examples") or []
    by_example: dict[str, dict] = {}
    rest = {}
    for path, messages in errors.items():
        [(named, messages)] = named_paths({path: messages}, document).items()
        index = path[len("examples["):].partition("]")[0] if path.startswith("examples[") else ""
        if named != path and index.isdigit():
            by_example.setdefault(str(examples[int(index)].get("name")), {})[named] = messages
        else:
            rest[path] = messages
    return by_example, rest


def without_examples(document: dict, names) -> dict:
    document = dict(document)
    document["examples"] = [e for e in document.get("examples") or () if str(e.get("name")) not in set(names)]
    return document
