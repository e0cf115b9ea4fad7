"""Snippets: named blocks of prose whose lines become rules (SPEC §2.4, §6.1)."""
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from governance.models import normalise_tags, validate_tag_list
from judging.zones import DATA_CLASSES


class Snippet(models.Model):
    identifier = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    body = models.TextField(blank=True, default="")
    tags = models.JSONField(default=list, blank=True, validators=[validate_tag_list])
    is_active = models.BooleanField(default=True)
    hidden = models.BooleanField(default=False)
    sort = models.IntegerField(default=0)
    data_class = models.CharField(
        max_length=32, blank=True, default="", choices=[(c, c) for c in DATA_CLASSES],
        help_text=_("Blank means undeclared: no constraint on which judge may read it."),
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["sort", "identifier"]

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
