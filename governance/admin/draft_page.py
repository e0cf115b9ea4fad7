"""The draft page's pieces (governance/admin/drafts.py): the replay window, and the report's parts as rows a
template shows — diff lines, changes, conflicts side by side, examples live vs draft, replayed texts.

The report holds no text: a changed text's passage is read here, from the retained task, and only for
people allowed to read texts in the review UI (governance.work.editors.is_editor).
"""
from __future__ import annotations

from django import forms
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from governance.models import GovernanceEvent, Task
from governance.policy.dump import to_yaml
from governance.policy.replay import DEFAULT_REPLAY
from governance.work import editors
from termlists.matcher import matches_outside, parse_entries

MAX_TASKS = 5000
MAX_HOURS = 24 * 90
CONTEXT_CHARS = 60  # shown either side of a changed passage


class WindowForm(forms.Form):
    """Which retained texts the replay screens: the last N tasks, or the last H hours."""

    window = forms.ChoiceField(label=_("Replay"), initial="tasks", required=False,
                               choices=[("tasks", _("the last tasks")), ("hours", _("the last hours"))])
    tasks = forms.IntegerField(label=_("tasks"), min_value=1, max_value=MAX_TASKS, initial=DEFAULT_REPLAY,
                               required=False)
    hours = forms.FloatField(label=_("hours"), min_value=0.1, max_value=MAX_HOURS, initial=24, required=False)

    def report_options(self) -> dict:
        """The arguments of draft_report for this window; the defaults when the form is empty or wrong.
        Whether judges run is the draft's own choice (`PolicyDraft.replay_judges`, the page's button)."""
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        if data.get("window") == "hours":
            return {"replay_tasks": None, "replay_hours": data.get("hours") or 24}
        return {"replay_tasks": data.get("tasks") or DEFAULT_REPLAY, "replay_hours": None}


def line_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "added", "-": "removed"}.get(line[:1], "same")


def diff_lines(text: str) -> list[tuple[str, str]]:
    return [(line_kind(line), line) for line in text.splitlines()]


# What a draft does to a record: verbs (the catalogue's "changes" is the noun).
ACTION_WORDS = {"add": pgettext_lazy("a draft … a record", "adds"),
                "change": pgettext_lazy("a draft … a record", "changes"),
                "remove": pgettext_lazy("a draft … a record", "removes")}


def change_rows(changes: list[dict]) -> list[dict]:
    return [{"section": c.get("section"), "name": c.get("name"), "action": c.get("action"),
             "action_word": ACTION_WORDS.get(c.get("action"), c.get("action"))} for c in changes]


def _record_yaml(section: str, record: dict | None) -> str:
    return to_yaml({section: [record]}) if record is not None else ""


def conflict_rows(conflicts: list[dict]) -> list[dict]:
    """Each conflict with the live and the draft's record written as the policy file writes them."""
    return [{"section": c["section"], "name": c["name"], "key": f"{c['section']}:{c['name']}",
             "live": _record_yaml(c["section"], c.get("live")), "draft": _record_yaml(c["section"], c.get("draft")),
             "base": _record_yaml(c["section"], c.get("base"))} for c in conflicts]


def _state(result: dict | None) -> str:
    if result is None:
        return "absent"
    return "passed" if result.get("passed") else ("error" if result.get("error") else "failed")


def example_rows(test: dict) -> list[dict]:
    """Every example, under the live policy and under the draft, marking what changed and what regressed."""
    live = {e["name"]: e for e in (test.get("live") or {}).get("examples") or ()}
    draft = {e["name"]: e for e in (test.get("draft") or {}).get("examples") or ()}
    regressions = set(test.get("regressions") or ())
    rows = []
    for name in sorted(set(live) | set(draft)):
        before, after = live.get(name), draft.get(name)
        rows.append({"name": name, "live": _state(before), "draft": _state(after),
                     "live_outcome": (before or {}).get("outcome"), "draft_outcome": (after or {}).get("outcome"),
                     "expected": (after or before or {}).get("expected_outcome"),
                     "missing": (after or {}).get("missing") or [], "unexpected": (after or {}).get("unexpected") or [],
                     "error": (after or {}).get("error"),
                     "changed": _state(before) != _state(after), "regression": name in regressions})
    return rows


def may_read_texts(user) -> bool:
    """The review UI's own gate on texts: editors (group editors, staff, superusers)."""
    return editors.is_editor(user)


def _moved(rules) -> dict:
    """The rules and terms that fire newly, and those that no longer fire, on one replayed text."""
    if isinstance(rules, dict):
        return {"new_rules": list(rules.get("new") or ()), "lost_rules": list(rules.get("lost") or ())}
    return {"new_rules": list(rules or ()), "lost_rules": []}


def changed_terms(changes: list[dict]) -> list[tuple[str, str | None]]:
    """The forbidden terms of the term lists a draft changes (as the draft and as live have them): where a
    text's outcome changes while the same terms fire (a list's mode switched), these mark the passage."""
    terms: dict[str, str | None] = {}
    for change in changes:
        if change.get("section") != "term_lists":
            continue
        for record in (change.get("record"), change.get("base")):
            for line in (record or {}).get("forbidden") or ():
                for term, suggestion in parse_entries([line]):
                    terms.setdefault(term, suggestion)
    return list(terms.items())


def _fallback_passage(text: str, terms) -> dict | None:
    spans = sorted(span for term, suggestion in terms for span in matches_outside(term, suggestion, text))
    return {"start": spans[0][0], "end": spans[0][1]} if spans else None


def replay_rows(replay: dict, user, changes: list[dict] = ()) -> dict:
    """The replay's changed texts, each linked to its task; the changed passage only for text readers.

    The report gives the passage's offsets when the rules that fire change; when only the outcome changes
    (the same terms fire, a list's mode was switched) the page finds the draft's changed terms itself."""
    changed = list(replay.get("changed") or ())
    readable = may_read_texts(user)
    texts = {}
    if readable and changed:
        ids = [c["task_id"] for c in changed]
        texts = {str(pk): answer for pk, answer in Task.objects.filter(pk__in=ids, purged_at__isnull=True)
                 .values_list("id", "answer")}
    terms = changed_terms(list(changes)) if readable else []
    rows = []
    for item in changed:
        task_id = str(item["task_id"])
        row = {"task_id": task_id, "url": reverse("review:task", args=[task_id]), "before": item.get("before"),
               "after": item.get("after"), "passage": None, **_moved(item.get("rules"))}
        passage, text = item.get("passage"), texts.get(task_id)
        if readable and passage is None and text is not None:
            passage = _fallback_passage(text, terms)
        if readable and passage and text is not None:
            start, end = int(passage.get("start") or 0), int(passage.get("end") or 0)
            if 0 <= start <= end <= len(text):
                row["passage"] = {"before": ("…" if start > CONTEXT_CHARS else "") + text[max(0, start - CONTEXT_CHARS):start],
                                  "mark": text[start:end],
                                  "after": text[end:end + CONTEXT_CHARS] + ("…" if end + CONTEXT_CHARS < len(text) else "")}
        rows.append(row)
    return {"window": replay.get("window") or {}, "screened": replay.get("screened", 0),
            "counts": replay.get("counts") or {}, "items": rows, "readable": readable,
            "not_screened": replay.get("not_screened")}


# What each of a draft's governance events says on its page (the log's own labels name the decision).
EVENT_WORDS = {"draft.created": _("opened"), "draft.submitted": _("submitted"), "draft.sent_back": _("sent back"),
               "draft.withdrawn": _("withdrawn"), "draft.approval_withdrawn": _("approval withdrawn: changed after it"),
               "draft.publish_refused": _("publishing refused"), "draft.published": _("published as version %(version)s")}


def draft_history(draft) -> list[dict]:
    """The draft's events, oldest first: when (the page names the time zone), what, and who — the author's
    acts and the approvers' alike; a refusal at the set time says it was the worker's."""
    rows = []
    for event in GovernanceEvent.objects.filter(correlation_id=f"draft-{draft.pk}", check_name="policy").order_by(
            "at", "id")[:200]:
        kind = event.detail.get("event", "")
        what = str(EVENT_WORDS.get(kind, event.get_decision_display()))
        if kind == "draft.published":
            what = what % {"version": event.detail.get("version")}
        if event.detail.get("scheduled"):
            what = _("%(what)s (at the set time)") % {"what": what}
        rows.append({"at": event.at, "what": what, "who": event.actor})
    return rows


def blind_spots(report: dict) -> list[dict]:
    """What the replay cannot see, each as a short notice the page shows above the replayed texts."""
    notices = []
    for row in (report.get("blocked") or {}).get("records") or ():
        if row["blocked"] == 0 and row["section"] != "term_lists":
            continue  # a changed rule or snippet that stopped nothing: the diff says enough
        notices.append({"id": "blocked", "text": row["sentence"], "tasks": [
            {"task_id": t, "url": reverse("review:task", args=[t])} for t in row.get("task_ids") or ()]})
    replay = report.get("replay") or {}
    if replay.get("without_judges"):
        notices.append({"id": "judges-off", "text": replay["without_judges"] + "."})
    if (report.get("judges") or {}).get("sentence"):
        notices.append({"id": "judges-cap", "text": report["judges"]["sentence"] + "."})
    if report.get("generation"):
        notices.append({"id": "generation", "text": report["generation"]["sentence"]})
    for row in report.get("conflict_side") or ():
        notices.append({"id": "conflict-side", "text": row["sentence"]})
    for item in report.get("left_out") or ():
        notices.append({"id": "left-out", "text": _("Example %(name)s is left out: the draft makes it invalid.")
                        % {"name": item["example"]}, "paths": sorted(item["errors"].items())})
    return notices
