"""Drafts (SPEC §12.5): a proposed change to the live policy, in policy-file terms, with its comments.

A draft holds its changes record by record (section and name, the record as the policy file writes it,
and the live record it was made against), so it can be applied to whatever the live policy is when it
is published; governance.policy.proposals does the work.
"""
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class PolicyDraft(models.Model):
    """A proposed policy change: opened by an author, submitted, published by an approver or withdrawn."""

    class Status(models.TextChoices):
        OPEN = "open", _("open")
        SUBMITTED = "submitted", _("submitted")
        PUBLISHED = "published", _("published")
        WITHDRAWN = "withdrawn", _("withdrawn")

    title = models.CharField(_("title"), max_length=200, blank=True, default="",
                             help_text=_("What the change is for, in a few words."))
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="policy_drafts", verbose_name=_("author"),
                               help_text=_("The person who opened the draft (empty for a consumer or a command)."))
    author_label = models.CharField(_("author"), max_length=200, blank=True, default="",
                                    help_text=_("Who opened the draft, as the governance log names actors: "
                                                "user:anna, consumer:ci or command:import_policy."))
    base_version = models.PositiveBigIntegerField(_("base version"), default=0,
                                                  help_text=_("The live policy version when the draft began."))
    status = models.CharField(_("status"), max_length=12, choices=Status.choices, default=Status.OPEN,
                              db_index=True, help_text=_("open, submitted, published or withdrawn."))
    changes = models.JSONField(_("changes"), default=list, blank=True,
                               help_text=_("The records added, changed or removed, in policy-file terms."))
    publish_at = models.DateTimeField(_("publish at"), null=True, blank=True,
                                      help_text=_("When the worker publishes the draft, through the release gate."))
    scheduled_by = models.CharField(_("scheduled by"), max_length=200, blank=True, default="",
                                    help_text=_("The approver who set the publishing time."))
    # An approval is of the draft as the approver read it (SPEC §12.5, issue 41): its content hash when it
    # was submitted or scheduled; any later change clears it, the submission and the schedule.
    approved_revision = models.CharField(_("approved revision"), max_length=64, blank=True, default="",
                                         help_text=_("The content hash of the draft when it was submitted or "
                                                     "scheduled; publishing at the set time needs the same."))
    approval_withdrawn = models.CharField(_("approval withdrawn"), max_length=500, blank=True, default="",
                                          help_text=_("Why the last submission or schedule was withdrawn: the "
                                                      "draft changed after it was approved."))
    published_version = models.PositiveBigIntegerField(_("published version"), null=True, blank=True,
                                                       help_text=_("The policy version the draft became."))
    approver_label = models.CharField(_("approver"), max_length=200, blank=True, default="",
                                      help_text=_("Who published the draft."))
    regressions_accepted = models.PositiveIntegerField(
        _("regressions accepted"), default=0,
        help_text=_("Passing examples the approver accepted would fail when publishing."))
    replay_judges = models.BooleanField(
        _("replay with judges"), default=True,
        help_text=_("Whether the draft's report runs the judges again on the stored texts, within the cost cap."))
    schedule_failure = models.CharField(
        _("schedule failure"), max_length=1000, blank=True, default="",
        help_text=_("Why the draft was not published at its set time; cleared when it is scheduled again."))
    schedule_failed_at = models.DateTimeField(_("schedule failed at"), null=True, blank=True,
                                              help_text=_("When publishing at the set time was refused."))
    created_at = models.DateTimeField(_("created"), default=timezone.now, help_text=_("When the draft was opened."))
    updated_at = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the draft last changed."))

    class Meta:
        ordering = ["-updated_at", "-id"]
        verbose_name = _("policy draft")
        verbose_name_plural = _("policy drafts")
        permissions = [("publish_policy", _("Can publish policy"))]

    def __str__(self):
        return self.title or str(_("Draft %(id)s") % {"id": self.pk})


class PolicyDraftComment(models.Model):
    """A note on a draft: the approver's reason for sending it back, or any editor's remark."""

    draft = models.ForeignKey(PolicyDraft, on_delete=models.CASCADE, related_name="comments",
                              verbose_name=_("draft"), help_text=_("The draft the comment is about."))
    author_label = models.CharField(_("author"), max_length=200, blank=True, default="",
                                    help_text=_("Who wrote the comment: user:anna or consumer:ci."))
    text = models.TextField(_("comment"), help_text=_("The note, e.g. why the draft was sent back."))
    created_at = models.DateTimeField(_("created"), default=timezone.now, help_text=_("When it was written."))

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("draft comment")
        verbose_name_plural = _("draft comments")

    def __str__(self):
        return f"{self.author_label} {self.created_at:%Y-%m-%d %H:%M}"
