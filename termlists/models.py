"""Term lists: forbidden and required words scoped to configurations (SPEC §2.5, §5)."""
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from governance.models import Configuration


class TermList(models.Model):
    class Mode(models.TextChoices):
        BLOCK = "block", _("block")
        REPORT = "report", _("report")

    name = models.CharField(max_length=200, unique=True)
    forbidden = models.TextField(blank=True, default="", help_text=_("One term per line."))
    required = models.TextField(blank=True, default="", help_text=_("One term per line."))
    configurations = models.ManyToManyField(Configuration, related_name="term_lists")
    site = models.SlugField(max_length=100, blank=True, default="")
    language = models.CharField(max_length=35, blank=True, default="")
    message = models.TextField(blank=True, default="", help_text=_("Appended to the block message."))
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.BLOCK)
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(m2m_fields=[configurations])

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        from termlists.matcher import parse_terms, validate_term
        from termlists.messages import TERM_LINE_PROBLEM, term_problem

        errors = {}
        for field in ("forbidden", "required"):
            problems = []
            for line_no, raw in enumerate(getattr(self, field).splitlines(), start=1):
                if not raw.strip():
                    continue
                problem = validate_term(raw.strip())
                if problem:
                    problems.append(TERM_LINE_PROBLEM % {"no": line_no, "problem": term_problem(problem)})
            if problems:
                errors[field] = problems
        if errors:
            raise ValidationError(errors)
        self.forbidden = "\n".join(parse_terms(self.forbidden))
        self.required = "\n".join(parse_terms(self.required))
