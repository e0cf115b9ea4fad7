"""The task page's teaching acts (SPEC §10.2): right / wrong on a hint, a missed rule or term, apply a
term's suggestion to the edit, keep a reviewed task as a policy example.

Thin: parse the POST, call one service (`governance.review.teaching`, `governance.review.kept`), redirect back
to the task (or render it with the edit filled in). Every act is a POST with CSRF.
"""
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from governance.errors import Conflict, GavelError
from governance.models import Task
from governance.review import teaching as service
from governance.review.access import editor_required
from governance.review.forms import EditForm
from governance.review.kept import keep_as_example
from governance.review.passages import apply_suggestion as replaced, suggestions_of
from governance.review.task_page import detail_context, scope_of, task_or_404, task_url
from termlists.matcher import matches_outside


def _back(task: Task, request, anchor: str = ""):
    return redirect(task_url(task.pk, scope_of(request)) + anchor)


def _facts_task(pk):
    """The task as the feedback acts read it: ids and review state, never a text column."""
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
    task = task_or_404(pk)
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
    return render(request, "review/detail.html", detail_context(task, scope_of(request), form))


def _apply_to(text: str, hint: dict, term: str) -> tuple[str, int]:
    """Replace the term's occurrences in an editor's own text (the hint's offsets are of the answer)."""
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
    task = task_or_404(pk)
    try:
        kept = keep_as_example(task, user=request.user)
    except GavelError as exc:
        messages.error(request, exc.message)
        return _back(task, request, "#keep")
    if kept.draft is not None:
        messages.success(request, _("Four eyes: the example “%(name)s” is in your policy draft “%(draft)s”; it "
                                    "counts once another approver publishes the draft.")
                         % {"name": kept.example.name, "draft": str(kept.draft)})
    else:
        messages.success(request, _("Kept as the policy example “%(name)s”.") % {"name": kept.example.name})
    return _back(task, request, "#keep")
