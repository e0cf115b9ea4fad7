"""Snippet admin: tags edited as text, and the body's lines shown numbered, as rules will cite them.
Pattern-rule admin: samples edited one per line, each validated at save."""
from django import forms
from django.contrib import admin
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from governance.records import bulk
from governance.admin import TagListField
from governance.admin.drafting import DraftedAdminMixin
from judging.admin_warnings import rule_numbering_for_snippet
from snippets.models import PatternRule, Snippet


class SnippetAdminForm(forms.ModelForm):
    class Meta:
        model = Snippet
        fields = "__all__"
        field_classes = {"tags": TagListField}
        widgets = {"body": forms.Textarea(attrs={"rows": 14, "class": "vLargeTextField gavel-body"})}


class TagFilter(admin.SimpleListFilter):
    """Whole-tag filter: `style` never matches `lifestyle` (SPEC §2.4)."""

    title = _("tag")
    parameter_name = "tag"
    model = Snippet

    def lookups(self, request, model_admin):
        tags = sorted({tag for tags in self.model.objects.values_list("tags", flat=True) for tag in tags or ()})
        return [(tag, tag) for tag in tags]

    def queryset(self, request, queryset):
        tag = self.value()
        if not tag:
            return queryset
        # JSON containment is not portable (SQLite lacks it); the library is small.
        ids = [pk for pk, tags in self.model.objects.values_list("pk", "tags") if tag in (tags or ())]
        return queryset.filter(pk__in=ids)


@admin.register(Snippet)
class SnippetAdmin(DraftedAdminMixin, SimpleHistoryAdmin):
    policy_section = "snippets"
    form = SnippetAdminForm
    list_display = ("identifier", "name", "tag_list", "rule_count", "sort", "is_active", "hidden", "data_class")
    list_filter = ("is_active", "hidden", "data_class", TagFilter)
    actions = [bulk.activate, bulk.deactivate]
    search_fields = ("identifier", "name", "body")
    ordering = ("sort", "identifier")
    readonly_fields = ("numbered_body", "rule_numbers")
    fieldsets = (
        (None, {"fields": ("identifier", "name", "tags", "data_class")}),
        (_("Use"), {"fields": ("is_active", "hidden", "sort"),
                    "description": _("Rule sets read active, not hidden snippets, ordered by sort then identifier.")}),
        (_("Text"), {"fields": ("body", "numbered_body", "rule_numbers")}),
    )

    @admin.display(description=_("tags"))
    def tag_list(self, obj):
        return ", ".join(obj.tags) or "—"

    @admin.display(description=_("rules"))
    def rule_count(self, obj):
        return len(obj.numbered_lines())

    @admin.display(description=_("lines as numbered"))
    def numbered_body(self, obj):
        lines = obj.numbered_lines() if obj and obj.pk else []
        if not lines:
            return _("Save the snippet to see its lines numbered.") if not (obj and obj.pk) else "—"
        # <li value> keeps each line's own number: empty lines are skipped, not renumbered.
        rows = format_html_join("", "<li value='{}'>{}</li>", ((no, text) for no, text in lines))
        note = ngettext(
            "%(count)d rule. Each non-empty line is one rule; a hint cites it by this line number.",
            "%(count)d rules. Each non-empty line is one rule; a hint cites it by this line number.",
            len(lines),
        ) % {"count": len(lines)}
        return format_html("<ol class='gavel-lines'>{}</ol><div class='gavel-note'>{}</div>", rows, note)

    @admin.display(description=_("rule numbers per configuration"))
    def rule_numbers(self, obj):
        """How each configuration whose rule set includes this snippet numbers its lines."""
        numbering = rule_numbering_for_snippet(obj) if obj and obj.pk else []
        if not numbering:
            return _("No configuration with rules switched on uses this snippet.")
        pair = gettext("rule %(number)d = line %(line_no)d")
        rows = format_html_join(
            "", "<li><strong>{}</strong>: {}</li>",
            ((config, ", ".join(pair % {"number": number, "line_no": line_no} for number, line_no, _line in rules))
             for config, rules in numbering),
        )
        return format_html("<ul class='gavel-numbering'>{}</ul>", rows)


# --- Pattern rules (SPEC §2.6) ---


class SampleLinesField(forms.Field):
    """Samples edited one per line: each non-empty line is one sample, kept exactly (no trimming)."""

    widget = forms.Textarea(attrs={"rows": 5, "class": "vLargeTextField gavel-samples"})

    def __init__(self, *, encoder=None, decoder=None, **kwargs):
        # A model JSONField hands its encoder and decoder to its form field; text needs neither.
        kwargs.setdefault("help_text", _("One sample per line."))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value) -> list[str]:
        if value in self.empty_values:
            return []
        return [line for line in str(value).splitlines() if line.strip()]


class PatternRuleAdminForm(forms.ModelForm):
    class Meta:
        model = PatternRule
        fields = "__all__"
        field_classes = {"tags": TagListField, "wrong_samples": SampleLinesField, "correct_samples": SampleLinesField}
        widgets = {
            "statement": forms.TextInput(attrs={"class": "vLargeTextField", "size": 100}),
            "violation_pattern": forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField gavel-pattern"}),
            "satisfied_pattern": forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField gavel-pattern"}),
            "no_verdict_reason": forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField"}),
        }


class PatternTagFilter(TagFilter):
    model = PatternRule


@admin.register(PatternRule)
class PatternRuleAdmin(DraftedAdminMixin, SimpleHistoryAdmin):
    policy_section = "pattern_rules"
    """Saving validates every sample (snippets/validation.py): the error names the sample."""

    form = PatternRuleAdminForm
    list_display = ("identifier", "statement", "tag_list", "severity", "checked_by", "is_active")
    list_filter = ("is_active", "severity", PatternTagFilter)
    search_fields = ("identifier", "statement", "source", "violation_pattern", "satisfied_pattern",
                     "no_verdict_reason")
    ordering = ("identifier",)
    fieldsets = (
        (None, {"fields": ("identifier", "statement", "tags", "severity", "is_active", "source")}),
        (_("Machine check"), {
            "fields": ("violation_pattern", "satisfied_pattern", "wrong_samples", "correct_samples"),
            "description": _("Python re syntax. Saving refuses a rule whose violation pattern misses one of its "
                             "wrong samples, whose verdict flags one of its correct samples, or whose satisfied "
                             "pattern clears one of its wrong samples."),
        }),
        (_("Without a machine check"), {
            "fields": ("no_verdict_reason",),
            "description": _("A rule without a violation pattern gives no verdict; say why."),
        }),
    )

    @admin.display(description=_("tags"))
    def tag_list(self, obj):
        return ", ".join(obj.tags) or "—"

    @admin.display(description=_("checked by"), ordering="violation_pattern")
    def checked_by(self, obj):
        return _("pattern") if obj.violation_pattern else _("no verdict")
