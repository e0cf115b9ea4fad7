"""Snippets: named blocks of prose whose lines become rules (SPEC §2.4, §6.1), and pattern rules, the
rules a machine checks (SPEC §2.6, §6.5)."""
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from governance.models import normalise_tags, validate_tag_list
from judging.zones import DATA_CLASSES
from snippets.patterns import IDENTIFIER_RE, RuleSpec
from snippets.validation import rule_errors

# Data classes as words (SPEC §7), least sensitive first; the stored value stays the code.
DATA_CLASS_LABELS = {
    "public_content": _("public content"),
    "editor_content": _("editor content"),
    "source_code": _("source code"),
    "internal_configuration": _("internal configuration"),
    "system_diagnostics": _("system diagnostics"),
    "secret_adjacent": _("secret-adjacent"),
}
DATA_CLASS_CHOICES = [(name, DATA_CLASS_LABELS[name]) for name in DATA_CLASSES]


def validate_rule_identifier(value):
    if not isinstance(value, str) or not IDENTIFIER_RE.match(value):
        raise ValidationError(
            _("Use letters, digits, '.', '_' and '-', starting and ending with a letter or digit."),
            code="invalid_identifier",
        )


def validate_sample_list(value):
    """Samples are a list of one-line strings: the admin edits them one per line."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(_("Enter a list of samples."))


class Snippet(models.Model):
    identifier = models.SlugField(_("identifier"), max_length=100, unique=True,
                                  help_text=_("Stable name; a rule keeps it as its source."))
    name = models.CharField(_("name"), max_length=200, help_text=_("What a hint shows as the rule's source."))
    body = models.TextField(_("body"), blank=True, default="",
                            help_text=_("Each non-empty line is one rule, numbered across the rule set."))
    tags = models.JSONField(_("tags"), default=list, blank=True, validators=[validate_tag_list],
                            help_text=_("Configurations pick snippets by tag: context tags add them to the prompt, "
                                        "rule tags make them rules."))
    is_active = models.BooleanField(_("active"), default=True,
                                    help_text=_("Inactive: used nowhere, neither in prompts nor as rules."))
    hidden = models.BooleanField(_("hidden"), default=False,
                                 help_text=_("Hidden: still added to prompts by context tags, but never a rule the "
                                             "judges check."))
    sort = models.IntegerField(_("sort"), default=0, help_text=_("Lower first; then by identifier."))
    data_class = models.CharField(
        _("data class"), max_length=32, blank=True, default="", choices=DATA_CLASS_CHOICES,
        help_text=_("How sensitive the rules are: a judge whose trust zone does not admit this class never reads "
                    "them. Blank means undeclared: no constraint on which judge may read it."),
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["sort", "identifier"]
        verbose_name = _("snippet")
        verbose_name_plural = _("snippets")

    def __str__(self):
        return self.name or self.identifier

    def clean(self):
        self.tags = normalise_tags(self.tags)

    def save(self, *args, **kwargs):
        self.tags = normalise_tags(self.tags)
        super().save(*args, **kwargs)

    def has_any_tag(self, tags) -> bool:
        """Whole-tag match: `style` never matches `lifestyle`."""
        return bool(set(self.tags) & set(normalise_tags(tags)))

    def numbered_lines(self) -> list[tuple[int, str]]:
        """Each non-empty line, trimmed, with its line number within the snippet."""
        return [(no, line.strip()) for no, line in enumerate(self.body.splitlines(), start=1) if line.strip()]


class PatternRule(models.Model):
    """A rule a machine can check (SPEC §2.6): its pattern is a tested artifact, refused at save when
    it contradicts its own samples."""

    class Severity(models.TextChoices):
        CRITICAL = "critical", _("critical")
        NORMAL = "normal", _("normal")

    identifier = models.CharField(
        _("identifier"), max_length=150, unique=True, validators=[validate_rule_identifier],
        help_text=_("Stable; a text cites the rule by it in brackets, e.g. [rule:odoo.onchange-is-not-validation]. "
                    "Letters, digits, '.', '_' and '-'."),
    )
    statement = models.CharField(_("statement"), max_length=500,
                                 help_text=_("The rule in one line: what a hint quotes."))
    tags = models.JSONField(
        _("tags"), default=list, blank=True, validators=[validate_tag_list],
        help_text=_("Separate tags with commas. Configurations pick pattern rules by tag: rule tags have them "
                    "checked by machine, context tags add them to the prompt."))
    severity = models.CharField(
        _("severity"), max_length=8, choices=Severity.choices, default=Severity.NORMAL,
        help_text=_("Shown in hints and in the governance log. It does not change what a violation does: the "
                    "configuration's rule mode decides that."))
    violation_pattern = models.TextField(
        _("violation pattern"), blank=True, default="",
        help_text=_("A regular expression (Python re syntax); a match is a violation."),
    )
    satisfied_pattern = models.TextField(
        _("satisfied pattern"), blank=True, default="",
        help_text=_("Optional; a match anywhere in the same text clears the violation."),
    )
    wrong_samples = models.JSONField(
        _("wrong samples"), default=list, blank=True, validators=[validate_sample_list],
        help_text=_("One sample per line, each a text that breaks the rule: the violation pattern must match every "
                    "one. At least one when there is a violation pattern."))
    correct_samples = models.JSONField(
        _("correct samples"), default=list, blank=True, validators=[validate_sample_list],
        help_text=_("One sample per line, each a text that keeps the rule: the rule must flag none. At least one "
                    "when there is a violation pattern."))
    source = models.CharField(_("source"), max_length=500, blank=True, default="",
                              help_text=_("Where the rule comes from, e.g. a documentation URL."))
    no_verdict_reason = models.TextField(
        _("no verdict reason"), blank=True, default="",
        help_text=_("Required without a violation pattern: why no machine check exists."),
    )
    is_active = models.BooleanField(_("active"), default=True,
                                    help_text=_("Only active rules are checked, offered in prompts and known to "
                                                "citations."))
    updated_at = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the rule was last saved."))

    history = HistoricalRecords()

    class Meta:
        ordering = ["identifier"]
        verbose_name = _("pattern rule")
        verbose_name_plural = _("pattern rules")

    def __str__(self):
        return self.identifier

    def save(self, *args, **kwargs):
        self.tags = normalise_tags(self.tags)
        super().save(*args, **kwargs)

    def as_spec(self):
        """The rule as plain data, for snippets.patterns."""
        return RuleSpec(
            identifier=self.identifier, statement=self.statement, violation_pattern=self.violation_pattern,
            satisfied_pattern=self.satisfied_pattern, wrong_samples=_strings(self.wrong_samples),
            correct_samples=_strings(self.correct_samples), no_verdict_reason=self.no_verdict_reason,
            tags=_strings(self.tags), severity=self.severity,
        )

    def clean(self):
        self.tags = normalise_tags(self.tags)
        errors = rule_errors(self)
        if errors:
            raise ValidationError(errors)


def _strings(value) -> tuple[str, ...]:
    """A JSON list's strings (a malformed value, already refused by its field validator, gives none)."""
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()
