"""Admin for providers, configurations, consumers and the governance log.

Also home of the admin's list-as-text form fields, which the snippet admin reuses.
"""
import json
import re
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.widgets import AutocompleteSelectMultiple
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied, ValidationError
from django.db.models import Count
from django.template.response import TemplateResponse
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from simple_history.admin import SimpleHistoryAdmin

from governance.records import links

from governance.records import writes
from governance.evidence import admin as evidence_admin, trace
from governance.models import (LINK_FIELDS, Configuration, Consumer, FallbackLink, GovernanceEvent, JudgeLink,
                               Provider, Task, normalise_tags)
from governance.models import GRANTABLE_KINDS
from governance.records.permissions import admin_only_fields, field_label, is_administrator, require_admin_for

admin.site.site_header = _("Gavel administration")
admin.site.site_title = _("Gavel")
admin.site.index_title = _("Policy and governance")


# --- Form fields: JSON lists edited as one line of text ---------------------


class ListTextField(forms.Field):
    """A JSON list edited as comma-separated text: "a, b" becomes ["a", "b"] and back.

    Items are trimmed; empty items and repeats are dropped, keeping the first.
    """

    widget = forms.TextInput(attrs={"class": "vTextField gavel-list", "size": 80})
    default_help_text = _("Separate items with commas.")

    def __init__(self, *, encoder=None, decoder=None, **kwargs):
        # A model JSONField hands its encoder and decoder to its form field; text needs neither.
        if not kwargs.get("help_text"):
            kwargs["help_text"] = self.default_help_text
        super().__init__(**kwargs)

    def normalise(self, item: str) -> str:
        return item.strip()

    def prepare_value(self, value):
        if isinstance(value, (list, tuple)):
            return ", ".join(str(item) for item in value)
        return value

    def to_python(self, value) -> list[str]:
        if value in self.empty_values:
            return []
        items = value if isinstance(value, (list, tuple)) else re.split(r"[,\n]", str(value))
        result: list[str] = []
        for raw in items:
            item = self.normalise(str(raw))
            if item and item not in result:
                result.append(item)
        return result


class TagListField(ListTextField):
    """Tags: a set, trimmed and lower-cased (SPEC §2.4)."""

    default_help_text = _("Separate tags with commas. Tags are stored lower-cased; a tag matches whole tags only.")

    def to_python(self, value) -> list[str]:
        return normalise_tags(super().to_python(value))


class OrderedAutocompleteSelectMultiple(AutocompleteSelectMultiple):
    """An autocomplete picker that keeps the order of its values: the chain order, not the table's.

    A newly picked configuration goes to the end (ordered-autocomplete.js), so removing and
    picking again moves it there.
    """

    def optgroups(self, name, value, attr=None):
        groups = super().optgroups(name, value, attr)
        place = {str(v): index for index, v in enumerate(value)}
        for _group, options, _index in groups:
            options.sort(key=lambda option: place.get(str(option["value"]), len(place)))
            for index, option in enumerate(options):
                option["index"] = str(index)
        return groups

    @property
    def media(self):
        return super().media + forms.Media(js=["governance/ordered-autocomplete.js"])


class OrderedConfigurationsField(forms.ModelMultipleChoiceField):
    """An ordered list of other configurations (judges, fallbacks), picked by identifier."""

    def __init__(self, link_field, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(queryset=Configuration.objects.select_related("provider").order_by("identifier"),
                         widget=OrderedAutocompleteSelectMultiple(link_field, admin.site), **kwargs)

    def clean(self, value):
        chosen = {str(c.pk): c for c in super().clean(value)}
        # The order the person gave is the order of the chain; the queryset would lose it.
        return [chosen[str(key)] for key in dict.fromkeys(value or ()) if str(key) in chosen]

    def has_changed(self, initial, data):
        initial = [str(getattr(v, "pk", v)) for v in initial or ()]
        return initial != [str(v) for v in data or ()]


MSG_READ_ONLY_ERROR = _("%(label)s: %(error)s Only an administrator can change this field: ask one to fix it.")


class PolicyRecordForm(forms.ModelForm):
    """Base form: Model.clean() may judge fields this form does not show (read-only ones)."""

    def _update_errors(self, errors):
        # Django refuses an error keyed by a field the form lacks (ValueError, a
        # 500). Such an error concerns a read-only field: show it at the top,
        # by its label, saying who can fix it.
        if hasattr(errors, "error_dict"):
            kept: dict[str, list] = {}
            for field, messages_ in errors.error_dict.items():
                if field == NON_FIELD_ERRORS or field in self.fields:
                    kept.setdefault(field, []).extend(messages_)
                else:
                    for message in messages_:
                        kept.setdefault(NON_FIELD_ERRORS, []).append(ValidationError(
                            MSG_READ_ONLY_ERROR % {"label": field_label(self._meta.model, field),
                                                   "error": " ".join(message.messages)}))
            errors = ValidationError(kept)
        super()._update_errors(errors)


class ConfigurationAdminForm(PolicyRecordForm):
    rule_judges = OrderedConfigurationsField(
        JudgeLink._meta.get_field("judge"), label=_("rule judges"),
        help_text=_("Judging configurations, asked in this order until one allows or denies. "
                    "A newly picked judge goes to the end."),
    )
    fallbacks = OrderedConfigurationsField(
        FallbackLink._meta.get_field("fallback"), label=_("fallbacks"),
        help_text=_("Tried in this order on connection errors, timeouts, HTTP 429 and 5xx. One hop: a fallback's "
                    "own fallbacks are never tried. Each must be of the same kind (chat or decision)."),
    )

    # Set by ConfigurationAdmin.get_form: who is editing, for the refusals that depend on it.
    actor = None

    class Meta:
        model = Configuration
        fields = "__all__"
        field_classes = {
            "context_tags": TagListField,
            "rule_tags": TagListField,
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        instance = self.instance
        if "judge_cache_seconds" in self.fields:
            # Blank means the default, 0 (ask the judges every time), as in a policy file without it.
            self.fields["judge_cache_seconds"].required = False
        for name, ordered in (("rule_judges", instance.ordered_judges), ("fallbacks", instance.ordered_fallbacks)):
            if name in self.fields:
                if instance.pk is not None:
                    self.fields[name].queryset = self.fields[name].queryset.exclude(pk=instance.pk)
                self.initial.setdefault(name, [c.pk for c in ordered()])

    def clean_judge_cache_seconds(self):
        return self.cleaned_data.get("judge_cache_seconds") or 0

    def _post_clean(self):
        # After the instance holds the form's values (identifier, provider, mode), before the save.
        if "fallbacks" in getattr(self, "cleaned_data", {}):
            self.instance._pending_fallbacks = [c.identifier for c in self.cleaned_data["fallbacks"]]
        super()._post_clean()
        if self.errors:
            return
        cleaned = self.cleaned_data
        stored = (Configuration.objects.select_related("provider").filter(pk=self.instance.pk).first()
                  if self.instance.pk else None)
        wanted = {name: cleaned[name] for name in LINK_FIELDS if name in cleaned}
        for field, errors in writes.link_errors_for(stored, self.instance, wanted).items():
            for error in errors:
                self.add_error(field if field in self.fields else None, error)
        if stored is not None and not is_administrator(self.actor):
            # SPEC §2.3 by consequence: the refusal stands at the field whose change causes it.
            for field in ("identifier", "provider", "fallbacks"):
                if field not in cleaned or field not in self.changed_data:
                    continue
                effects = links.configuration_effects(stored, {field: cleaned[field]})
                if effects:
                    self.add_error(field, links.refusal_text(effects))


class ProviderAdminForm(PolicyRecordForm):
    actor = None

    class Meta:
        model = Provider
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk and not self.errors and not is_administrator(self.actor):
            stored = Provider.objects.get(pk=self.instance.pk)
            for field in links.PROVIDER_EFFECT_FIELDS:
                if field in cleaned and field in self.changed_data:
                    effects = links.provider_effects(stored, {field: cleaned[field]})
                    if effects:
                        self.add_error(field, links.refusal_text(effects))
        return cleaned


def titled_choices_filter(title):
    """A choices filter with its own title, for a field reached through a relation."""

    class TitledChoicesFilter(admin.ChoicesFieldListFilter):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.title = title

    return TitledChoicesFilter


# --- Admin-only fields (SPEC §2.3) ------------------------------------------


class AdminOnlyFieldsMixin:
    """Show the admin-only fields read-only to a non-administrator; save through writes.save_record.

    A non-administrator's add, change or revert POST that names an admin-only field is
    refused whole (403, nothing stored). Should a field ever be left editable by
    mistake, save_record still compares the record with the stored row and
    refuses any admin-only change by a non-administrator, whatever path produced it.
    """

    # A read-only list reads better as the text an administrator types: field -> display method.
    readonly_displays: dict[str, str] = {}

    def locked_fields(self, request, obj=None) -> tuple[str, ...]:
        """The admin-only fields this person may not write (on `obj`, when it is given)."""
        return () if is_administrator(request.user) else admin_only_fields(self.model, obj)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        for name in self.locked_fields(request, obj):
            fields += [n for n in (name, self.readonly_displays.get(name)) if n and n not in fields]
        return fields

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        swap = {name: self.readonly_displays[name] for name in self.locked_fields(request, obj)
                if name in self.readonly_displays}
        if not swap:
            return fieldsets

        def swapped(entry):
            if isinstance(entry, (list, tuple)):
                return tuple(swap.get(name, name) for name in entry)
            return swap.get(entry, entry)

        return [(title, {**options, "fields": [swapped(entry) for entry in options["fields"]]})
                for title, options in fieldsets]

    def refuse_forged_post(self, request, object_id=None) -> None:
        """403 for a non-administrator's POST that names an admin-only field, before anything is read or saved."""
        if request.method == "POST":
            # The page shows these fields as text, so a browser never sends them: a POST that names one
            # is forged, and saving the rest of it would hide that it was refused (SPEC §2.3).
            stored = self.model._default_manager.filter(pk=unquote(object_id)).first() if object_id else None
            require_admin_for(request.user, self.model, set(request.POST), stored)

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is not None and getattr(request, "_gavel_revert", False) and not is_administrator(request.user):
            self.keep_admin_only_values(request, obj)
        form = super().get_form(request, obj, change, **kwargs)
        form.actor = request.user
        return form

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        self.refuse_forged_post(request, object_id)
        if (request.method == "POST" and object_id and is_administrator(request.user)
                and CONFIRMED not in request.POST and "_saveasnew" not in request.POST):
            response = self.confirm_effects(request, object_id)
            if response is not None:
                return response
        return super().changeform_view(request, object_id, form_url, extra_context)

    def confirm_effects(self, request, object_id):
        """A page listing what an administrator's change does to other configurations, before it is made.

        None when the change affects no other configuration (or the form has errors, which the
        ordinary page then shows)."""
        stored = self.get_object(request, unquote(object_id))
        editing = self.get_object(request, unquote(object_id))
        if stored is None:
            return None
        form = self.get_form(request, editing, change=True)(request.POST, request.FILES, instance=editing)
        if not form.is_valid():
            return None
        wanted = {name: form.cleaned_data[name] for name in LINK_FIELDS if name in form.cleaned_data}
        effects = writes.effects_on_others(stored, form.instance, wanted)
        if not effects:
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": _("Confirm a change that affects other configurations"),
            "opts": self.model._meta,
            "object": stored,
            "effects": effects,
            "affected": sorted({other for other, _sentence in effects}),
            "post_items": [(key, value) for key, values in request.POST.lists() if key != "csrfmiddlewaretoken"
                           for value in values],
            "confirm_name": CONFIRMED,
        }
        return TemplateResponse(request, "admin/gavel/confirm_effects.html", context)

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        # Reverting to a past version is a change POST too.
        self.refuse_forged_post(request, object_id)
        request._gavel_revert = True
        return super().history_form_view(request, object_id, version_id, extra_context)

    def keep_admin_only_values(self, request, version) -> None:
        """A policy editor's revert restores what they may write and keeps the admin-only fields as stored.

        `version` is the past version the revert page shows and saves; its admin-only values are
        replaced by the stored ones before the page shows them, and the page says which fields differ.
        """
        if hasattr(request, "_gavel_kept"):
            return  # get_form may be asked twice in one request
        stored = self.model._default_manager.filter(pk=version.pk).first()
        kept = []
        for name in admin_only_fields(self.model, stored) if stored is not None else ():
            if name in LINK_FIELDS:
                continue  # chains are not in the history rows: a revert never touches them
            attname = self.model._meta.get_field(name).attname
            if getattr(version, attname) != getattr(stored, attname):
                kept.append(field_label(self.model, name))
                setattr(version, attname, getattr(stored, attname))
        request._gavel_kept = kept
        if kept and request.method == "GET":
            messages.warning(request, MSG_REVERT_KEPT % {"fields": ", ".join(kept)})

    def save_model(self, request, obj, form, change):
        model_fields = {f.name for f in self.model._meta.concrete_fields} | set(LINK_FIELDS)
        changes = {name: form.cleaned_data[name] for name in form.changed_data
                   if name in model_fields and name in form.cleaned_data}
        # What SimpleHistoryAdmin.save_model would do, as this replaces it: the history names the person.
        obj._history_user = request.user
        writes.save_record(request.user, obj, changes)
        if getattr(request, "_gavel_kept", None):
            messages.info(request, MSG_REVERT_KEPT_DONE % {"fields": ", ".join(request._gavel_kept)})


ADMIN_ONLY_NOTE = _("Only an administrator (superuser) can change these fields.")
MSG_REVERT_KEPT = _(
    "This version differs in fields only an administrator can restore: %(fields)s. Those keep their current "
    "values (shown here); “Revert” restores every other field. To keep everything as it is, go back without "
    "saving; to restore those fields too, ask an administrator."
)
MSG_REVERT_KEPT_DONE = _("Restored every field you may change; kept as they are (only an administrator can restore "
                         "them): %(fields)s.")
# The confirmation page sends the change again with this key (see AdminOnlyFieldsMixin.confirm_effects).
CONFIRMED = "_gavel_confirmed"


# --- Providers ----------------------------------------------------------------


@admin.register(Provider)
class ProviderAdmin(AdminOnlyFieldsMixin, SimpleHistoryAdmin):
    form = ProviderAdminForm
    list_display = ("name", "kind", "route", "trust_zone", "api_base", "timeout", "price_per_mtok_in",
                    "price_per_mtok_out", "configuration_count")
    list_filter = ("kind", "trust_zone", "route")
    search_fields = ("name", "route", "api_base", "api_key_env")
    ordering = ("name",)
    fieldsets = (
        (None, {"fields": ("name", "kind", "timeout")}),
        (_("Limits"), {
            "fields": ("max_concurrency", "requests_per_minute", "tokens_per_minute"),
            "description": _("Held across every web process and worker; a call over a limit waits. 0 means no "
                             "limit."),
        }),
        (_("Price per million tokens"), {
            "fields": ("price_per_mtok_in", "price_per_mtok_out"),
            "description": _("Used for cost; litellm's price map is only a fallback."),
        }),
        (_("Connection and trust zone"), {
            "fields": ("route", "api_base", "api_key_env", "trust_zone"),
            "description": ADMIN_ONLY_NOTE,
        }),
    )

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_configuration_count=Count("configurations"))

    @admin.display(description=_("configurations"), ordering="_configuration_count")
    def configuration_count(self, obj):
        return obj._configuration_count

    def has_add_permission(self, request):
        # A provider without a route reaches nothing, and the route is
        # admin-only: only an administrator can add a usable provider.
        return super().has_add_permission(request) and is_administrator(request.user)


# --- Configurations -------------------------------------------------------------


@admin.register(Configuration)
class ConfigurationAdmin(AdminOnlyFieldsMixin, SimpleHistoryAdmin):
    form = ConfigurationAdminForm
    list_display = ("identifier", "provider", "model", "rule_mode", "rule_tag_list", "judge_list",
                    "fallback_list", "budget_daily_requests")
    list_filter = ("rule_mode", "rule_default", "provider",
                   ("provider__kind", titled_choices_filter(_("provider kind"))),
                   ("provider__trust_zone", titled_choices_filter(_("provider trust zone"))))
    search_fields = ("identifier", "model", "provider__name", "system_prompt")
    list_select_related = ("provider",)
    ordering = ("identifier",)
    fieldsets = (
        (None, {"fields": ("identifier", "provider", "model", "system_prompt", "temperature", "max_tokens",
                           "timeout", "fallbacks")}),
        (_("Budget caps per day (0 = no cap)"), {
            "fields": ("budget_daily_requests", "budget_daily_tokens", "budget_daily_cost"),
        }),
        (_("Context and rules"), {
            "fields": ("context_tags", "rule_mode", "rule_tags", "rule_judges", "rule_default",
                       "min_confidence", "escalation", "judge_cache_seconds"),
            "description": ADMIN_ONLY_NOTE,
        }),
    )

    readonly_displays = {"context_tags": "context_tag_list", "rule_tags": "rule_tag_list",
                         "rule_judges": "judge_list"}

    @admin.display(description=_("context tags"))
    def context_tag_list(self, obj):
        return ", ".join(obj.context_tags) or "—"

    @admin.display(description=_("rule tags"))
    def rule_tag_list(self, obj):
        return ", ".join(obj.rule_tags) or "—"

    @admin.display(description=_("rule judges"))
    def judge_list(self, obj):
        return ", ".join(obj.judge_identifiers()) or "—"

    @admin.display(description=_("fallbacks"))
    def fallback_list(self, obj):
        return ", ".join(obj.fallback_identifiers()) or "—"

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("judge_links__judge", "fallback_links__fallback")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Warn, on every visit, about judges that could never run (SPEC §7), and say at the place of the
        # edit which other configurations depend on this one (their judges, fallbacks, escalation).
        if request.method == "GET" and (obj := self.get_object(request, object_id)) is not None:
            from judging.admin_warnings import configuration_warnings

            for warning in configuration_warnings(obj):
                messages.warning(request, warning)
            used_by = links.referrers(obj)
            if used_by:
                names = ", ".join(f"{other} ({links.ROLES[role]})" for other, role in used_by)
                messages.info(request, _(
                    "Other configurations depend on this one: %(names)s. Renaming it or changing its provider "
                    "(or, for a judge, its fallbacks) changes them, so only an administrator can.")
                    % {"names": names})
        return super().change_view(request, object_id, form_url, extra_context)

    # Deleting a configuration that others name would change admin-only state (SPEC §2.3) unseen.
    def get_deleted_objects(self, objs, request):
        """List what refers to the configurations as "protected": Django's confirmation page shows it and
        refuses the deletion, for the delete view and the bulk action alike."""
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        # The blockers include escalation (PROTECT), so they replace Django's own list rather than repeat it.
        # An escalation between two selected configurations is no blocker, but PROTECT still refuses it:
        # Django's own list then says so.
        blockers = writes.configuration_delete_blockers(objs)
        return deleted, model_count, perms_needed, blockers or protected

    def delete_model(self, request, obj):
        self.refuse_blocked_delete([obj])
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        self.refuse_blocked_delete(queryset)
        super().delete_queryset(request, queryset)

    @staticmethod
    def refuse_blocked_delete(configurations):
        """Last line: a delete that reaches here past the confirmation page is refused all the same."""
        blockers = writes.configuration_delete_blockers(configurations)
        if blockers:
            raise PermissionDenied(" ".join(blockers))


# --- Consumers ------------------------------------------------------------------


class ConsumerForm(forms.ModelForm):
    """The kinds a consumer may state, as boxes: the free kinds are always allowed, so only the kinds
    that need a grant are offered (SPEC §3)."""

    kinds = forms.MultipleChoiceField(
        label=_("kinds"), required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(kind, kind) for kind in GRANTABLE_KINDS],
        help_text=_("Kinds this consumer may state besides completion, queued_task and field_fill (always "
                    "allowed). internal is searched for forbidden terms only and never judged; "
                    "image_description is never asked for required terms."))

    class Meta:
        model = Consumer
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "kinds" in self.fields and self.instance.pk:
            self.initial["kinds"] = [k for k in (self.instance.kinds or ()) if k in GRANTABLE_KINDS]

    def clean_kinds(self):
        return ["completion", *(k for k in GRANTABLE_KINDS if k in self.cleaned_data.get("kinds", ()))]


@admin.register(Consumer)
class ConsumerAdmin(admin.ModelAdmin):
    """API consumers. Tokens are issued on the command line; only administrators change a consumer."""

    list_display = ("name", "token_prefix", "is_admin", "configuration_list", "is_active_display", "created_at",
                    "revoked_at")
    list_filter = ("is_admin", ("revoked_at", admin.EmptyFieldListFilter), "configurations")
    search_fields = ("name", "token_prefix")
    ordering = ("name",)
    fields = ("name", "token_prefix", "is_admin", "configurations", "kinds", "throttle_rate", "created_at",
              "revoked_at")
    readonly_fields = ("token_prefix", "created_at", "revoked_at")
    filter_horizontal = ("configurations",)
    actions = ["revoke"]
    form = ConsumerForm

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("configurations")

    @admin.display(description=_("configurations"))
    def configuration_list(self, obj):
        return ", ".join(c.identifier for c in obj.configurations.all()) or "—"

    @admin.display(description=_("active"), boolean=True, ordering="revoked_at")
    def is_active_display(self, obj):
        return obj.is_active

    def has_add_permission(self, request):
        # A token is shown once, on the command line: `manage.py create_consumer`.
        return False

    # A consumer's grants and its administrator flag reach the policy through
    # the API (PUT /api/v1/policy), so changing a consumer is an administrator's act.
    def has_change_permission(self, request, obj=None):
        return is_administrator(request.user)

    def has_delete_permission(self, request, obj=None):
        return is_administrator(request.user)

    @admin.action(description=_("Revoke the selected consumers' tokens"), permissions=["change"])
    def revoke(self, request, queryset):
        count = queryset.revoke()
        self.message_user(
            request, ngettext("%d token revoked.", "%d tokens revoked.", count) % count, messages.SUCCESS
        )


def json_block(value):
    """A JSON value as an indented, escaped <pre> block (the log's facts, a task's messages and hints)."""
    return format_html('<pre class="gavel-json">{}</pre>', json.dumps(value, indent=2, ensure_ascii=False, default=str))


# --- Governance log -------------------------------------------------------------


@admin.register(GovernanceEvent)
class GovernanceEventAdmin(admin.ModelAdmin):
    """Append-only: readable with the view permission, never added, changed or deleted here."""

    # Fits 1280 px: provider, model and actor are on the detail page (issue 11).
    list_display = ("when", "decision", "check_name", "configuration", "subject", "mode", "correlation_link")
    list_display_links = ("when",)

    class Media:
        css = {"all": ["governance/event_log.css"]}
    # No filter on an unindexed column: listing its distinct values would scan the whole log.
    list_filter = ("decision", "check_name", "mode", "configuration")
    # What the list shows can be searched: the 8-character id it prints (its beginning), list names and
    # terms in the facts, and the check names in the reader's words (get_search_results).
    search_fields = ("^correlation_id", "configuration", "provider", "actor", "model", "detail__list",
                     "detail__terms")
    search_help_text = _("Searches the correlation id (its first characters are enough), configuration, provider, "
                         "actor, model, term list names and terms, and check names.")
    date_hierarchy = "at"
    ordering = ("-at", "-id")
    # The log grows fast; do not count the whole table on every filtered page.
    show_full_result_count = False
    fields = ("at", "correlation_id", "decision", "check_name", "configuration", "provider", "model", "actor",
              "mode", "summary", "detail_pretty", "task_link")
    readonly_fields = fields

    @admin.display(description=_("task"))
    def task_link(self, obj):
        return evidence_admin.event_task_link(obj)

    def get_search_results(self, request, queryset, search_term):
        results, duplicates = super().get_search_results(request, queryset, search_term)
        of_task = trace.event_search(search_term)  # a task's id, short or full: its events (SPEC §13.1)
        if of_task is not None:
            results = results | queryset.filter(of_task)
        words = search_term.strip().lower()
        if words:
            checks = [value for value, label in GovernanceEvent.Check.choices
                      if words in value.replace("_", " ") or words in value or words in str(label).lower()]
            if checks:
                results = results | queryset.filter(check_name__in=checks)
        return results, duplicates

    @admin.display(description=_("time"), ordering="at")
    def when(self, obj):
        # The short form ("01.12.2026 20:30"), so the list fits 1280 px (docs/decisions.md).
        return date_format(localtime(obj.at), "SHORT_DATETIME_FORMAT")

    @admin.display(description=_("correlation id"))
    def correlation_link(self, obj):
        # Every event of one screening shares the id: link to all of them (the whole id in the title).
        return format_html('<a href="?{}" title="{}">{}</a>', urlencode({"q": obj.correlation_id}),
                           obj.correlation_id, obj.correlation_id[:8])

    # Append-only: no History button (the change form's object tools are left out).
    change_form_template = "admin/governance/governanceevent/change_form.html"

    @admin.display(description=_("about"))
    def subject(self, obj):
        from governance.screening.event_text import subject

        return subject(obj.detail) or "—"

    @admin.display(description=_("in words"))
    def summary(self, obj):
        from governance.screening.event_text import sentence

        return sentence(obj)

    @admin.display(description=_("facts (JSON)"))
    def detail_pretty(self, obj):
        return json_block(obj.detail)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Only `manage.py purge_governance --days N` removes events.
        return False


# --- Tasks ------------------------------------------------------------------------


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    """Queued tasks and field fills, read-only for staff like the governance log (SPEC §2.8, §10).

    Editors review them at /review/; here they can be looked up by id, consumer or configuration.
    """

    list_display = ("created", "short_id", "kind", "status", "configuration", "consumer", "attempts", "outcome",
                    "review_decision")
    list_filter = ("status", "kind", "configuration", "review_decision")
    search_fields = ("=id", "configuration", "consumer__name")
    date_hierarchy = "created"
    ordering = ("-created",)
    show_full_result_count = False
    list_select_related = ("consumer",)
    fields = ("id", "kind", "status", "consumer", "configuration", "also", "field", "site", "language",
              "messages_pretty", "attempts", "outcome", "answer", "hints_pretty", "refusal", "verification",
              "completion", "failure", "review_decision", "reviewed_by", "reviewed_at", "edited", "edited_text",
              "callback_url", "callback_status", "callback_attempts", "callback_error", "created", "updated",
              "finished_at", "purged_at", "trace")
    readonly_fields = fields

    @admin.display(description=_("governance log and evidence"))
    def trace(self, obj):
        return evidence_admin.trace_links(obj)

    @admin.display(description=_("task"))
    def short_id(self, obj):
        return str(obj.pk)[:8]

    @admin.display(description=_("input messages"))
    def messages_pretty(self, obj):
        return json_block(obj.messages)

    @admin.display(description=_("hints"))
    def hints_pretty(self, obj):
        return json_block(obj.hints)

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request):
        return self.has_view_permission(request)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Task contents are emptied by purge_governance; the rows stay.
        return False


# The policy examples and release pages register themselves (governance/policy/release_admin.py).
from governance.policy import release_admin  # noqa: E402,F401
