"""Celery entry points of the core: thin — they take an id and call one service.

Settings that make a task survive a dying worker (acks_late, reject_on_worker_lost,
the visibility timeout) are in governance/settings.py; why they are set so is in
docs/tasks.md.
"""
import logging

from django.conf import settings

from governance.celery import app
from governance.models import Task
from governance.policy import proposals
from governance.screening.service import purge_governance
from governance.work import batches, deliveries, queue

logger = logging.getLogger("gavel.tasks")


@app.task(name="governance.purge_governance", acks_late=True)
def purge_governance_task(days: int = 30) -> int:
    """Purge governance events older than `days` days (schedule it with celery beat)."""
    deleted, _ = purge_governance(days)
    return deleted


def visibility_timeout() -> float:
    return float(settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("visibility_timeout", 3600))


@app.task(name="governance.run_task", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_task(task_id: str) -> str:
    """Claim, generate, screen and store one queued task or field fill."""
    outcome, claimed = queue.run_claimed(task_id)
    if outcome.startswith("busy:"):
        # Another worker holds a live claim (this is a duplicate or a redelivery):
        # look again when its lease ends, so a task whose worker died is taken over.
        # The wait stays under half the visibility timeout: a message held past it would be
        # delivered a second time, and each copy would keep another copy alive.
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            wait = min(float(outcome.split(":", 1)[1]), visibility_timeout() / 2)
            queue.enqueue(task_id, countdown=wait)
    elif outcome.startswith("retry:"):
        task = Task.objects.get(pk=task_id)
        delay = min(queue.retry_delay(task.attempts), visibility_timeout() / 2)
        if queue.release_for_retry(task, delay):
            logger.info("task %s attempt %s: provider failed (%s), next attempt in %.0f s",
                        task_id, task.attempts, outcome[6:], delay)
            queue.enqueue(task_id, countdown=delay)
    elif outcome.startswith("limited:"):
        # The provider is at one of its limits (SPEC 10.1): the row is queued again, the message
        # sent again with a countdown — never a lost task, never a burst of 429s at the provider.
        task = Task.objects.get(pk=task_id)
        delay = min(queue.limit_countdown(float(outcome.split(":", 1)[1])), visibility_timeout() / 2)
        if queue.release_for_limit(task, delay) and not settings.CELERY_TASK_ALWAYS_EAGER:
            # (Eager runs have already waited the call's timeout in the request; the row stays
            # queued for the sweep rather than run again inside the same request.)
            queue.enqueue(task_id, countdown=delay)
    elif outcome in ("done", "failed"):
        # The callback (if any) and the batch the task belongs to (if any): the row as this run wrote it
        # (callback_url and batch never change); when its write did not land, as it is now (one read).
        if claimed is not None and getattr(claimed, "finished_by_this_run", False):
            finished = claimed
        else:
            finished = Task.objects.filter(pk=task_id).only("callback_url", "status", "batch_id").first()
        queue.notify(task_id, task=finished)
        batch_id = finished.batch_id if finished else None
        if batch_id:
            batches.check_finished(batch_id)  # the batch's one callback, once its last task finished
    return outcome


@app.task(name="governance.publish_batch", acks_late=True, ignore_result=True)
def publish_batch(batch_id: str) -> int:
    """Send the messages of a batch's queued tasks (one message asked for all of them)."""
    return batches.fan_out(batch_id)


@app.task(name="governance.deliver_batch_callback", bind=True, acks_late=True, ignore_result=True,
          max_retries=None)
def deliver_batch_callback(self, batch_id: str) -> bool:
    """POST the finished batch's JSON to its callback URL, retried with backoff like a task's."""
    if batches.post_callback(batch_id):
        return True
    if self.request.retries + 1 >= settings.GAVEL_CALLBACK_MAX_ATTEMPTS:
        batches.give_up_callback(batch_id)
        return False
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return deliver_batch_callback.apply(args=[batch_id], retries=self.request.retries + 1).get()
    countdown = settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS * (2 ** self.request.retries)
    deliveries.due_again("batch", batch_id, countdown)
    raise self.retry(countdown=countdown)


@app.task(name="governance.deliver_callback", bind=True, acks_late=True, ignore_result=True,
          max_retries=None)
def deliver_callback(self, task_id: str, status: str) -> bool:
    """POST the task JSON to its callback URL, retried with backoff; failures stay visible on the task."""
    if queue.post_callback(task_id, status):
        return True
    if self.request.retries + 1 >= settings.GAVEL_CALLBACK_MAX_ATTEMPTS:
        queue.give_up_callback(task_id)
        return False
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Eager (the embedded default) cannot wait between attempts without blocking the request.
        return deliver_callback.apply(args=[task_id, status], retries=self.request.retries + 1).get()
    countdown = settings.GAVEL_CALLBACK_RETRY_BASE_SECONDS * (2 ** self.request.retries)
    deliveries.due_again("task", task_id, countdown)
    raise self.retry(countdown=countdown)


@app.task(name="governance.sweep_tasks", ignore_result=True)
def sweep_tasks() -> int:
    """Send again the tasks whose message may be lost (celery beat runs it every minute)."""
    return queue.sweep()


@app.task(name="governance.sweep_callbacks", ignore_result=True)
def sweep_callbacks() -> int:
    """Send again the callbacks whose message may be lost (governance/work/deliveries.py): celery beat runs
    it; in the embedded default (no broker) the requests do (governance/work/embedded_sweep.py), and the
    callbacks go to their hosts' lanes in this process."""
    embedded = settings.CELERY_TASK_ALWAYS_EAGER
    for batch_id in deliveries.unfinished_batches():
        batches.check_finished(batch_id)
    lost = deliveries.lost_task_callbacks()
    for task_id, status in lost:
        if embedded:
            queue.deliver_on_lane(task_id, status)
        else:
            deliver_callback.apply_async(args=[task_id, status], queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    lost_batches = deliveries.lost_batch_callbacks()
    for batch_id in lost_batches:
        if embedded:
            batches.deliver_on_lane(batch_id)
        else:
            deliver_batch_callback.apply_async(args=[batch_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE)
    if lost or lost_batches:
        logger.info("callback sweep sent %d task and %d batch callback(s) again", len(lost), len(lost_batches))
    return len(lost) + len(lost_batches)


@app.task(name="governance.publish_due_drafts", ignore_result=True)
def publish_due_drafts() -> int:
    """Publish the policy drafts whose `publish_at` has come, through the gate (celery beat, every sweep)."""
    results = proposals.publish_due()
    for result in results:
        logger.info("scheduled policy draft %s: %s", result["draft"],
                    f"published as version {result['published']}" if "published" in result
                    else f"refused ({result['refused']})")
    return len(results)


@app.task(name="governance.purge_task_contents", ignore_result=True)
def purge_task_contents(days: int | None = None) -> int:
    return queue.purge_contents(days or settings.GAVEL_TASK_RETENTION_DAYS)
