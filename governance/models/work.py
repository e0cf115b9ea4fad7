"""Queued work (SPEC §10, §10.1): tasks and the batches that create them."""
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.models.consumers import Consumer
from governance.screening.masking import masked


class MaskingQuerySet(models.QuerySet):
    """Rows inserted in bulk are masked as a saved row is: no way of creating one skips it (SPEC §9)."""

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        for obj in objs:
            obj.mask_secrets()
        return super().bulk_create(objs, *args, **kwargs)


class Task(models.Model):
    """A queued task or a field fill (SPEC §2.8, §10): the database row is the source of truth.

    A Celery message carries only the id. Contents (messages, answer, edited
    text, passages in hints) are emptied by the purge after
    GAVEL_TASK_RETENTION_DAYS; status, facts and timestamps stay.
    """

    class Kind(models.TextChoices):
        QUEUED_TASK = "queued_task", _("queued task")
        FIELD_FILL = "field_fill", _("field fill")
        TOOL_CALL = "tool_call", _("tool call")  # an MCP call waiting for an editor's approval (SPEC §14)

    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        READY = "ready", _("ready")
        BLOCKED = "blocked", _("blocked")
        FAILED = "failed", _("failed")
        CANCELLED = "cancelled", _("cancelled")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")

    class Review(models.TextChoices):
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")

    # Statuses in which the worker's work is over.
    FINISHED = (Status.READY, Status.BLOCKED, Status.FAILED, Status.CANCELLED, Status.ACCEPTED, Status.REJECTED)

    objects = MaskingQuerySet.as_manager()

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(
        _("kind"), max_length=16, choices=Kind.choices, default=Kind.QUEUED_TASK,
        help_text=_("Queued task: a text the consumer does not wait for. Field fill: a proposed value for one field "
                    "of a record outside Gavel."))
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True,
        help_text=_("Where the task stands: queued, running, ready (delivered, possibly with hints), blocked, failed "
                    "or cancelled; after review accepted or rejected."))
    consumer = models.ForeignKey(Consumer, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
                                 verbose_name=_("consumer"),
                                 help_text=_("The consumer that submitted the task; the API shows a task only to it."))
    # Identifiers, not foreign keys: a task outlives a renamed or deleted configuration,
    # and the worker resolves them when it runs (a missing one fails the task with a reason).
    configuration = models.CharField(
        _("configuration"), max_length=100, db_index=True,
        help_text=_("The identifier of the configuration the text is written through, kept as text: if it is gone "
                    "when the task runs, the task fails with that reason."))
    also = models.JSONField(_("further configurations"), default=list, blank=True,
                            help_text=_("Identifiers of further configurations whose term lists and rules apply "
                                        "too."))
    messages = models.JSONField(_("input messages"), default=list, blank=True,
                                help_text=_("OpenAI-shaped messages; an instruction is stored as one user message."))
    field = models.JSONField(_("field"), null=True, blank=True,
                             help_text=_("Field fills only: record, name, label, max_length."))
    site = models.CharField(_("site"), max_length=100, blank=True, default="",
                            help_text=_("The site the text is for, as the consumer stated it; term lists for this "
                                        "site ask for their required terms."))
    language = models.CharField(_("language"), max_length=35, blank=True, default="",
                                help_text=_("The language code the text is for, as the consumer stated it; term lists "
                                            "for this language ask for their required terms."))
    callback_url = models.URLField(
        _("callback URL"), max_length=1000, blank=True, default="",
        help_text=_("Gavel posts the task as JSON here when it is ready, blocked, failed, accepted or rejected. "
                    "Its host must be on GAVEL_CALLBACK_HOSTS."))
    batch = models.ForeignKey("Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
                              verbose_name=_("batch"), help_text=_("The batch the task was submitted in, if any."))

    attempts = models.PositiveIntegerField(_("attempts"), default=0,
                                           help_text=_("How many times a worker claimed this task."))
    lease_until = models.DateTimeField(
        _("claimed until"), null=True, blank=True,
        help_text=_("A running task whose lease has passed is taken over by another worker."))
    next_attempt_at = models.DateTimeField(
        _("next attempt at"), null=True, blank=True,
        help_text=_("After a provider failure (HTTP 429, 5xx, a timeout): when the task is tried again. Blank "
                    "otherwise."))

    # The screening result (SPEC §11.1): the answer as delivered, and the facts around it.
    outcome = models.CharField(_("outcome"), max_length=20, blank=True, default="",
                               help_text=_("The screening's outcome: allowed, allowed_with_hints or blocked. Blank "
                                           "until a screening finished."))
    answer = models.TextField(_("answer"), blank=True, default="",
                              help_text=_("The text as delivered, secrets masked. Empty when blocked, and after the "
                                          "purge."))
    hints = models.JSONField(_("hints"), default=list, blank=True,
                             help_text=_("The findings the text was delivered with: check, rule or list, passage, "
                                         "message. The purge empties the passages."))
    refusal = models.JSONField(_("refusal"), null=True, blank=True,
                               help_text=_("The block without its passage: what a record may keep."))
    verification = models.JSONField(
        _("verification"), default=dict, blank=True,
        help_text=_("What pattern rules and citations found: verified, unverified or not_applicable, with one "
                    "entry per rule. Verified never means correct."))
    checks = models.JSONField(_("checks"), default=list, blank=True,
                              help_text=_("Each check of the screening with its result, in the order they ran."))
    completion = models.JSONField(_("completion"), null=True, blank=True,
                                  help_text=_("The provider and model that answered, the tokens used and the cost."))
    policy_version = models.PositiveBigIntegerField(_("policy version"), null=True, blank=True,
                                                    help_text=_("The policy version the text was screened under."))
    correlation_id = models.CharField(
        _("correlation id"), max_length=64, blank=True, default="",
        help_text=_("The screening's id: the governance log's events of this run carry it."))
    failure = models.JSONField(_("failure"), null=True, blank=True, help_text=_("Code and message when failed."))

    # Review (SPEC §10): who, when, what, and the edited text when there was one.
    review_decision = models.CharField(_("review"), max_length=16, choices=Review.choices, blank=True, default="",
                                       help_text=_("The editor's decision: accepted or rejected."))
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+", verbose_name=_("reviewed by"),
                                    help_text=_("The editor who accepted or rejected the task."))
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True,
                                       help_text=_("When the task was accepted or rejected."))
    edited_text = models.TextField(_("edited text"), blank=True, default="",
                                   help_text=_("The editor's version, screened again before it was accepted; "
                                               "delivered instead of the answer. Emptied by the purge."))
    edited = models.BooleanField(_("edited"), default=False,
                                 help_text=_("Whether the editor changed the text before accepting it."))

    # Callback delivery (SPEC §10): visible on the task, never blocking a screening.
    callback_attempts = models.PositiveIntegerField(_("callback attempts"), default=0,
                                                    help_text=_("How many times Gavel tried to post the callback."))
    callback_status = models.CharField(
        _("callback status"), max_length=16, blank=True, default="",
        help_text=_("delivered; failing (another try follows); failed (Gavel gave up); refused (the host is no "
                    "longer allowed). Blank until the first try."))
    callback_error = models.CharField(
        _("callback error"), max_length=500, blank=True, default="",
        help_text=_("Why the last try failed: the HTTP status or the connection error. Never the task's text."))
    callback_due_at = models.DateTimeField(
        _("callback due at"), null=True, blank=True,
        help_text=_("When the callback's next try is due, or until when a sender holds it. A callback still "
                    "pending well past this time is sent again by the sweep."))

    purged_at = models.DateTimeField(
        _("purged at"), null=True, blank=True,
        help_text=_("When the purge emptied the input, the answer, the edited text and the passages; status, "
                    "facts and times stay."))
    created = models.DateTimeField(_("created"), default=timezone.now, db_index=True,
                                   help_text=_("When the task was submitted."))
    updated = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the task last changed."))
    finished_at = models.DateTimeField(
        _("finished at"), null=True, blank=True,
        help_text=_("When the worker's part ended: ready, blocked, failed or cancelled."))

    class Meta:
        ordering = ["-created"]
        verbose_name = _("task")
        verbose_name_plural = _("tasks")
        indexes = [models.Index(fields=["consumer", "-created"]), models.Index(fields=["status", "-created"])]

    def __str__(self):
        return f"{self.get_kind_display()} {self.id}"

    def mask_secrets(self) -> None:
        """Mask every secret in what the consumer sent (SPEC §9): the messages (content and tool-call
        arguments alike), the field facts (record, name, label), the callback URL and an edited text.
        Every way a task is created passes here (save, bulk_create), so the model is asked with the
        masked text too: a key it never needs is never sent on."""
        self.messages = masked(self.messages)
        self.field = masked(self.field)
        self.callback_url = masked(self.callback_url)
        self.edited_text = masked(self.edited_text)

    def save(self, *args, **kwargs):
        self.mask_secrets()
        super().save(*args, **kwargs)


class Batch(models.Model):
    """Up to 10,000 tasks submitted at once (SPEC 10.1): their progress, one callback at the end."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("name"), max_length=200, blank=True, default="",
                            help_text=_("What the batch is, as its consumer named it."))
    consumer = models.ForeignKey(Consumer, null=True, blank=True, on_delete=models.SET_NULL, related_name="batches",
                                 verbose_name=_("consumer"), help_text=_("The consumer that submitted the batch."))
    created = models.DateTimeField(_("created"), auto_now_add=True, db_index=True,
                                   help_text=_("When the batch was submitted."))
    total = models.PositiveIntegerField(_("total"), default=0, help_text=_("How many tasks the batch holds."))
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True,
                                       help_text=_("When the last of its tasks finished. Blank while any still runs."))
    callback_url = models.URLField(
        _("callback URL"), max_length=1000, blank=True, default="",
        help_text=_("Gavel posts the batch as JSON here once, when it has finished."))
    callback_status = models.CharField(
        _("callback status"), max_length=16, blank=True, default="",
        help_text=_("What became of the batch's callback: delivered, failing, failed or refused; blank until sent."))
    callback_attempts = models.PositiveIntegerField(_("callback attempts"), default=0,
                                                    help_text=_("How often the callback was sent."))
    callback_error = models.CharField(_("callback error"), max_length=500, blank=True, default="",
                                      help_text=_("Why the last delivery failed, as the consumer may read it."))
    callback_due_at = models.DateTimeField(
        _("callback due at"), null=True, blank=True,
        help_text=_("When the callback's next try is due, or until when a sender holds it. A callback still "
                    "pending well past this time is sent again by the sweep."))

    class Meta:
        verbose_name = _("batch")
        verbose_name_plural = _("batches")
        ordering = ["-created"]

    objects = MaskingQuerySet.as_manager()

    def __str__(self):
        return self.name or str(self.pk)

    def mask_secrets(self) -> None:
        """A batch's name and callback URL are the consumer's words: masked like a task's (SPEC §9)."""
        self.name = masked(self.name)
        self.callback_url = masked(self.callback_url)

    def save(self, *args, **kwargs):
        self.mask_secrets()
        super().save(*args, **kwargs)

