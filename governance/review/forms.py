"""The review UI's forms: the queue's filters and the editor's text."""
from django import forms
from django.utils.translation import gettext_lazy as _

from governance.models import Task


def _blank(label):
    return [("", label)]


class QueueFilter(forms.Form):
    """Filters of the queue (SPEC §10); an unknown value is an error naming the field, not a crash."""

    status = forms.ChoiceField(label=_("Status"), required=False,
                               choices=_blank(_("any status")) + list(Task.Status.choices))
    kind = forms.ChoiceField(label=_("Kind"), required=False, choices=_blank(_("any kind")) + list(Task.Kind.choices))
    configuration = forms.ChoiceField(label=_("Configuration"), required=False)
    batch = forms.ChoiceField(label=_("Batch"), required=False)

    def __init__(self, *args, configurations=(), batches=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["configuration"].choices = _blank(_("any configuration")) + [(c, c) for c in configurations]
        self.fields["batch"].choices = _blank(_("any batch")) + [(str(b.pk), str(b)) for b in batches]

    def filters(self) -> dict:
        """The valid filters only: a bad one is shown as an error and left out."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        found = {name: data[name] for name in ("status", "kind", "configuration") if data.get(name)}
        if data.get("batch"):
            found["batch_id"] = data["batch"]
        return found


class EditForm(forms.Form):
    text = forms.CharField(label=_("Edited text"), strip=False,
                           widget=forms.Textarea(attrs={"rows": 10, "class": "vLargeTextField gavel-edit"}))
