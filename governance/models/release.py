"""Releases (SPEC §12): policy examples and the kept policy revisions."""
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.screening.masking import masked


class PolicyExample(models.Model):
    """A text with the outcome the team expects under the policy (SPEC §12.1): what a policy test screens.

    Examples change what is tested, never what is enforced, so policy editors write them. A kept
    example is an explicit choice to keep its text: the task purge does not touch it.
    """

    class Outcome(models.TextChoices):
        ALLOWED = "allowed", _("allowed")
        ALLOWED_WITH_HINTS = "allowed_with_hints", _("allowed with hints")
        BLOCKED = "blocked", _("blocked")

    class Format(models.TextChoices):
        TEXT = "text", _("text")
        JSON = "json", _("JSON, judged by its strings")

    name = models.CharField(_("name"), max_length=200, unique=True,
                            help_text=_("How the policy file and test reports name this example."))
    # An identifier, not a foreign key: an example outlives a renamed or removed configuration, and a
    # test run then reports it as an error instead of the configuration being impossible to remove.
    configuration = models.CharField(_("configuration"), max_length=100,
                                     help_text=_("The identifier of the configuration the text is screened for."))
    also = models.JSONField(_("further configurations"), default=list, blank=True,
                            help_text=_("Identifiers of further configurations whose term lists and rules apply too."))
    kind = models.CharField(_("kind"), max_length=20, default="completion",
                            help_text=_("What the text is: completion, queued_task, field_fill, image_description "
                                        "or internal."))
    site = models.CharField(_("site"), max_length=100, blank=True, default="",
                            help_text=_("The site the text is for; term lists for this site ask for their required "
                                        "terms."))
    language = models.CharField(_("language"), max_length=35, blank=True, default="",
                                help_text=_("The language code the text is for."))
    format = models.CharField(_("format"), max_length=8, choices=Format.choices, default=Format.TEXT,
                              help_text=_("text, or json (judged by its strings)."))
    text = models.TextField(_("text"), blank=True, default="", help_text=_("The text as a model would write it."))
    tool_calls = models.JSONField(_("tool calls"), default=list, blank=True,
                                  help_text=_("Proposed tool calls instead of, or besides, the text: name and "
                                              "arguments."))
    expect_outcome = models.CharField(_("expected outcome"), max_length=20, choices=Outcome.choices,
                                      help_text=_("allowed, allowed with hints or blocked."))
    expect_findings = models.JSONField(
        _("expected findings"), default=list, blank=True,
        help_text=_("Findings that must be present, e.g. {\"check\": \"term_list\", \"list\": \"Brand words\", "
                    "\"term\": \"Rabatt*\"}."))
    expect_absent = models.JSONField(_("findings that must be absent"), default=list, blank=True,
                                     help_text=_("Findings that must not be present (a false positive fixed)."))
    note = models.TextField(_("note"), blank=True, default="", help_text=_("Why the team expects this outcome."))
    # Kept from review (SPEC §10.2): who kept it, when, from which task (the task may be purged since).
    kept_by = models.CharField(_("kept by"), max_length=150, blank=True, default="",
                               help_text=_("The user name of the editor who kept this example from a reviewed task."))
    kept_at = models.DateTimeField(_("kept at"), null=True, blank=True,
                                   help_text=_("When it was kept from review."))
    from_task = models.UUIDField(_("from task"), null=True, blank=True,
                                 help_text=_("The reviewed task it was kept from."))
    created = models.DateTimeField(_("created"), default=timezone.now, help_text=_("When the example was written."))
    updated = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the example last changed."))

    class Meta:
        ordering = ["name"]
        verbose_name = _("policy example")
        verbose_name_plural = _("policy examples")

    def __str__(self):
        return self.name

    def mask_secrets(self) -> None:
        """An example is kept text: masked as every stored text is (SPEC §9), on every way it is written."""
        self.text = masked(self.text)
        self.note = masked(self.note)
        self.tool_calls = masked(self.tool_calls)

    def save(self, *args, **kwargs):
        self.mask_secrets()
        super().save(*args, **kwargs)


class PolicyRevision(models.Model):
    """One numbered version of the policy (SPEC §12.4): who, when, what changed, and the whole document.

    `number` is the value `PolicyVersion` held after the change, the policy_version screenings report.
    The document is the policy file (YAML) compressed with zlib; examples are part of it.
    """

    number = models.PositiveBigIntegerField(_("version"), unique=True,
                                            help_text=_("The policy version screenings report after this change."))
    at = models.DateTimeField(_("time"), default=timezone.now, help_text=_("When the change was committed."))
    actor = models.CharField(_("actor"), max_length=150, blank=True, default="",
                             help_text=_("Who made the change: a user name, a consumer, or the command line."))
    source = models.CharField(_("source"), max_length=20, blank=True, default="",
                              help_text=_("admin, import, api or restore."))
    summary = models.JSONField(_("summary"), default=dict, blank=True,
                               help_text=_("The records created, changed and removed."))
    # A release from a draft (SPEC §12.5): who proposed it, who published it, what the approver accepted.
    author = models.CharField(_("author"), max_length=200, blank=True, default="",
                              help_text=_("Who wrote the draft this version was published from."))
    approver = models.CharField(_("approver"), max_length=200, blank=True, default="",
                                help_text=_("Who published the draft this version came from."))
    regressions_accepted = models.PositiveIntegerField(
        _("regressions accepted"), default=0,
        help_text=_("Passing examples that fail under this version, accepted when it was released."))
    document = models.BinaryField(_("document"), help_text=_("The policy file of this version, compressed."))

    class Meta:
        ordering = ["-number"]
        verbose_name = _("policy revision")
        verbose_name_plural = _("policy revisions")

    def __str__(self):
        return str(self.number)

    def document_yaml(self) -> str:
        import zlib

        return zlib.decompress(bytes(self.document)).decode("utf-8")

