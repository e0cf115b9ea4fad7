"""Term list admin: lists filtered by scope, one term per line, history, and a "try it" box that
runs the saved list against a pasted text (SPEC §2.5, §5).
"""
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Prefetch
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from governance.admin.drafting import DraftedAdminMixin
from governance.records import bulk
from governance.models import Configuration
from termlists import messages, services
from termlists.forms import TermListForm, TryForm
from governance.messages import TERM_SUGGESTION
from termlists.matcher import parse_terms
from termlists.models import TermList


@admin.register(TermList)
class TermListAdmin(DraftedAdminMixin, SimpleHistoryAdmin):
    policy_section = "term_lists"
    form = TermListForm
    list_display = ("name", "mode", "scope", "site", "language", "forbidden_count", "required_count", "is_active",
                    "try_link")
    list_filter = ("configurations", "mode", "is_active")
    search_fields = ("name", "forbidden", "required", "message")
    filter_horizontal = ("configurations",)
    actions = [bulk.activate, bulk.deactivate, bulk.report_mode, bulk.block_mode]
    fieldsets = (
        (None, {"fields": ("name", "mode", "is_active")}),
        (_("Terms (one per line)"), {
            "fields": ("forbidden", "required"),
            "description": _(
                "Case is ignored; a term matches whole words only; a trailing * reaches further "
                "(Rabatt* matches Rabatte). No stemming, no synonyms."
            ),
        }),
        (_("Scope"), {
            "fields": ("configurations", "site", "language"),
            "description": _(
                "A list applies to calls naming one of its configurations. A site narrows it: a call stating "
                "another site does not get the list, a call stating none gets only its forbidden terms. A "
                "language never takes the forbidden terms away; only a call stating it gets the required terms."
            ),
        }),
        (_("Block message"), {"fields": ("message",)}),
    )

    def get_queryset(self, request):
        configurations = Prefetch("configurations", queryset=Configuration.objects.only("identifier"))
        return super().get_queryset(request).prefetch_related(configurations)

    @admin.display(description=_("configurations"))
    def scope(self, obj):
        return ", ".join(config.identifier for config in obj.configurations.all())

    @admin.display(description=_("try it"))
    def try_link(self, obj):
        url = reverse("admin:termlists_termlist_try", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("Try it"))

    @admin.display(description=_("forbidden"))
    def forbidden_count(self, obj):
        return len(parse_terms(obj.forbidden))

    @admin.display(description=_("required"))
    def required_count(self, obj):
        return len(parse_terms(obj.required))

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        # Say the silent clean-up: repeated terms are folded into one on save (issue 11).
        for field in ("forbidden", "required"):
            typed = [line.strip() for line in request.POST.get(field, "").splitlines() if line.strip()]
            removed = len(typed) - len(parse_terms(getattr(obj, field)))
            if removed > 0:
                self.message_user(request, messages.DUPLICATES_REMOVED % {
                    "count": removed, "field": form.fields[field].label if field in form.fields else field})

    # --- the "try it" box ---
    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        own = [path("<path:object_id>/try/", self.admin_site.admin_view(self.try_view), name="%s_%s_try" % info)]
        return own + super().get_urls()

    def try_view(self, request, object_id):
        """Run the saved list against a pasted text and show what it finds. Nothing is stored."""
        term_list = self.get_object(request, object_id)
        if term_list is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if not self.has_view_or_change_permission(request, term_list):
            raise PermissionDenied
        form = TryForm(request.POST or None)
        result = None
        if request.method == "POST" and form.is_valid():
            result = services.try_text(term_list, form.cleaned_data["text"])
            result["summary"] = summary_lines(result)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": term_list,
            "title": messages.TRY_TITLE % {"name": term_list.name},
            "form": form,
            "result": result,
            "unsaved_note": messages.TRY_UNSAVED,
        }
        return TemplateResponse(request, "admin/termlists/termlist/try.html", context)


def summary_lines(result: dict) -> list[str]:
    """The try box's verdict in sentences, in the reader's language."""
    lines = []
    if result["forbidden"]:
        terms = ", ".join(hit["term"] for hit in result["forbidden"])
        lines.append(messages.TRY_FORBIDDEN_FOUND % {"terms": terms})
        lines.extend(str(TERM_SUGGESTION) % {"term": hit["term"], "suggestion": hit["suggestion"]}
                     for hit in result["forbidden"] if hit.get("suggestion"))
    else:
        lines.append(str(messages.TRY_NOTHING_FOUND))
    if result["required_present"] or result["required_missing"]:
        if result["required_missing"]:
            lines.append(messages.TRY_REQUIRED_MISSING % {"terms": ", ".join(result["required_missing"])})
        else:
            lines.append(str(messages.TRY_REQUIRED_PRESENT))
        if not result["finished"]:
            lines.append(messages.TRY_NOT_FINISHED % {"words": result["words"], "minimum": result["minimum_words"]})
    return lines
