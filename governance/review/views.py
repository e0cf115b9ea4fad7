"""The review UI (SPEC §10): the queue, a task's page, its actions, the live status, the dashboard.

Thin: parse the request, call one service of `governance.work.queue`, render. Every action is a POST
with CSRF; a refused act (a task that moved on, a blocked edit) says why on the page.
"""
import hashlib
import re
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Case, Count, Q, When
from django.db.models.fields.json import KT
from django.db.models.functions import Substr
from django.http import JsonResponse
from django.conf import settings
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from governance.work import queue
from governance.errors import Conflict
from governance.evidence import trace
from governance.messages import TASK_FAILURE_OTHER, TASK_FAILURES, reason_text
from governance.pages import save_language
from governance.models import Batch, Provider, Task
from governance.review import dashboard as numbers
from governance.review.access import editor_required
from governance.review.forms import ANY_STATUS, WAITING, WAITING_CHOICE, EditForm, QueueFilter, scope_q
from governance.review.passages import place

PER_PAGE = 25
PREVIEW_CHARS = 160
# Columns the queue reads: the facts, the hints (for their number and checks) and short previews of
# the texts as annotations, never a whole answer or input.
LIST_COLUMNS = ("id", "kind", "status", "configuration", "field", "outcome", "review_decision", "created",
                "updated", "hints", "refusal", "failure", "edited")
LIVE = (Task.Status.QUEUED, Task.Status.RUNNING)


def _outcome_names():
    return {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"), "blocked": _("blocked")}


def _check_names():
    return {
        "term_list": _("Term list"), "rules_judge": _("Rules (judge)"), "pattern_rules": _("Pattern rule"),
        "citations": _("Citations"), "field": _("Field"), "secret_redaction": _("Secret redaction"),
    }


# --- the queue ---
def _configurations():
    return list(Task.objects.order_by("configuration").values_list("configuration", flat=True).distinct())


def _scope(params) -> tuple[QueueFilter, dict]:
    """The queue's filter form and its valid scope (status defaults to waiting for review)."""
    form = QueueFilter(params or None, configurations=_configurations(),
                       batches=list(Batch.objects.only("id", "name", "created").order_by("-created")[:50]))
    return form, (form.scope() if params else {"status": WAITING_CHOICE})


def scope_query(scope: dict) -> str:
    """The scope as a query string, leaving out the default status."""
    return urlencode({k: v for k, v in scope.items() if v and not (k == "status" and v == WAITING_CHOICE)})


def _previewed(tasks):
    """The queue's rows with short previews computed in the same query (no per-row read)."""
    return tasks.only(*LIST_COLUMNS).annotate(
        preview=Case(When(edited=True, then=Substr("edited_text", 1, PREVIEW_CHARS)),
                     default=Substr("answer", 1, PREVIEW_CHARS)),
        instruction=Substr(KT("messages__0__content"), 1, PREVIEW_CHARS),
    )


def _row(task, names) -> dict:
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
    return {"task": task, "preview": preview[:PREVIEW_CHARS - 1] + "…" if len(preview) >= PREVIEW_CHARS else preview,
            "quiet": quiet, "hint_count": len(hints), "checks": checks}


def _queue(request):
    form, scope = _scope(request.GET)
    everything = Task.objects.filter(scope_q({**scope, "status": ANY_STATUS}))
    counts = dict(everything.values_list("status").annotate(n=Count("pk")).order_by())
    tasks = _previewed(Task.objects.filter(scope_q(scope)).order_by("-created", "-pk"))
    page = Paginator(tasks, PER_PAGE).get_page(request.GET.get("page"))
    return form, scope, counts, page


def _signature(*parts) -> str:
    """A short digest of what a live region shows: when it changes, the page fetches the region again."""
    return hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).hexdigest()


def _queue_signature(counts, page) -> str:
    return _signature(sorted(counts.items()), [(t.pk, t.status, t.updated.isoformat()) for t in page])


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
    names = _check_names()
    return render(request, "review/queue.html", {
        "title": _("Review queue"), "form": form, "page": page, "rows": [_row(t, names) for t in page],
        "status_links": status_links, "query": query.urlencode(), "scope_query": scope_query(scope),
        "signature": _queue_signature(counts, page), "searching": bool(scope.get("q")),
        "batch": batch_progress(scope.get("batch")),
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
    """What failed and what an editor can do, in their words; the worker's detail below."""
    failure = failure if isinstance(failure, dict) else {}
    code = str(failure.get("code") or "")
    what, todo = TASK_FAILURES.get(code, TASK_FAILURE_OTHER)
    return {"code": code, "what": str(what), "todo": str(todo), "detail": worker_detail(failure.get("message", ""))}


def _scope_of(request) -> dict:
    """The queue scope a task's page was opened in (its query string, or the POSTed hidden fields)."""
    params = request.POST if request.method == "POST" else request.GET
    params = {k: params[k] for k in ("status", "kind", "configuration", "q") if params.get(k)}
    return _scope(params)[1]


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


def _detail_context(task: Task, scope: dict, edit_form=None, edit_error: str = "", edit_body=None) -> dict:
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
    from governance.review import feedback  # the teaching blocks (SPEC §10.2) mark up the hint rows

    return {**feedback.context(task, rows),
        "title": _("Task %(id)s") % {"id": str(task.pk)[:8]}, "task": task, "text": text, "pieces": pieces,
        "hints": rows, "edit_form": edit_form, "edit_error": edit_error,
        "edit_hints": edit_hints, "edit_pieces": edit_pieces, "edit_length": len(edit_value or ""),
        "can_accept": task.status == Task.Status.READY,
        "can_reject": task.status in (Task.Status.READY, Task.Status.BLOCKED),
        "can_cancel": task.status == Task.Status.QUEUED,
        "can_retry": task.status == Task.Status.FAILED,
        "failure": failure_words(task.failure) if task.status == Task.Status.FAILED else None,
        "earlier_failures": [{**f, **failure_words(f)} for f in queue.earlier_failures(task)],
        "live": task.status in LIVE, "signature": _signature(task.status, task.updated.isoformat()),
        "field": task.field if isinstance(task.field, dict) else None,
        "outcome": _outcome_names().get(task.outcome, task.outcome),
        "from_demo_provider": _answered_by_demo(task),
        "scope": {k: v for k, v in scope.items() if v}, "scope_query": scope_query(scope),
        "newer_url": task_url(newer, scope) if newer else "", "older_url": task_url(older, scope) if older else "",
        "queue_url": reverse("review:queue") + (f"?{scope_query(scope)}" if scope_query(scope) else ""),
        "evidence": trace.evidence_of(task), "trace": trace.admin_links(task),  # SPEC §13.1
    }


def _answered_by_demo(task: Task) -> bool:
    """Whether the answer came from a demo provider (litellm's mock_response, no model): say so."""
    from judging.llm import DEMO_ROUTE

    provider = (task.completion or {}).get("provider") if isinstance(task.completion, dict) else None
    return bool(provider) and Provider.objects.filter(name=provider, route=DEMO_ROUTE).exists()


@require_GET
@editor_required
def task_detail(request, pk):
    return render(request, "review/detail.html", _detail_context(_task_or_404(pk), _scope_of(request)))


@require_GET
@editor_required
def task_state(request, pk):
    """What a task's page polls while the task is queued or running: its status, no text."""
    task = get_object_or_404(Task.objects.only("id", "status", "updated"), pk=pk)
    return JsonResponse({"id": str(task.pk), "status": task.status, "status_label": task.get_status_display(),
                         "signature": _signature(task.status, task.updated.isoformat())})


def _go_on(request, task: Task, scope: dict, done: str):
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
    task = _task_or_404(pk)
    scope = _scope_of(request)
    edit_form = None
    edited_text = None
    if "text" in request.POST:
        edit_form = EditForm(request.POST)
        if not edit_form.is_valid():
            return render(request, "review/detail.html", _detail_context(task, scope, edit_form), status=400)
        edited_text = edit_form.cleaned_data["text"]
    try:
        queue.accept(task, user=request.user, edited_text=edited_text, reader_language=translation.get_language(),
                     confirm_hints=request.POST.get("confirm_hints") == "1")
    except queue.EditBlocked as exc:
        error = _("The edited text was not accepted: %(message)s") % {"message": exc.block.get("message", "")}
        return render(request, "review/detail.html", _detail_context(task, scope, edit_form, error))
    except queue.EditHasHints as exc:
        return render(request, "review/detail.html", _detail_context(task, scope, edit_form, edit_body=exc.body))
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect(task_url(task.pk, scope))
    return _go_on(request, task, scope, _("Accepted.") if not task.edited else _("The edited text was accepted."))


def _act(request, pk, act, done: str, *, go_on: bool = True):
    """Run one review act on the task; a status that does not allow it is said on the page."""
    task = _task_or_404(pk)
    scope = _scope_of(request)
    try:
        act(task)
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect(task_url(task.pk, scope))
    if go_on:
        return _go_on(request, task, scope, done)
    messages.success(request, done)
    return redirect(task_url(task.pk, scope))


@require_POST
@editor_required
def reject(request, pk):
    return _act(request, pk, lambda task: queue.reject(task, user=request.user), _("Rejected."))


@require_POST
@editor_required
def retry(request, pk):
    return _act(request, pk, lambda task: queue.retry(task, user=request.user),
                _("Queued again as a new attempt."))


@require_POST
@editor_required
def cancel(request, pk):
    return _act(request, pk, lambda task: queue.cancel(task, actor=f"user:{request.user.get_username()}"),
                _("Cancelled: no worker will generate this task."), go_on=False)


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
    return render(request, "review/dashboard.html", context)
