"""Evidence for administrators who are not engineers (issue 43): *Verify a published text* and *Export
evidence* in the admin, in words and in their language. Both answer from governance/evidence/export.py,
the same service as the API's verify and NDJSON stream; only administrators (superusers) see them.
"""
import csv
from datetime import datetime, time, timedelta

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import StreamingHttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.evidence import export, words
from governance.models import EvidenceRecord
from governance.records.permissions import is_administrator

MSG_ADMINS_ONLY = _("Only an administrator (superuser) may verify texts and export evidence: the records name "
                    "every configuration, consumer and editor.")
# A pasted text is at most this long (a published article fits; a database dump does not).
MAX_TEXT = 200_000
OUTCOMES = (("", _("any")), ("allowed", _("delivered")), ("allowed_with_hints", _("delivered with hints")))
REVIEWED = (("", _("any")), ("yes", _("reviewed by a person")), ("no", _("not reviewed")))
FORMATS = (("csv", _("CSV (a spreadsheet)")), ("ndjson", _("NDJSON (one JSON record a line, for archives)")))
CSV_COLUMNS = ("id", "at", "surface", "configuration", "also", "policy_version", "outcome", "checks",
               "verification", "correlation_id", "actor", "task", "review_decision", "reviewed_by", "reviewed_at",
               "edited", "text_hash", "key_id")


def _require_administrator(request) -> None:
    if not is_administrator(request.user):
        raise PermissionDenied(MSG_ADMINS_ONLY)


class VerifyForm(forms.Form):
    text = forms.CharField(label=_("The text as published"), max_length=MAX_TEXT, strip=False,
                           widget=forms.Textarea(attrs={"rows": 10, "cols": 80}),
                           help_text=_("Paste the whole text as your CMS stored it. Line breaks and spaces do not "
                                       "matter; any changed word, letter or punctuation mark does."))

    def clean_text(self):
        text = self.cleaned_data["text"]
        if not text.strip():
            raise forms.ValidationError(_("Paste a text to verify."))
        return text


class ExportForm(forms.Form):
    since = forms.DateField(label=_("From (date, inclusive)"), required=False,
                            widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label=_("Until (date, inclusive)"), required=False,
                            widget=forms.DateInput(attrs={"type": "date"}))
    surface = forms.ChoiceField(label=_("Where the text left Gavel"), required=False,
                                choices=(("", _("any")), *EvidenceRecord.Surface.choices))
    configuration = forms.CharField(label=_("Configuration"), required=False, max_length=100)
    outcome = forms.ChoiceField(label=_("Outcome"), required=False, choices=OUTCOMES)
    reviewed = forms.ChoiceField(label=_("Human review"), required=False, choices=REVIEWED)
    format = forms.ChoiceField(label=_("Format"), choices=FORMATS, initial="csv", widget=forms.RadioSelect)

    def clean(self):
        cleaned = super().clean()
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and until < since:
            raise forms.ValidationError({"until": _("The end date is before the start date.")})
        return cleaned

    def rows(self):
        """The records the form selects, oldest first, read in chunks when streamed."""
        data, zone = self.cleaned_data, timezone.get_current_timezone()
        filters = {name: data[name] for name in ("surface", "configuration", "outcome") if data.get(name)}
        if data.get("since"):
            filters["since"] = timezone.make_aware(datetime.combine(data["since"], time.min), zone)
        if data.get("until"):
            end = data["until"] + timedelta(days=1)
            filters["until"] = timezone.make_aware(datetime.combine(end, time.min), zone)
        rows = export.selected(**filters)
        if data.get("reviewed") == "yes":
            rows = rows.exclude(review_decision="")
        elif data.get("reviewed") == "no":
            rows = rows.filter(review_decision="")
        return rows


def verify_page(request):
    """Paste a text: which records match, in words (which policy version, which checks, which editor, when)."""
    _require_administrator(request)
    form = VerifyForm(request.POST or None)
    found = None
    if request.method == "POST" and form.is_valid():
        answer = export.verify(form.cleaned_data["text"])
        found = {"count": answer["count"], "text_hash": answer["text_hash"],
                 "records": [words.record_words(record) for record in answer["records"]]}
    return TemplateResponse(request, "admin/gavel/evidence_verify.html", {
        **admin.site.each_context(request), "title": _("Verify a published text"), "form": form, "found": found})


def export_page(request):
    """A form with a date range and filters; submitting it downloads the records as CSV or NDJSON."""
    _require_administrator(request)
    form = ExportForm(request.GET if "format" in request.GET else None)
    if form.is_bound and form.is_valid():
        rows, kind = form.rows(), form.cleaned_data["format"]
        stamp = timezone.localdate().isoformat()
        if kind == "ndjson":
            response = StreamingHttpResponse(export.ndjson_lines(rows), content_type="application/x-ndjson")
        else:
            response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="gavel-evidence-{stamp}.{kind}"'
        return response
    return TemplateResponse(request, "admin/gavel/evidence_export.html", {
        **admin.site.each_context(request), "title": _("Export evidence"), "form": form,
        "count": EvidenceRecord.objects.count()})


class _Line:
    """csv.writer's file: hands back the line it was given."""

    def write(self, value):
        return value


def csv_value(value) -> str:
    """A cell: a spreadsheet must not read a value as a formula (=, +, -, @ first)."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def csv_lines(rows):
    """The records as CSV, one line at a time, read in chunks: the same codes as the NDJSON and the API
    (stable for archives), checks as `check:result[:reason]` joined by `; `."""
    writer = csv.writer(_Line())
    yield "\ufeff" + writer.writerow(CSV_COLUMNS)  # the BOM: spreadsheets then read UTF-8
    for row in rows.iterator(chunk_size=export.CHUNK):
        record = export.as_json(row)
        review = record["review"] or {}
        checks = "; ".join(":".join(str(c[k]) for k in ("check", "result", "reason") if c.get(k))
                           for c in record["checks"])
        values = {**record, "also": " ".join(record["also"]), "checks": checks,
                  "review_decision": review.get("decision", ""), "reviewed_by": review.get("by", ""),
                  "reviewed_at": review.get("at") or "", "edited": "yes" if review.get("edited") else ""}
        yield writer.writerow([csv_value(values.get(column)) for column in CSV_COLUMNS])
