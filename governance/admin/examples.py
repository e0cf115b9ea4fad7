"""Policy examples in the admin (SPEC §12.1), made for people: configuration and kind chosen from what
exists, findings picked row by row (stored as the policy file writes them), errors that name the valid
names, and *Try it*: what the current policy says about the text, before anything is saved.
"""
from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.admin import helpers
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from governance import policy
from governance.admin.drafting import DraftedAdminMixin
from governance.admin.example_fields import (FindingsField, NamedChoiceField, NamedMultipleChoiceField,
                                             ToolCallsField, configuration_names, kind_choices, known_names, unknown)
from governance.errors import UnknownRecord
from governance.models import PolicyExample
from governance.policy.testing import evaluate, screen_example
from governance.review.not_run import check_names, reason_words
from governance.runs.rehearsal import rehearsal
from judging import cache as verdict_cache

TRY_JUDGES = (("skip", _("ask no judge (deterministic checks only)")),
              ("cached", _("judges too: reuse kept verdicts, ask a judge only for a text it has not judged")))
TRY_FIELD = "_try"
# A check's result as the try box says it (the codes are the screening's `checks`).
RESULT_WORDS = {"passed": _("passed"), "blocked": _("stopped the text"), "reported": _("gave a hint"),
                "skipped": _("did not run"), "redacted": _("masked a secret"), "not_checked": _("not checked"),
                "screened": _("screened")}


class PolicyExampleForm(forms.ModelForm):
    class Meta:
        model = PolicyExample
        fields = "__all__"
        field_classes = {"expect_findings": FindingsField, "expect_absent": FindingsField, "tool_calls": ToolCallsField}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = configuration_names()
        stored = self.instance.configuration if self.instance.pk else None
        self.fields["configuration"] = NamedChoiceField(
            names=names, what=gettext("configuration"), keep=stored, label=self.fields["configuration"].label,
            help_text=_("The configuration the text is screened for, as a live screening would screen it."))
        if "also" in self.fields:
            self.fields["also"] = NamedMultipleChoiceField(
                names=names, what=gettext("configuration"), required=False, label=self.fields["also"].label,
                widget=forms.SelectMultiple(attrs={"size": min(6, max(2, len(names)))}),
                help_text=_("Further configurations whose term lists and rules apply too (hold Ctrl or ⌘ to "
                            "pick several)."))
        self.fields["kind"] = forms.ChoiceField(choices=kind_choices(), label=self.fields["kind"].label,
                                                initial="completion", help_text=_("What the text is."))
        known = known_names()
        lists, snippets, rules = list(known["term_list"]), list(known["rules_judge"]), known["pattern_rules"]
        self.fields["expect_findings"].help_text = gettext(
            "Findings that must be present. Pick the check, then what it names: term lists %(lists)s; snippets "
            "%(snippets)s; pattern rules %(rules)s. An empty term or line means any of that list or snippet.") % {
            "lists": ", ".join(lists) or "—", "snippets": ", ".join(snippets) or "—", "rules": ", ".join(rules) or "—"}
        self.fields["expect_absent"].help_text = gettext(
            "Findings that must not be present (a false positive fixed), picked the same way.")

    def clean(self):
        """The same checks as the policy file's examples section (names that exist, findings' shapes)."""
        cleaned = super().clean()
        if self.errors:
            return cleaned
        model_fields = {f.name for f in PolicyExample._meta.fields}
        example = PolicyExample(**{k: v for k, v in cleaned.items() if k in model_fields})
        record = policy.examples.as_document(example)
        errors = policy.errors_of_document({"examples": [record]})
        where = {"expect.outcome": "expect_outcome", "expect.findings": "expect_findings",
                 "expect.absent": "expect_absent"}
        for path, texts in errors.items():
            key = path.removeprefix("examples[0].").removeprefix("examples[0]")
            field_name = next((f for p, f in where.items() if key.startswith(p)), key.split(".")[0].split("[")[0])
            for text in texts:
                detail = "" if key in ("", field_name) else f"{key}: "
                self.add_error(field_name if field_name in self.fields else None, detail + text)
        return cleaned

    def unsaved_example(self) -> PolicyExample:
        """The example as the form holds it, never saved (for *Try it*)."""
        model_fields = {f.name for f in PolicyExample._meta.fields} - {"id"}
        values = {k: v for k, v in self.cleaned_data.items() if k in model_fields}
        return PolicyExample(**values)


def try_example(example: PolicyExample, judges: str) -> dict:
    """What the live policy says about an unsaved example: outcome, findings, pass or fail, and which
    checks ran. Nothing is written; judges only when asked, and then through the verdict cache."""
    with rehearsal(), verdict_cache.counting() as tally:
        try:
            screening = screen_example(example, judges)
        except UnknownRecord as exc:
            return {"error": str(exc)}
        result = evaluate(example, screening, judges)
    return {"outcome": screening.outcome, "expected": example.expect_outcome, "passed": result.passed,
            "found": result.found, "missing": result.missing, "unexpected": result.unexpected,
            "not_checked": result.not_checked, "checks": checks_in_words(screening.checks), "judges": judges,
            "judge_calls": tally.as_dict()}


def checks_in_words(checks: list[dict]) -> list[dict]:
    """Each check that ran or did not, in the reader's language, as the review's task page names them."""
    names = check_names()
    return [{"check": str(names.get(c.get("check"), c.get("check"))),
             "result": str(RESULT_WORDS.get(c.get("result"), c.get("result"))),
             "reason": str(reason_words(c["reason"])) if c.get("reason") else ""} for c in checks]


@admin.register(PolicyExample)
class PolicyExampleAdmin(DraftedAdminMixin, admin.ModelAdmin):
    """Policy editors write examples: they change what is tested, never what is enforced (SPEC §12.1)."""

    policy_section = "examples"
    form = PolicyExampleForm
    change_form_template = "admin/governance/policyexample/change_form.html"
    list_display = ("name", "configuration", "expect_outcome", "kept_by", "updated")
    list_filter = ("expect_outcome", "configuration")
    search_fields = ("name", "configuration", "note")
    readonly_fields = ("kept_by", "kept_at", "from_task", "created", "updated")
    fieldsets = (
        (None, {"fields": ("name", "configuration", "also", "kind", "site", "language", "format", "text",
                           "tool_calls")}),
        (_("Expected"), {"fields": ("expect_outcome", "expect_findings", "expect_absent", "note")}),
        (_("Kept from review"), {"fields": ("kept_by", "kept_at", "from_task", "created", "updated")}),
    )

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST" and TRY_FIELD in request.POST:
            return self.try_view(request, object_id, form_url, extra_context)
        extra_context = {**(extra_context or {}), "try_judges": TRY_JUDGES, "try_field": TRY_FIELD}
        return super().changeform_view(request, object_id, form_url, extra_context)

    def try_view(self, request, object_id, form_url, extra_context):
        """The change form again, as filled in, with what the current policy says about it. Nothing saved."""
        add = object_id is None
        obj = None if add else self.get_object(request, unquote(object_id))
        if not add and obj is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not (self.has_add_permission(request) if add else self.has_change_permission(request, obj)):
            raise PermissionDenied
        form = self.get_form(request, obj, change=not add)(request.POST, request.FILES, instance=obj)
        judges = request.POST.get("try_judges") if request.POST.get("try_judges") in dict(TRY_JUDGES) else "skip"
        result = try_example(form.unsaved_example(), judges) if form.is_valid() else None
        fieldsets = self.get_fieldsets(request, obj)
        admin_form = helpers.AdminForm(form, list(fieldsets), self.get_prepopulated_fields(request, obj),
                                       self.get_readonly_fields(request, obj), model_admin=self)
        context = {
            **self.admin_site.each_context(request),
            "title": (_("Add %s") if add else _("Change %s")) % self.opts.verbose_name,
            "subtitle": str(obj) if obj else None,
            "adminform": admin_form, "object_id": object_id, "original": obj, "is_popup": False,
            "to_field": None, "media": self.media + admin_form.media, "inline_admin_formsets": [],
            "errors": helpers.AdminErrorList(form, []), "preserved_filters": self.get_preserved_filters(request),
            "try_result": result, "try_judges": TRY_JUDGES, "try_field": TRY_FIELD, "try_judges_chosen": judges,
            **(extra_context or {}),
        }
        return self.render_change_form(request, context, add=add, change=not add, obj=obj, form_url=form_url)


__all__ = ["PolicyExampleAdmin", "PolicyExampleForm", "try_example", "unknown"]
