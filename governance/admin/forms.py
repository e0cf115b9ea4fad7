"""The admin's forms and form fields: JSON lists edited as one line of text (the snippet admin
reuses them), ordered configuration pickers, and the policy records' forms."""
import re

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import AutocompleteSelectMultiple
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.utils.translation import gettext_lazy as _

from governance.models import LINK_FIELDS, Configuration, FallbackLink, JudgeLink, Provider, normalise_tags
from governance.records import links
from governance.records import writes
from governance.records.permissions import field_label, is_administrator


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
            "read_tools": ListTextField,  # trimmed, case kept, once each
            "mcp_servers": ListTextField, "approve_tools": ListTextField, "deny_tools": ListTextField,
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        instance = self.instance
        if "judge_cache_seconds" in self.fields:
            # Blank means the default, 0 (ask the judges every time), as in a policy file without it.
            self.fields["judge_cache_seconds"].required = False
        if "mcp_results" in self.fields:
            # Blank means the default (report), as in a policy file without the key (SPEC §14).
            self.fields["mcp_results"].required = False
        for name, ordered in (("rule_judges", instance.ordered_judges), ("fallbacks", instance.ordered_fallbacks)):
            if name in self.fields:
                if instance.pk is not None:
                    self.fields[name].queryset = self.fields[name].queryset.exclude(pk=instance.pk)
                self.initial.setdefault(name, [c.pk for c in ordered()])

    def clean_judge_cache_seconds(self):
        return self.cleaned_data.get("judge_cache_seconds") or 0

    def clean_mcp_results(self):
        return self.cleaned_data.get("mcp_results") or Configuration._meta.get_field("mcp_results").default

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
