"""The review UI (SPEC §10): the queue, a task's page, its actions, the live status, the dashboard.

Thin: parse the request, call one service of `governance.work.queue`, render. Every action is a POST
with CSRF; a refused act (a task that moved on, a blocked edit) says why on the page.
"""
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Case, Count, When
from django.db.models.fields.json import KT
from django.db.models.functions import Substr
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from governance.errors import Conflict
from governance.models import Batch, PolicyVersion, Task
from governance.pages import save_language
from governance.review import dashboard as numbers
from governance.review.access import editor_required
from governance.review.forms import ANY_STATUS, WAITING, WAITING_CHOICE, EditForm, scope_q
from governance.review.not_run import not_run, summary as not_run_summary
from governance.review.task_page import (
    check_names, detail_context, next_waiting, queue_scope, scope_of, scope_query, signature, task_or_404, task_url,
)
from governance.review.undo_offer import offer_undo
from governance.work import editors, queue

PER_PAGE = 25
PREVIEW_CHARS = 160
# Columns the queue reads: the facts, the hints (for their number and checks) and short previews of
# the texts as annotations, never a whole answer or input.
LIST_COLUMNS = ("id", "kind", "status", "configuration", "field", "outcome", "review_decision", "created",
                "updated", "hints", "refusal", "failure", "edited", "checks", "batch_id", "policy_version")


# --- the queue ---


def previewed(tasks):
    """The queue's rows with short previews computed in the same query (no per-row read)."""
    return tasks.only(*LIST_COLUMNS).annotate(
        preview=Case(When(edited=True, then=Substr("edited_text", 1, PREVIEW_CHARS)),
                     default=Substr("answer", 1, PREVIEW_CHARS)),
        instruction=Substr(KT("messages__0__content"), 1, PREVIEW_CHARS),
    )


def queue_row(task, names) -> dict:
    hints = [h for h in task.hints if isinstance(h, dict)] if isinstance(task.hints, list) else []
    checks = list(dict.fromkeys(str(names.get(h.get("check"), h.get("check", ""))) for h in hints))
    if task.preview:
        preview, quiet = task.preview, False
    elif isinstance(task.refusal, dict) and task.refusal.get("stored_message"):
        preview, quiet = task.refusal["stored_message"], True
    elif isinstance(task.failure, dict) and task.failure.get("message"):
        preview, quiet = task.failure["message"], True
    else:
        preview, quiet = task.instruction or "", True
    preview = " ".join(str(preview).split())
    not_ran = not_run(task.checks, hints)
    return {"task": task, "preview": preview[:PREVIEW_CHARS - 1] + "…" if len(preview) >= PREVIEW_CHARS else preview,
            "quiet": quiet, "hint_count": len(hints), "checks": checks, "not_run": not_ran,
            "not_run_text": not_run_summary(not_ran)}


def _queue(request):
    form, scope = queue_scope(request.GET)
    everything = Task.objects.filter(scope_q({**scope, "status": ANY_STATUS}))
    counts = dict(everything.values_list("status").annotate(n=Count("pk")).order_by())
    tasks = previewed(Task.objects.filter(scope_q(scope)).order_by("-created", "-pk"))
    page = Paginator(tasks, scope.get("size") or PER_PAGE).get_page(request.GET.get("page"))
    return form, scope, counts, page


def _queue_signature(counts, page) -> str:
    return signature(sorted(counts.items()), [(t.pk, t.status, t.updated.isoformat()) for t in page])


@require_GET
@editor_required
def queue_list(request):
    form, scope, counts, page = _queue(request)
    query = request.GET.copy()
    query.pop("page", None)
    status_links = []

    def link(value, label, count):
        target = query.copy()
        target["status"] = value
        if value == WAITING_CHOICE:
            target.pop("status")
        return {"value": value, "label": label, "count": count, "query": target.urlencode(),
                "current": scope["status"] == value}

    status_links.append(link(WAITING_CHOICE, _("waiting for review"), sum(counts.get(s, 0) for s in WAITING)))
    status_links.append(link(ANY_STATUS, _("All"), sum(counts.values())))
    for value, label in Task.Status.choices:
        status_links.append(link(value, label, counts.get(value, 0)))
    names = check_names()
    rows = [queue_row(t, names) for t in page]
    # Hint-free ready texts that bulk accept does not offer: a check did not run on them (issue 43).
    unchecked = sum(1 for r in rows if r["task"].status == Task.Status.READY and not r["hint_count"] and r["not_run"])
    return render(request, "review/queue.html", {
        "title": _("Review queue"), "form": form, "page": page, "rows": rows, "bulk_unchecked": unchecked,
        "live_version": PolicyVersion.current(),
        "status_links": status_links, "query": query.urlencode(), "scope_query": scope_query(scope),
        "scope": {k: v for k, v in scope.items() if v},
        "signature": _queue_signature(counts, page), "searching": bool(scope.get("q")),
        "batch": batch_progress(scope.get("batch")),
        "page_numbers": list(page.paginator.get_elided_page_range(page.number, on_each_side=2, on_ends=1)),
        "ellipsis": page.paginator.ELLIPSIS,
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
    _form, _scope_, counts, page = _queue(request)
    return JsonResponse({"signature": _queue_signature(counts, page), "counts": counts,
                         "tasks": [{"id": str(t.pk), "status": t.status} for t in page]})


# --- one task ---


@require_GET
@editor_required
def task_detail(request, pk):
    return render(request, "review/detail.html", detail_context(task_or_404(pk), scope_of(request)))


@require_GET
@editor_required
def task_state(request, pk):
    """What a task's page polls while the task is queued or running: its status, no text."""
    task = get_object_or_404(Task.objects.only("id", "status", "updated"), pk=pk)
    return JsonResponse({"id": str(task.pk), "status": task.status, "status_label": task.get_status_display(),
                         "signature": signature(task.status, task.updated.isoformat())})


def go_on(request, task: Task, scope: dict, done: str):
    """After an act: say what was done and open the next task waiting for review (SPEC §10)."""
    following = next_waiting(task, scope)
    short = str(task.pk)[:8]
    if following is None:
        messages.success(request, _("Task %(id)s: %(done)s Nothing else is waiting for review here.")
                         % {"done": done, "id": short})
        return redirect(reverse("review:queue") + (f"?{scope_query(scope)}" if scope_query(scope) else ""))
    messages.success(request, _("Task %(id)s: %(done)s This is the next task waiting for review.")
                     % {"done": done, "id": short})
    return redirect(task_url(following, scope))


@require_POST
@editor_required
def accept(request, pk):
    task = task_or_404(pk)
    scope = scope_of(request)
    edit_form = None
    edited_text = None
    if "text" in request.POST:
        edit_form = EditForm(request.POST)
        if not edit_form.is_valid():
            return render(request, "review/detail.html", detail_context(task, scope, edit_form), status=400)
        edited_text = edit_form.cleaned_data["text"]
    try:
        editors.accept(task, user=request.user, edited_text=edited_text, reader_language=translation.get_language(),
                     confirm_hints=request.POST.get("confirm_hints") == "1")
    except editors.EditBlocked as exc:
        error = _("The edited text was not accepted: %(message)s") % {"message": exc.block.get("message", "")}
        return render(request, "review/detail.html", detail_context(task, scope, edit_form, error))
    except editors.EditHasHints as exc:
        return render(request, "review/detail.html", detail_context(task, scope, edit_form, edit_body=exc.body))
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect(task_url(task.pk, scope))
    offer_undo(request, task, scope)
    return go_on(request, task, scope, _("Accepted.") if not task.edited else _("The edited text was accepted."))


def _act(request, pk, act, done: str, *, move_on: bool = True):
    """Run one review act on the task; a status that does not allow it is said on the page."""
    task = task_or_404(pk)
    scope = scope_of(request)
    try:
        act(task)
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect(task_url(task.pk, scope))
    if move_on:
        return go_on(request, task, scope, done)
    messages.success(request, done)
    return redirect(task_url(task.pk, scope))


@require_POST
@editor_required
def retry(request, pk):
    return _act(request, pk, lambda task: editors.retry(task, user=request.user),
                _("Queued again as a new attempt."))


@require_POST
@editor_required
def cancel(request, pk):
    return _act(request, pk, lambda task: queue.cancel(task, actor=f"user:{request.user.get_username()}"),
                _("Cancelled: no worker will generate this task."), move_on=False)


@require_POST
@editor_required
def language(request):
    """The review header's language switch: saved in the person's profile, as the admin's is."""
    return save_language(request, fallback=reverse("review:queue"))


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
    context["batches_signature"] = signature(*[f"{p['batch'].pk}:{p['finished']}:{p['total']}"
                                               for p in context["batches_in_progress"] if p])
    return render(request, "review/dashboard.html", context)
