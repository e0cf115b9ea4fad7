"""Term lists: forbidden and required words scoped to configurations (SPEC §2.5, §5)."""
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from governance.models import Configuration
from termlists.matcher import entry_line, parse_entries, parse_terms, validate_entry
from termlists.messages import TERM_LINE_PROBLEM, term_problem


# The shape the REST API and the policy file accept for a language (BCP 47-ish: de, de-AT, zh-Hant).
LANGUAGE_CODE_RE = r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$"


def validate_language_code(value):
    import re

    if value and not re.match(LANGUAGE_CODE_RE, value):
        raise ValidationError(_("Give a language code such as de or de-DE, not a language name."),
                              code="invalid_language")


class TermList(models.Model):
    class Mode(models.TextChoices):
        BLOCK = "block", _("block")
        REPORT = "report", _("report")

    name = models.CharField(_("name"), max_length=200, unique=True,
                            help_text=_("Unique; hints and the governance log name the list by it."))
    forbidden = models.TextField(
        _("forbidden"), blank=True, default="",
        help_text=_("One term per line. Terms are words, not regular expressions: case is ignored, whole words "
                    "only, a trailing * reaches further (Rabatt* matches Rabatte). Repeats are removed on save. "
                    "A line may carry a suggestion for the editor: Kunde => Kundin oder Kunde."))
    required = models.TextField(
        _("required"), blank=True, default="",
        help_text=_("One term per line; a finished text must contain each. Words, not regular expressions."))
    configurations = models.ManyToManyField(Configuration, related_name="term_lists",
                                            verbose_name=_("configurations"),
                                            help_text=_("The list applies to calls naming one of these."))
    site = models.SlugField(_("site"), max_length=100, blank=True, default="",
                            help_text=_("Optional: only calls stating this site get the required terms."))
    language = models.CharField(
        _("language"), max_length=35, blank=True, default="", validators=[validate_language_code],
        help_text=_("Optional language code such as de or de-DE (not “Deutsch”): only calls stating it get the "
                    "required terms."))
    message = models.TextField(_("message"), blank=True, default="", help_text=_("Appended to the block message."))
    mode = models.CharField(
        _("mode"), max_length=8, choices=Mode.choices, default=Mode.BLOCK,
        help_text=_("block stops a text with a forbidden term; report delivers it with hints and records what "
                    "would have been blocked (a shadow mode for trying a list)."))
    is_active = models.BooleanField(_("active"), default=True,
                                    help_text=_("Inactive lists apply to nothing."))
    updated_at = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the list was last saved."))

    history = HistoricalRecords(m2m_fields=[configurations])

    class Meta:
        ordering = ["name"]
        verbose_name = _("term list")
        verbose_name_plural = _("term lists")

    def __str__(self):
        return self.name

    def clean(self):
        errors = {}
        for field in ("forbidden", "required"):
            problems = []
            for line_no, raw in enumerate(getattr(self, field).splitlines(), start=1):
                if not raw.strip():
                    continue
                problem = validate_entry(raw.strip(), suggestion_allowed=field == "forbidden")
                if problem:
                    problems.append(TERM_LINE_PROBLEM % {"no": line_no, "problem": term_problem(problem)})
            if problems:
                errors[field] = problems
        if errors:
            raise ValidationError(errors)
        # A suggestion rides on its term (`Kunde => Kundin oder Kunde`), written back in one spelling.
        self.forbidden = "\n".join(entry_line(*entry) for entry in parse_entries(self.forbidden))
        self.required = "\n".join(parse_terms(self.required))
