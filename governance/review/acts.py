"""The queue's acts at volume (issue 29): reject with a confirmation and an optional reason, undo a review
for a short while, bulk accept of selected hint-free tasks with a count and a confirmation.

Every act is a POST with CSRF and works without JavaScript: an unconfirmed reject or bulk accept renders
the confirmation; the script only opens the same confirmation in place.
"""
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _, ngettext
from django.views.decorators.http import require_POST

from governance.errors import Conflict
from governance.models import Task
from governance.review.access import editor_required
from governance.review.task_page import check_names, detail_context, scope_of, scope_query, task_or_404, task_url
from governance.review.not_run import not_run
from governance.review.undo_offer import current_offer, offer_bulk_undo, offer_undo, withdraw
from governance.review.views import go_on, previewed, queue_row
from governance.work import editors
from governance.work.undo import undo_review

REASON_MAX = 500
BULK_MAX = 200


def _queue_url(scope: dict) -> str:
    query = scope_query(scope)
    return reverse("review:queue") + (f"?{query}" if query else "")


@require_POST
@editor_required
def reject(request, pk):
    """Reject after a confirmation, with an optional reason (kept in the review event)."""
    task = task_or_404(pk)
    scope = scope_of(request)
    reason = " ".join(request.POST.get("reason", "").split())[:REASON_MAX]
    if request.POST.get("confirmed") != "1":
        return render(request, "review/detail.html", {**detail_context(task, scope), "confirm_reject": True})
    try:
        editors.reject(task, user=request.user, reason=reason)
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect(task_url(task.pk, scope))
    offer_undo(request, task, scope)
    return go_on(request, task, scope, _("Rejected."))


@require_POST
@editor_required
def undo(request, pk):
    """Undo the last review of this task while the offer stands: back to ready (or blocked)."""
    task = task_or_404(pk)
    scope = scope_of(request)
    try:
        undo_review(task, user=request.user)
    except Conflict as exc:
        messages.error(request, exc.message)
        return redirect(task_url(task.pk, scope))
    withdraw(request)
    messages.success(request, _("Task %(id)s: the review was undone; the task is %(status)s again.")
                     % {"id": str(task.pk)[:8], "status": task.get_status_display()})
    return redirect(task_url(task.pk, scope))


def _selected(request) -> list[Task]:
    ids = request.POST.getlist("task")[:BULK_MAX]
    valid = []
    for value in ids:
        try:
            valid.append(Task._meta.pk.to_python(value))
        except Exception:  # noqa: BLE001 - a mangled id is left out, as an unknown one is
            continue
    return list(previewed(Task.objects.filter(pk__in=valid)).order_by("-created", "-pk"))


def hint_free(task: Task) -> bool:
    return task.status == Task.Status.READY and not (isinstance(task.hints, list) and task.hints)


def fully_checked(task: Task) -> bool:
    """Every check that applies to the text ran (issue 43): a text under 30 words skipped its judges and
    pattern rules, so "no hint" says nothing about them, and it is not accepted in bulk."""
    return not not_run(task.checks, task.hints)


@require_POST
@editor_required
def bulk_accept(request):
    """Accept the selected tasks that are ready and have no hint, after a confirmation naming the count."""
    scope = scope_of(request)
    tasks = _selected(request)
    free = [t for t in tasks if hint_free(t)]
    acceptable = [t for t in free if fully_checked(t)]
    if not acceptable:
        messages.error(request, _("Select tasks that are ready, have no hint and were checked in full to accept "
                                  "them together."))
        return redirect(_queue_url(scope))
    if request.POST.get("confirmed") != "1":
        names = check_names()
        return render(request, "review/bulk_confirm.html", {
            "title": _("Accept %(count)d tasks?") % {"count": len(acceptable)}, "count": len(acceptable),
            "left_out": len(tasks) - len(free), "unchecked": len(free) - len(acceptable), "rows": [queue_row(t, names) for t in acceptable],
            "scope": {k: v for k, v in scope.items() if v}, "queue_url": _queue_url(scope),
        })
    done, stopped = [], 0
    for task in acceptable:
        try:
            editors.accept(task, user=request.user)
            done.append(task)
        except editors.LiveBlocked:
            stopped += 1  # screened again under the live policy, which stops it: said below
        except Conflict:
            continue  # another editor was faster, or the task moved on: counted below
    accepted = len(done)
    if done:
        offer_bulk_undo(request, done, scope)
    message = ngettext("%(count)d task accepted.", "%(count)d tasks accepted.", accepted) % {"count": accepted}
    if stopped:
        message += " " + ngettext("%(count)d was not accepted: the live policy stops it (screened again).",
                                  "%(count)d were not accepted: the live policy stops them (screened again).",
                                  stopped) % {"count": stopped}
    if accepted + stopped < len(acceptable):
        message += " " + ngettext("%(count)d was no longer ready and was left as it is.",
                                  "%(count)d were no longer ready and were left as they are.",
                                  len(acceptable) - accepted - stopped) % {"count": len(acceptable) - accepted - stopped}
    messages.success(request, message)
    return redirect(_queue_url(scope))


@require_POST
@editor_required
def bulk_undo(request):
    """Undo every accept of the last bulk accept while its offer stands (as a single accept's Undo)."""
    offer = current_offer(request)
    scope = scope_of(request)
    if offer is None or not offer.get("tasks"):
        messages.error(request, _("This bulk accept can no longer be undone."))
        return redirect(_queue_url(scope))
    undone = 0
    for task in Task.objects.filter(pk__in=offer["tasks"]):
        try:
            undo_review(task, user=request.user)
            undone += 1
        except Conflict:
            continue
    withdraw(request)
    message = ngettext("%(count)d accept was undone; the task is ready again.",
                       "%(count)d accepts were undone; the tasks are ready again.", undone) % {"count": undone}
    messages.success(request, message)
    return redirect(_queue_url(scope))


@require_POST
@editor_required
def rescreen(request, pk):
    """Screen a ready task's text again under the live policy (the *screened under vN — live is vM* badge)."""
    task = task_or_404(pk)
    scope = scope_of(request)
    if task.status != Task.Status.READY or not task.answer:
        messages.error(request, _("Only a ready task with its text can be screened again."))
        return redirect(task_url(task.pk, scope))
    old = task.policy_version
    body = editors.rescreen(task, user=request.user, reader_language=translation.get_language())
    if body["outcome"] == "blocked":
        messages.error(request, _("Screened again under policy version %(new)s: the live policy stops this text: "
                                  "%(message)s It cannot be accepted; reject it or edit it.") % {
            "new": body["policy_version"], "message": (body.get("block") or {}).get("message", "")})
    else:
        count = len(body["hints"] or [])
        messages.success(request, ngettext(
            "Screened again under policy version %(new)s (was %(old)s): %(count)d hint.",
            "Screened again under policy version %(new)s (was %(old)s): %(count)d hints.", count) % {
            "new": body["policy_version"], "old": old, "count": count})
    return redirect(task_url(task.pk, scope))
