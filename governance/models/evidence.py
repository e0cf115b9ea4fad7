"""Evidence of editorial control (SPEC §13.1): one row per delivered text, facts and a keyed hash, never the text."""
import uuid

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.models.work import Task


class EvidenceRecord(models.Model):
    """What a publisher shows later: which policy version and checks passed a text, and who reviewed it.

    Append-only and outside every purge: it holds no text, only `text_hash`, an HMAC of the normalised
    delivered text (governance.evidence.hashing). Identifiers, not foreign keys, for what it names, so
    it outlives renamed or deleted records; the task link is cleared, not cascaded, if a task goes.
    """

    class Surface(models.TextChoices):
        API = "api", _("REST API completion")
        OPENAI_CHAT = "openai_chat", _("OpenAI Chat Completions")
        OPENAI_RESPONSES = "openai_responses", _("OpenAI Responses")
        ANTHROPIC = "anthropic", _("Anthropic Messages")
        TASK = "task", _("task")
        SCREENING = "screening", _("screening")
        MCP = "mcp", _("MCP tool call")

    class Review(models.TextChoices):
        ACCEPTED = "accepted", _("accepted")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    at = models.DateTimeField(_("time"), default=timezone.now, db_index=True,
                              help_text=_("When the text was delivered or accepted."))
    surface = models.CharField(
        _("surface"), max_length=20, choices=Surface.choices, db_index=True,
        help_text=_("Where the text left Gavel: a completion on one of the protocols, a screening, or a task."))
    configuration = models.CharField(
        _("configuration"), max_length=100, blank=True, default="", db_index=True,
        help_text=_("The identifier of the configuration the text went through, kept as text."))
    also = models.JSONField(_("further configurations"), default=list, blank=True,
                            help_text=_("Identifiers of further configurations whose policy applied too."))
    policy_version = models.PositiveIntegerField(
        _("policy version"), null=True, blank=True,
        help_text=_("The policy version the text was checked under."))
    outcome = models.CharField(
        _("outcome"), max_length=20, blank=True, default="",
        help_text=_("allowed or allowed_with_hints: a blocked text is not delivered and has no evidence."))
    checks = models.JSONField(
        _("checks"), default=list, blank=True,
        help_text=_("Every check with its result, and for a check that did not run the reason why "
                    "(for example not_finished_text or mode_off)."))
    verification = models.CharField(
        _("verification"), max_length=20, blank=True, default="",
        help_text=_("verified, unverified or not_applicable: the pattern-rule and citation verification."))
    correlation_id = models.CharField(
        _("correlation id"), max_length=64, blank=True, default="", db_index=True,
        help_text=_("The screening's id, as its response and its governance events carry it."))
    actor = models.CharField(_("actor"), max_length=150, blank=True, default="",
                             help_text=_("The consumer or person the text was delivered to."))
    task = models.ForeignKey(Task, null=True, blank=True, on_delete=models.SET_NULL, related_name="evidence",
                             verbose_name=_("task"),
                             help_text=_("The task the text belongs to, for tasks."))
    review_decision = models.CharField(
        _("review decision"), max_length=16, choices=Review.choices, blank=True, default="",
        help_text=_("The editor's decision, when a person reviewed the text."))
    reviewed_by = models.CharField(_("reviewed by"), max_length=150, blank=True, default="",
                                   help_text=_("The editor's user name, kept as text: the record outlives the user."))
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True,
                                       help_text=_("When the editor decided."))
    edited = models.BooleanField(_("edited"), null=True, blank=True,
                                 help_text=_("Whether the editor changed the text before accepting it."))
    text_hash = models.CharField(
        _("text hash"), max_length=64, db_index=True,
        help_text=_("HMAC-SHA256 of the normalised delivered text under the installation's evidence key; "
                    "the text itself is never kept."))
    key_id = models.CharField(
        _("key id"), max_length=16, blank=True, default="",
        help_text=_("A fingerprint of the evidence key that made the hash, so a changed key is noticed."))

    class Meta:
        verbose_name = _("evidence record")
        verbose_name_plural = _("evidence records")
        ordering = ("-at",)
        indexes = [models.Index(fields=["at", "id"], name="evidence_at_id")]

    def __str__(self):
        return f"{self.get_surface_display()} {self.configuration} {self.at:%Y-%m-%d %H:%M}"
