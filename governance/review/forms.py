"""The review UI's forms: the queue's filters and search, and the editor's text."""
from django import forms
from django.db.models import CharField, Q, Value
from django.db.models.functions import Cast, Replace
from django.utils.translation import gettext_lazy as _

from governance.models import Task
from governance.review.not_run import has_hints_q, not_run_q

# What an editor still has to act on: decide on (ready, blocked) or send again (failed).
WAITING = (Task.Status.READY, Task.Status.BLOCKED, Task.Status.FAILED)
WAITING_CHOICE = "waiting"
ANY_STATUS = "all"
# The filters a task's page carries on to the next task, so an editor stays in the queue they chose.
SCOPE_FIELDS = ("status", "kind", "configuration", "batch", "hints", "not_run", "q", "size")
PAGE_SIZES = (25, 50, 100, 200)
HAS_HINTS, NO_HINTS = "yes", "no"


def _blank(label):
    return [("", label)]


class QueueFilter(forms.Form):
    """Filters and search of the queue (SPEC §10); an unknown value is an error naming the field, not a crash.

    Without a status the queue shows what waits for review: that is where an editor starts.
    """

    status = forms.ChoiceField(label=_("Status"), required=False,
                               choices=[(WAITING_CHOICE, _("waiting for review")), (ANY_STATUS, _("any status"))]
                               + list(Task.Status.choices))
    kind = forms.ChoiceField(label=_("Kind"), required=False, choices=_blank(_("any kind")) + list(Task.Kind.choices))
    configuration = forms.ChoiceField(label=_("Configuration"), required=False)
    q = forms.CharField(label=_("Search"), required=False, max_length=200, strip=True,
                        widget=forms.TextInput(attrs={"type": "search", "id": "queue-search", "size": 28,
                                                      "placeholder": _("text, record, list, id…")}))
    batch = forms.ChoiceField(label=_("Batch"), required=False)
    hints = forms.ChoiceField(label=_("Hints"), required=False,
                              choices=[("", _("with or without hints")), (HAS_HINTS, _("with hints")),
                                       (NO_HINTS, _("without hints"))])
    not_run = forms.BooleanField(label=_("Checks not run"), required=False)
    size = forms.TypedChoiceField(label=_("Per page"), required=False, coerce=int, empty_value=None,
                                  choices=[("", "25")] + [(str(n), str(n)) for n in PAGE_SIZES[1:]])

    def __init__(self, *args, configurations=(), batches=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["configuration"].choices = _blank(_("any configuration")) + [(c, c) for c in configurations]
        self.fields["batch"].choices = _blank(_("any batch")) + [(str(b.pk), str(b)) for b in batches]

    def clean_status(self):
        return self.cleaned_data.get("status") or WAITING_CHOICE

    def scope(self) -> dict:
        """The valid filters, as their names and values (a bad one is shown as an error and left out)."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        scope = {name: data[name] for name in SCOPE_FIELDS if data.get(name)}
        if scope.get("not_run"):
            scope["not_run"] = "1"
        scope.setdefault("status", WAITING_CHOICE)
        return scope


def status_q(status: str) -> Q:
    """The statuses a queue filter value stands for."""
    if status == WAITING_CHOICE:
        return Q(status__in=WAITING)
    if status == ANY_STATUS or not status:
        return Q()
    return Q(status=status)


def search_q(text: str) -> Q:
    """What the search box finds: an id's beginning, the text (answer or edit), the field's record,
    the configuration, and the hints (list names, terms, rule lines, check names)."""
    text = text.strip()
    if not text:
        return Q()
    found = (Q(answer__icontains=text) | Q(edited_text__icontains=text) | Q(configuration__icontains=text)
             | Q(field__record__icontains=text) | Q(hints__icontains=text) | Q(refusal__icontains=text))
    compact = text.replace("-", "").lower()
    if 4 <= len(compact) <= 32 and all(c in "0123456789abcdef" for c in compact):
        found |= Q(pk__in=_ids_starting(compact))
    return found


def _ids_starting(prefix: str):
    """Ids are UUIDs: stored as 32 hex digits on SQLite, as uuid on PostgreSQL; compare their text."""
    as_text = Replace(Cast("id", output_field=CharField()), Value("-"), Value(""))
    return Task.objects.annotate(id_text=as_text).filter(id_text__startswith=prefix).values("pk")


def scope_q(scope: dict) -> Q:
    """The whole scope of a queue (status, kind, configuration, search) as one condition."""
    condition = status_q(scope.get("status", WAITING_CHOICE))
    for name in ("kind", "configuration"):
        if scope.get(name):
            condition &= Q(**{name: scope[name]})
    if scope.get("batch"):
        condition &= Q(batch_id=scope["batch"])
    if scope.get("hints") == HAS_HINTS:
        condition &= has_hints_q()
    elif scope.get("hints") == NO_HINTS:
        condition &= ~has_hints_q()
    if scope.get("not_run"):
        condition &= not_run_q()
    return condition & search_q(scope.get("q", ""))


class EditForm(forms.Form):
    text = forms.CharField(label=_("Edited text"), strip=False,
                           widget=forms.Textarea(attrs={"rows": 10, "class": "vLargeTextField gavel-edit"}))
