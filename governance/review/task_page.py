"""What a task's page shows (SPEC §10, §10.2): the task or 404, its text with every hint marked, the
teaching blocks, its neighbours in the queue's scope, and the URLs that keep that scope.

The review views and the teaching acts (`governance.review.feedback`) both render it.
"""
import hashlib
import re
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Q
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _

from governance.evidence import trace
from governance.messages import (
    TASK_FAILURE_OTHER, TASK_FAILURES, reason_text,
)
from governance.models import Batch, PolicyExample, PolicyVersion, Provider, Task
from governance.review import teaching as service
from governance.review.forms import SCOPE_FIELDS, WAITING, WAITING_CHOICE, EditForm, QueueFilter, scope_q
from governance.review.keeping import plan
from governance.review.not_run import not_run
from governance.review.passages import place, suggestions_of
from governance.work import editors

LIVE = (Task.Status.QUEUED, Task.Status.RUNNING)


def outcome_names():
    return {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"), "blocked": _("blocked")}


def check_names():
    return {
        "term_list": _("Term list"), "rules_judge": _("Rules (judge)"), "pattern_rules": _("Pattern rule"),
        "citations": _("Citations"), "field": _("Field"), "secret_redaction": _("Secret redaction"),
    }


def _configurations():
    return list(Task.objects.order_by("configuration").values_list("configuration", flat=True).distinct())


def queue_scope(params) -> tuple[QueueFilter, dict]:
    """The queue's filter form and its valid scope (status defaults to waiting for review)."""
    form = QueueFilter(params or None, configurations=_configurations(),
                       batches=list(Batch.objects.only("id", "name", "created").order_by("-created")[:50]))
    return form, (form.scope() if params else {"status": WAITING_CHOICE})


def scope_query(scope: dict) -> str:
    """The scope as a query string, leaving out the default status."""
    return urlencode({k: v for k, v in scope.items() if v and not (k == "status" and v == WAITING_CHOICE)})


def signature(*parts) -> str:
    """A short digest of what a live region shows: when it changes, the page fetches the region again."""
    return hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).hexdigest()


def task_or_404(pk):
    return get_object_or_404(Task.objects.select_related("reviewed_by"), pk=pk)


def _hint_rows(hints: list[dict], placed: set[int]) -> list[dict]:
    names = check_names()
    rows = []
    for index, hint in enumerate(hints):
        if not isinstance(hint, dict):
            continue
        rule = hint.get("rule") if isinstance(hint.get("rule"), dict) else None
        terms = hint.get("terms") if isinstance(hint.get("terms"), list) else []
        rows.append({
            "index": index, "number": len(rows) + 1, "check": hint.get("check", ""),
            "check_name": names.get(hint.get("check"), hint.get("check", "")), "type": hint.get("type", ""),
            "rule": rule, "pattern_rule": bool(rule and "number" not in rule),
            "list": hint.get("list"), "terms": terms,
            "missing": hint.get("missing") if isinstance(hint.get("missing"), list) else [],
            "not_checked": hint.get("type") == "not_checked",
            "reason": reason_text(hint["reason"]) if hint.get("reason") else "",
            "configuration": hint.get("configuration", ""), "passage": hint.get("passage"),
            "marked": index in placed, "tool_call": hint.get("tool_call"), "argument": hint.get("argument"),
            "max_length": hint.get("max_length"), "length": hint.get("length"),
            "message": hint.get("message", ""),
        })
    return rows


def _marked(text: str, hints: list[dict]) -> tuple[list[dict], list[dict]]:
    """(pieces of the text, hint rows): every hinted passage marked and credited to its hint."""
    placed = place(text, hints)
    rows = _hint_rows(hints, placed.placed)
    numbers = {row["index"]: row["number"] for row in rows}
    pieces = [{"text": p.text, "hints": [numbers[i] for i in p.hints if i in numbers],
               "anchors": [numbers[i] for i in p.first_of if i in numbers],
               "ends": [numbers[i] for i in p.ends if i in numbers],
               "credited": numbers.get(p.credited)} for p in placed.pieces]
    for row in rows:
        row["occurrences"] = placed.occurrences.get(row["index"], 0)
    return pieces, rows


# The advice the worker writes for the consuming system; the page gives an editor's advice instead.
_CONSUMER_ADVICE = ("%(reason)s Gave up after %(n)d attempts; check the provider and resubmit.",
                    "Gavel could not run this task; it has been logged. Resubmit it.")


_CONSUMER_ADVICE_SUFFIX = "Raise the cap or resubmit tomorrow."


def worker_detail(message: str) -> str:
    """The cause in a task's failure message without the advice meant for the consuming system."""
    message = str(message or "").strip()
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            for template in _CONSUMER_ADVICE:
                pattern = re.escape(translation.gettext(template))
                pattern = pattern.replace(re.escape("%(reason)s"), "(?P<reason>.*?)").replace(
                    re.escape("%(n)d"), r"\d+")
                match = re.fullmatch(pattern, message, flags=re.S)
                if match:
                    return (match.groupdict().get("reason") or "").strip()
            suffix = translation.gettext(_CONSUMER_ADVICE_SUFFIX)
            if message.endswith(suffix):
                return message[: -len(suffix)].strip()
    return message


def failure_words(failure) -> dict:
    """What failed and what an editor can do, in their words; what the code means; then the message as the
    consuming system was told it (`verbatim`: as stored, never translated) and its cause alone (`detail`)."""
    failure = failure if isinstance(failure, dict) else {}
    code = str(failure.get("code") or "")
    words = TASK_FAILURES.get(code, TASK_FAILURE_OTHER)
    message = str(failure.get("message") or "")
    return {"code": code, "what": str(words.what), "todo": str(words.todo),
            "code_words": str(words.means) if code else "",
            "verbatim": message, "detail": worker_detail(message)}


def scope_of(request) -> dict:
    """The queue scope a task's page was opened in (its query string, or the POSTed hidden fields)."""
    params = request.POST if request.method == "POST" else request.GET
    params = {k: params[k] for k in SCOPE_FIELDS if params.get(k)}
    return queue_scope(params)[1]


def _neighbours(task: Task, scope: dict) -> tuple:
    """(the task above, the task below) in the queue's order (newest first) within its scope."""
    rows = Task.objects.filter(scope_q(scope))
    newer = (rows.filter(Q(created__gt=task.created) | Q(created=task.created, pk__gt=task.pk))
             .order_by("created", "pk").values_list("pk", flat=True).first())
    older = (rows.filter(Q(created__lt=task.created) | Q(created=task.created, pk__lt=task.pk))
             .order_by("-created", "-pk").values_list("pk", flat=True).first())
    return newer, older


def next_waiting(task: Task, scope: dict):
    """The task to review after this one: the next one down the queue that still waits, else the
    newest one waiting; None when nothing else waits in this scope."""
    scope = dict(scope)
    if scope.get("status") not in WAITING:
        scope["status"] = WAITING_CHOICE
    rows = Task.objects.filter(scope_q(scope)).exclude(pk=task.pk)
    older = (rows.filter(Q(created__lt=task.created) | Q(created=task.created, pk__lt=task.pk))
             .order_by("-created", "-pk").values_list("pk", flat=True).first())
    return older or rows.order_by("-created", "-pk").values_list("pk", flat=True).first()


def task_url(pk, scope: dict) -> str:
    query = scope_query(scope)
    return reverse("review:task", args=[pk]) + (f"?{query}" if query else "")


def detail_context(task: Task, scope: dict, edit_form=None, edit_error: str = "", edit_body=None) -> dict:
    text = task.edited_text if task.edited else task.answer
    hints = task.hints if isinstance(task.hints, list) else []
    # A blocked text is not kept (SPEC §9): its hints are listed, nothing is marked.
    pieces, rows = _marked(text if task.outcome != "blocked" else "", hints)
    if edit_form is None and task.status == Task.Status.READY:
        edit_form = EditForm(initial={"text": text})
    edit_pieces, edit_hints = _marked(edit_body.get("text") or "", edit_body.get("hints") or []) if edit_body \
        else ([], [])
    newer, older = _neighbours(task, scope)
    edit_value = edit_form["text"].value() if edit_form is not None else ""
    # The teaching blocks (SPEC §10.2) mark up the hint rows.
    return {**teaching_context(task, rows),
        "title": _("Task %(id)s") % {"id": str(task.pk)[:8]}, "task": task, "text": text, "pieces": pieces,
        "hints": rows, "edit_form": edit_form, "edit_error": edit_error,
        "edit_hints": edit_hints, "edit_pieces": edit_pieces, "edit_length": len(edit_value or ""),
        "can_accept": task.status == Task.Status.READY,
        "stale": {"screened": task.policy_version, "live": PolicyVersion.current()}
        if task.status == Task.Status.READY and editors.screened_under_older(task) else None,
        "can_reject": task.status in (Task.Status.READY, Task.Status.BLOCKED),
        "can_cancel": task.status == Task.Status.QUEUED,
        "can_retry": task.status == Task.Status.FAILED,
        "failure": failure_words(task.failure) if task.status == Task.Status.FAILED else None,
        "earlier_failures": [{**f, **failure_words(f)} for f in editors.earlier_failures(task)],
        "live": task.status in LIVE, "signature": signature(task.status, task.updated.isoformat()),
        "field": task.field if isinstance(task.field, dict) else None,
        "outcome": outcome_names().get(task.outcome, task.outcome),
        "from_demo_provider": _answered_by_demo(task), "not_run": not_run(task.checks, hints),
        "scope": {k: v for k, v in scope.items() if v}, "scope_query": scope_query(scope),
        "newer_url": task_url(newer, scope) if newer else "", "older_url": task_url(older, scope) if older else "",
        "queue_url": reverse("review:queue") + (f"?{scope_query(scope)}" if scope_query(scope) else ""),
        "evidence": trace.evidence_of(task), "trace": trace.admin_links(task),
    }


def _answered_by_demo(task: Task) -> bool:
    """Whether the answer came from a demo provider (litellm's mock_response, no model): say so."""
    from judging.llm import DEMO_ROUTE  # the model-call door loads only when a page needs it (start-up time)

    provider = (task.completion or {}).get("provider") if isinstance(task.completion, dict) else None
    return bool(provider) and Provider.objects.filter(name=provider, route=DEMO_ROUTE).exists()


def teaching_context(task: Task, rows: list[dict]) -> dict:
    """What the teaching blocks of a task's page show; adds each hint row's verdict and suggestions."""
    open_ = not service.is_final(task)
    verdicts = service.verdicts(task)
    hints = task.hints if isinstance(task.hints, list) else []
    can_apply = task.status == Task.Status.READY
    for row in rows:
        hint = hints[row["index"]] if row["index"] < len(hints) else {}
        facts = service.hint_facts(hint)
        marked = {verdicts.get(service.encode(f)) for f in facts} - {None}
        row["feedback_possible"] = bool(facts)
        row["findings"] = [service.encode(f) for f in facts]
        row["verdict"] = marked.pop() if len(marked) == 1 else ("mixed" if marked else "")
        row["suggestions"] = [{"term": term, "suggestion": value} for term, value in suggestions_of(hint).items()
                              if term in (row.get("terms") or ())] if can_apply and row.get("marked") else []
    # A blocked task keeps no text: nobody can say what it missed (issue 29).
    missed = [{"value": value, "label": label, "verdict": verdicts.get(value) == service.MISSED}
              for value, label in service.missed_choices(task)] if open_ and task.outcome != "blocked" else []
    reported = [value for value, verdict in verdicts.items() if verdict == service.MISSED]
    kept = PolicyExample.objects.filter(from_task=task.pk).values_list("name", flat=True).first()
    keep_plan = plan(task) if task.review_decision and not kept else None
    return {
        "feedback_open": open_ and any(row["feedback_possible"] for row in rows) or (open_ and bool(missed)),
        "missed_choices": missed, "missed_reported": len(reported),
        "can_keep": bool(keep_plan and keep_plan["text"]), "keep_plan": keep_plan,
        "kept_example": kept or "",
    }
