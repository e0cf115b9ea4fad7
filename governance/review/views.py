"""The review UI (SPEC §10): the queue, a task's page, its actions, the live status, the dashboard.

Thin: parse the request, call one service of `governance.queue`, render. Every action is a POST
with CSRF; a refused act (a task that moved on, a blocked edit) says why on the page.
"""
import hashlib

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from governance import queue
from governance.errors import Conflict
from governance.messages import reason_text
from governance.models import Batch, Provider, Task
from governance.review import dashboard as numbers
from governance.review.access import editor_required
from governance.review.forms import EditForm, QueueFilter
from governance.review.passages import place

PER_PAGE = 25
# Columns the queue shows: never the texts, which a list does not need.
LIST_COLUMNS = ("id", "kind", "status", "configuration", "field", "outcome", "review_decision", "created",
                "updated")
LIVE = (Task.Status.QUEUED, Task.Status.RUNNING)


def _outcome_names():
    return {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"), "blocked": _("blocked")}


def _check_names():
    return {
        "term_list": _("Term list"), "rules_judge": _("Rules (judge)"), "pattern_rules": _("Pattern rule"),
        "citations": _("Citations"), "field": _("Field"), "secret_redaction": _("Secret redaction"),
    }


# --- the queue ---
def _queue(request):
    configurations = (Task.objects.order_by("configuration").values_list("configuration", flat=True).distinct())
    form = QueueFilter(request.GET or None, configurations=list(configurations),
                       batches=list(Batch.objects.only("id", "name").order_by("-created")[:50]))
    filters = form.filters() if request.GET else {}
    scope = {k: v for k, v in filters.items() if k != "status"}
    counts = dict(Task.objects.filter(**scope).values_list("status").annotate(n=Count("pk")).order_by())
    tasks = Task.objects.filter(**filters).only(*LIST_COLUMNS).order_by("-created", "-pk")
    page = Paginator(tasks, PER_PAGE).get_page(request.GET.get("page"))
    return form, filters, counts, page


def _signature(*parts) -> str:
    """A short digest of what a live region shows: when it changes, the page fetches the region again."""
    return hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).hexdigest()


def _queue_signature(counts, page) -> str:
    return _signature(sorted(counts.items()), [(t.pk, t.status, t.updated.isoformat()) for t in page])


@require_GET
@editor_required
def queue_list(request):
    form, filters, counts, page = _queue(request)
    query = request.GET.copy()
    query.pop("page", None)
    status_links = []
    for value, label in Task.Status.choices:
        link = query.copy()
        link["status"] = value
        status_links.append({"value": value, "label": label, "count": counts.get(value, 0),
                             "query": link.urlencode(), "current": filters.get("status") == value})
    all_link = query.copy()
    all_link.pop("status", None)
    return render(request, "review/queue.html", {
        "title": _("Review queue"), "form": form, "page": page, "status_links": status_links,
        "total": sum(counts.values()), "all_query": all_link.urlencode(), "any_status": "status" not in filters,
        "query": query.urlencode(), "signature": _queue_signature(counts, page),
        "batch": batch_progress(filters.get("batch_id")),
    })


def batch_progress(batch_id, counts: dict | None = None) -> dict | None:
    """A batch's progress bar: its name, how many of its tasks have finished, of how many."""
    batch = Batch.objects.filter(pk=batch_id).first() if batch_id else None
    if batch is None:
        return None
    if counts is None:
        counts = dict(Task.objects.filter(batch=batch).values_list("status").annotate(n=Count("pk")).order_by())
    finished = sum(counts.get(str(s), 0) for s in Task.FINISHED)
    return {"batch": batch, "finished": finished, "total": batch.total,
            "percent": round(100 * finished / batch.total) if batch.total else 100}


@require_GET
@editor_required
def queue_state(request):
    """What the queue page polls: a signature of its rows and counts; a change means reload the list."""
    _form, _filters, counts, page = _queue(request)
    return JsonResponse({"signature": _queue_signature(counts, page), "counts": counts,
                         "tasks": [{"id": str(t.pk), "status": t.status} for t in page]})


# --- one task ---
def _task_or_404(pk):
    return get_object_or_404(Task.objects.select_related("reviewed_by"), pk=pk)


def _hint_rows(hints: list[dict], placed: set[int]) -> list[dict]:
    names = _check_names()
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


def _detail_context(task: Task, edit_form=None, edit_error: str = "") -> dict:
    text = task.edited_text if task.edited else task.answer
    hints = task.hints if isinstance(task.hints, list) else []
    # A blocked task's text is not kept (SPEC §9): its hints are listed, nothing is marked.
    placed = place(text if task.status != Task.Status.BLOCKED else "", hints)
    rows = _hint_rows(hints, placed.placed)
    hint_numbers = {row["index"]: row["number"] for row in rows}
    pieces = [{"text": p.text, "hints": [hint_numbers[i] for i in p.hints if i in hint_numbers],
               "anchors": [hint_numbers[i] for i in p.first_of if i in hint_numbers]} for p in placed.pieces]
    if edit_form is None and task.status == Task.Status.READY:
        edit_form = EditForm(initial={"text": text})
    return {
        "title": _("Task %(id)s") % {"id": str(task.pk)[:8]}, "task": task, "text": text, "pieces": pieces,
        "hints": rows, "edit_form": edit_form, "edit_error": edit_error,
        "can_accept": task.status == Task.Status.READY,
        "can_reject": task.status in (Task.Status.READY, Task.Status.BLOCKED),
        "can_cancel": task.status == Task.Status.QUEUED,
        "live": task.status in LIVE, "signature": _signature(task.status, task.updated.isoformat()),
        "field": task.field if isinstance(task.field, dict) else None,
        "outcome": _outcome_names().get(task.outcome, task.outcome),
        "from_demo_provider": _answered_by_demo(task),
    }


def _answered_by_demo(task: Task) -> bool:
    """Whether the answer came from a demo provider (litellm's mock_response, no model): say so."""
    from judging.llm import DEMO_ROUTE

    provider = (task.completion or {}).get("provider") if isinstance(task.completion, dict) else None
    return bool(provider) and Provider.objects.filter(name=provider, route=DEMO_ROUTE).exists()


@require_GET
@editor_required
def task_detail(request, pk):
    return render(request, "review/detail.html", _detail_context(_task_or_404(pk)))


@require_GET
@editor_required
def task_state(request, pk):
    """What a task's page polls while the task is queued or running: its status, no text."""
    task = get_object_or_404(Task.objects.only("id", "status", "updated"), pk=pk)
    return JsonResponse({"id": str(task.pk), "status": task.status, "status_label": task.get_status_display(),
                         "signature": _signature(task.status, task.updated.isoformat())})


@require_POST
@editor_required
def accept(request, pk):
    task = _task_or_404(pk)
    edit_form = None
    edited_text = None
    if "text" in request.POST:
        edit_form = EditForm(request.POST)
        if not edit_form.is_valid():
            return render(request, "review/detail.html", _detail_context(task, edit_form), status=400)
        edited_text = edit_form.cleaned_data["text"]
    try:
        queue.accept(task, user=request.user, edited_text=edited_text, reader_language=translation.get_language())
    except queue.EditBlocked as exc:
        error = _("The edited text was not accepted: %(message)s") % {"message": exc.block.get("message", "")}
        return render(request, "review/detail.html", _detail_context(task, edit_form, error))
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect("review:task", pk=task.pk)
    messages.success(request, _("Accepted.") if not task.edited else _("The edited text was accepted."))
    return redirect("review:task", pk=task.pk)


def _act(request, pk, act, done: str):
    """Run one review act on the task; a status that does not allow it is said on the page."""
    task = _task_or_404(pk)
    try:
        act(task)
    except Conflict as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done)
    return redirect("review:task", pk=task.pk)


@require_POST
@editor_required
def reject(request, pk):
    return _act(request, pk, lambda task: queue.reject(task, user=request.user), _("Rejected."))


@require_POST
@editor_required
def cancel(request, pk):
    return _act(request, pk, lambda task: queue.cancel(task, actor=f"user:{request.user.get_username()}"),
                _("Cancelled: no worker will generate this task."))


# --- the dashboard ---
@require_GET
@editor_required
def dashboard(request):
    try:
        days = int(request.GET.get("days", ""))
    except ValueError:
        days = None
    context = numbers.summary(days)
    context["title"] = _("Dashboard")
    context["batches_in_progress"] = [
        batch_progress(batch.pk) for batch in Batch.objects.filter(finished_at__isnull=True).order_by("-created")[:10]]
    return render(request, "review/dashboard.html", context)
