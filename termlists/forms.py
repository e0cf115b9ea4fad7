"""Forms of the term-list admin: the list itself (scope required) and the "try it" box."""
from django import forms
from django.utils.translation import gettext_lazy as _

from termlists import messages
from termlists.models import TermList

_TERMS_WIDGET = {"rows": 12, "cols": 60, "spellcheck": "false", "style": "font-family: monospace"}


class TermListForm(forms.ModelForm):
    class Meta:
        model = TermList
        fields = ("name", "forbidden", "required", "configurations", "site", "language", "message", "mode",
                  "is_active")
        widgets = {
            "forbidden": forms.Textarea(attrs=_TERMS_WIDGET),
            "required": forms.Textarea(attrs=_TERMS_WIDGET),
            "message": forms.Textarea(attrs={"rows": 3, "cols": 60}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "configurations" in self.fields:
            # The model field cannot say why; a list without scope would silently apply nowhere.
            self.fields["configurations"].error_messages["required"] = messages.SCOPE_REQUIRED

    def clean_forbidden(self):
        return _within_limit(self.cleaned_data.get("forbidden", ""))

    def clean_required(self):
        return _within_limit(self.cleaned_data.get("required", ""))

    def clean_configurations(self):
        configurations = self.cleaned_data.get("configurations")
        if not configurations:
            raise forms.ValidationError(messages.SCOPE_REQUIRED, code="scope_required")
        return configurations


def _within_limit(text: str) -> str:
    """A term field over GAVEL_TERM_LIST_MAX_BYTES is an error at the field that states the limit (issue 11)."""
    from django.conf import settings
    from django.template.defaultfilters import filesizeformat

    size = len((text or "").encode("utf-8"))
    limit = settings.GAVEL_TERM_LIST_MAX_BYTES
    if size > limit:
        raise forms.ValidationError(messages.LIST_TOO_BIG % {"size": filesizeformat(size),
                                                               "limit": filesizeformat(limit)}, code="too_big")
    return text


class TryForm(forms.Form):
    text = forms.CharField(
        label=_("Text to try"), strip=False, max_length=1024 * 1024,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 80}),
    )
