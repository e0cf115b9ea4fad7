"""The task page's teaching acts (SPEC §10.2): right / wrong on a hint, a missed rule or term, apply a
term's suggestion to the edit, keep a reviewed task as a policy example.

Thin: parse the POST, call one service (`governance.review.teaching`, `governance.policy.kept`), redirect back
to the task (or render it with the edit filled in). Every act is a POST with CSRF.
"""
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from governance.review import teaching as service
from governance.errors import Conflict, GavelError
from governance.models import PolicyExample, Task
from governance.review.access import editor_required
from governance.review.keeping import plan
from governance.review.forms import EditForm
from governance.review.passages import apply_suggestion as replaced, suggestions_of


def context(task: Task, rows: list[dict]) -> dict:
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


def _back(task: Task, request, anchor: str = ""):
    from governance.review.views import _scope_of, task_url

    return redirect(task_url(task.pk, _scope_of(request)) + anchor)


def _task(pk):
    from governance.review.views import _task_or_404

    return _task_or_404(pk)


def _facts_task(pk):
    """The task as the feedback acts read it: ids and review state, never a text column."""
    from django.shortcuts import get_object_or_404

    return get_object_or_404(Task.objects.only("id", "review_decision", "correlation_id", "configuration", "also"),
                             pk=pk)


def _hint_index(request) -> int:
    try:
        return int(request.POST.get("hint", ""))
    except ValueError:
        return -1


@require_POST
@editor_required
def mark(request, pk):
    """Mark one hint right or wrong (SPEC §10.2); changeable until the review is final."""
    task = _facts_task(pk)
    verdict = request.POST.get("verdict", "")
    # The page's script asks for JSON and updates the hint in place (no reload); a plain form gets a redirect.
    wants_json = request.headers.get("Accept", "").startswith("application/json")
    try:
        service.mark(task, request.POST.getlist("finding"), verdict, user=request.user)
    except GavelError as exc:
        if wants_json:
            return JsonResponse({"error": exc.message, "code": exc.code}, status=409 if isinstance(exc, Conflict) else 400)
        messages.error(request, exc.message)
        return _back(task, request)
    try:
        number = int(request.POST.get("number", ""))
    except ValueError:
        number = 0
    said = (_("Hint %(number)d marked right.") % {"number": number} if verdict == service.RIGHT
            else _("Hint %(number)d marked wrong.") % {"number": number})
    if wants_json:
        label = _("Marked right") if verdict == service.RIGHT else _("Marked wrong")
        return JsonResponse({"verdict": verdict, "label": label, "message": said})
    messages.success(request, said)
    return _back(task, request, f"#hint-{number}" if number else "")


@require_POST
@editor_required
def missed(request, pk):
    """Report a rule or term the policy did not find in this text (a false negative)."""
    task = _facts_task(pk)
    try:
        service.report_missed(task, request.POST.get("finding", ""), user=request.user)
    except GavelError as exc:
        messages.error(request, exc.message)
        return _back(task, request, "#feedback")
    messages.success(request, _("Reported as missed."))
    return _back(task, request, "#feedback")


@require_POST
@editor_required
def apply_suggestion(request, pk):
    """Put the term's suggestion into the edit, at every place the hint marks; nothing is stored until the
    editor screens and accepts the edit."""
    from governance.review.views import _detail_context, _scope_of

    task = _task(pk)
    hints = task.hints if isinstance(task.hints, list) else []
    index = _hint_index(request)
    if task.status != Task.Status.READY or not 0 <= index < len(hints) or not isinstance(hints[index], dict):
        messages.error(request, _("This suggestion can no longer be applied."))
        return _back(task, request)
    text, term = request.POST.get("text"), request.POST.get("term", "")
    if text is None or text == task.answer:
        edited, count = replaced(task.answer, hints[index], term)
    else:
        # The editor had changed the text already: apply to that text, at the term's places in it.
        edited, count = _apply_to(text, hints[index], term)
    if not count:
        messages.error(request, _("The term no longer occurs in the text; nothing was replaced."))
        return _back(task, request)
    messages.info(request, _("The suggestion replaced %(count)d place(s) in the edit below. Screen and accept the "
                             "edit to keep it.") % {"count": count})
    form = EditForm(initial={"text": edited})
    return render(request, "review/detail.html", _detail_context(task, _scope_of(request), form))


def _apply_to(text: str, hint: dict, term: str) -> tuple[str, int]:
    """Replace the term's occurrences in an editor's own text (the hint's offsets are of the answer)."""
    from termlists.matcher import matches_outside

    suggestion = suggestions_of(hint).get(term)
    if not suggestion or term not in (hint.get("terms") or ()):
        return text, 0
    spans = matches_outside(term, suggestion, text)
    for start, end in reversed(spans):
        text = text[:start] + suggestion + text[end:]
    return text, len(spans)


@require_POST
@editor_required
def keep(request, pk):
    """Keep the reviewed task as a policy example whose expectation follows the review."""
    from governance.policy.kept import keep_as_example

    task = _task(pk)
    try:
        example = keep_as_example(task, user=request.user)
    except GavelError as exc:
        messages.error(request, exc.message)
        return _back(task, request, "#keep")
    messages.success(request, _("Kept as the policy example “%(name)s”.") % {"name": example.name})
    return _back(task, request, "#keep")
