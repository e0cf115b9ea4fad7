"""The example form's pickers (SPEC §12.1): configurations, kinds and findings chosen from what exists.

A finding is picked in one row: its check, then the term list, snippet or pattern rule it names, then
(optionally) the term or the snippet's rule line. The rows are stored in the JSON shape the policy file
writes (`{check: term_list, list, term}`, …); the field refuses a name that does not exist and lists the
names that do. Without JavaScript every option shows; example-findings.js narrows them to the check.
"""
from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.forms.fields import InvalidJSONInput
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from governance.models import Configuration
from governance.policy.examples import CHECKS
from governance.policy.messages import MSG_JSON_TOO_DEEP
from governance.screening.pipeline import KINDS
from governance.screening.text import MAX_JSON_DEPTH, nesting_beyond
from snippets.models import PatternRule, Snippet
from termlists.matcher import parse_entries, parse_terms
from termlists.models import TermList

EXTRA_ROWS = 2
CHECK_WORDS = {
    "term_list": _("term list"),
    "rules_judge": _("rule of a snippet (rules judge)"),
    "pattern_rules": _("pattern rule"),
    "citations": _("cited pattern rule (citations)"),
    "field": _("field fill (length, format)"),
}
KIND_WORDS = {
    "completion": _("completion"),
    "queued_task": _("queued task"),
    "field_fill": _("field fill"),
    "image_description": _("image description"),
    "internal": _("internal"),
}
MSG_UNKNOWN = _("Unknown %(what)s: %(name)s. Choose one of: %(names)s.")
MSG_NONE_EXIST = _("Unknown %(what)s: %(name)s. None exists yet: add one first.")
MSG_PICK_TARGET = _("Choose the %(what)s this finding names.")


def configuration_names() -> list[str]:
    return list(Configuration.objects.order_by("identifier").values_list("identifier", flat=True))


def known_names() -> dict:
    """What a finding may name, read now: term lists with their terms, snippets with their rule lines,
    pattern rules."""
    lists = {}
    for name, forbidden, required in TermList.objects.order_by("name").values_list("name", "forbidden", "required"):
        lists[name] = [term for term, _suggestion in parse_entries(forbidden)] + parse_terms(required)
    snippets = {s.identifier: s.numbered_lines() for s in Snippet.objects.order_by("sort", "identifier")}
    rules = list(PatternRule.objects.order_by("identifier").values_list("identifier", flat=True))
    return {"term_list": lists, "rules_judge": snippets, "pattern_rules": rules, "citations": rules}


def unknown(what, name, names) -> str:
    if not names:
        return str(MSG_NONE_EXIST) % {"what": what, "name": name}
    return str(MSG_UNKNOWN) % {"what": what, "name": name, "names": ", ".join(str(n) for n in names)}


class NamedChoiceField(forms.ChoiceField):
    """A choice among names that exist now; the error for any other names every valid one."""

    def __init__(self, *, names, what, keep=None, **kwargs):
        self.what = what
        super().__init__(**kwargs)
        self.names = list(names)
        choices = [(n, n) for n in self.names]
        if keep and keep not in self.names:
            # The stored value outlives a removed record (an example is kept, its test then errs): shown,
            # marked, and refused only when saved as it is.
            choices.append((keep, gettext("%(name)s (does not exist)") % {"name": keep}))
        self.choices = ([("", "---------")] if not self.required else []) + choices

    def validate(self, value):
        if value in self.empty_values:
            if self.required:
                raise ValidationError(self.error_messages["required"], code="required")
            return
        if value not in self.names:
            raise ValidationError(unknown(self.what, value, self.names), code="invalid_choice")


class NamedMultipleChoiceField(forms.MultipleChoiceField):
    def __init__(self, *, names, what, **kwargs):
        self.what = what
        super().__init__(**kwargs)
        self.names = list(names)
        self.choices = [(n, n) for n in self.names]

    def to_python(self, value):
        return [v for v in super().to_python(value) if v]

    def validate(self, value):
        for name in value:
            if name not in self.names:
                raise ValidationError(unknown(self.what, name, self.names), code="invalid_choice")


def kind_choices() -> list[tuple[str, str]]:
    # The policy file's word beside the reader's, unless they are the same word.
    return [(kind, kind if str(KIND_WORDS.get(kind, kind)) == kind else f"{KIND_WORDS[kind]} ({kind})")
            for kind in KINDS]


# --- findings -------------------------------------------------------------------------------


class FindingsWidget(forms.Widget):
    """Rows of (check, list/snippet/rule, term/line), one per finding, plus empty rows to add one."""

    class Media:
        js = ["governance/example-findings.js"]

    def value_from_datadict(self, data, files, name):
        rows = []
        index = 0
        while f"{name}-{index}-check" in data:
            rows.append({"check": data.get(f"{name}-{index}-check", ""),
                         "target": data.get(f"{name}-{index}-target", ""),
                         "detail": data.get(f"{name}-{index}-detail", "")})
            index += 1
        return rows

    def value_omitted_from_data(self, data, files, name):
        return f"{name}-0-check" not in data

    def render(self, name, value, attrs=None, renderer=None):
        known = known_names()
        rows = [row for row in (_as_row(v) for v in (value or []) if isinstance(v, dict)) if any(row.values())]
        rows += [{"check": "", "target": "", "detail": ""}] * EXTRA_ROWS
        header = format_html("<thead><tr><th>{}</th><th>{}</th><th>{}</th></tr></thead>", gettext("check"),
                             gettext("term list, snippet or pattern rule"), gettext("term or rule line (empty: any)"))
        body = format_html_join("", "<tr class='gavel-finding'>{}</tr>",
                                ((_row_cells(name, index, row, known),) for index, row in enumerate(rows)))
        return format_html("<table class='gavel-findings' id='{}'>{}<tbody>{}</tbody></table>",
                           (attrs or {}).get("id", f"id_{name}"), header, body)


def _as_row(finding: dict) -> dict:
    """A stored finding (or a row sent back with an error) as (check, target, detail)."""
    if "target" in finding:
        return {"check": finding.get("check", ""), "target": finding.get("target", ""),
                "detail": str(finding.get("detail", ""))}
    check = finding.get("check", "")
    target = finding.get("list") or finding.get("snippet") or (finding.get("rule") if check in (
        "pattern_rules", "citations") else "") or ""
    detail = finding.get("term") if check == "term_list" else (finding.get("rule") if check == "rules_judge" else "")
    return {"check": check, "target": str(target), "detail": "" if detail is None else str(detail)}


def _option(value, label, selected, **data) -> str:
    extra = format_html_join("", ' data-{}="{}"', data.items())
    return format_html('<option value="{}"{}{}>{}</option>', value, mark_safe(" selected") if selected else "",
                       extra, label)


def _row_cells(name: str, index: int, row: dict, known: dict) -> str:
    prefix = f"{name}-{index}"
    checks = _option("", "---------", not row["check"])
    checks += mark_safe("".join(_option(c, CHECK_WORDS[c], row["check"] == c) for c in CHECKS))
    targets = [_option("", "---------", not row["target"])]
    details = [_option("", gettext("any"), not row["detail"])]
    seen_target = seen_detail = False
    for check, label in (("term_list", gettext("term lists")), ("rules_judge", gettext("snippets")),
                         ("pattern_rules", gettext("pattern rules")), ("citations", gettext("cited pattern rules"))):
        names = known[check]
        options = []
        for target in names:
            chosen = row["check"] == check and row["target"] == target
            seen_target = seen_target or chosen
            options.append(_option(target, target, chosen, check=check))
            if check == "term_list":
                pairs = [(term, term) for term in names[target]]
            elif check == "rules_judge":
                pairs = [(str(no), f"{target} {no}: {line[:60]}") for no, line in names[target]]
            else:
                pairs = []
            for value, label in pairs:
                picked = chosen and row["detail"] == value
                seen_detail = seen_detail or picked
                details.append(_option(value, label, picked, check=check, target=target))
        targets.append(format_html('<optgroup label="{}" data-check="{}">{}</optgroup>', label, check,
                                   mark_safe("".join(options))))
    if row["target"] and not seen_target:
        targets.append(_option(row["target"], gettext("%(name)s (does not exist)") % {"name": row["target"]}, True))
    if row["detail"] and not seen_detail:
        details.append(_option(row["detail"], gettext("%(name)s (does not exist)") % {"name": row["detail"]}, True))
    return format_html(
        '<td><select name="{0}-check" class="gavel-finding-check" aria-label="{4}">{1}</select></td>'
        '<td><select name="{0}-target" class="gavel-finding-target" aria-label="{5}">{2}</select></td>'
        '<td><select name="{0}-detail" class="gavel-finding-detail" aria-label="{6}">{3}</select></td>',
        prefix, checks, mark_safe("".join(targets)), mark_safe("".join(details)), gettext("check"),
        gettext("term list, snippet or pattern rule"), gettext("term or rule line (empty: any)"))


class ToolCallsField(forms.JSONField):
    """An example's tool calls as JSON, their nesting read before they are parsed (issue 41): a list of calls
    holds each call's arguments two levels down, and those may nest as deep as the screening API takes."""

    @staticmethod
    def too_deep(value) -> bool:
        return isinstance(value, str) and nesting_beyond(value, MAX_JSON_DEPTH + 2) is not None

    def to_python(self, value):
        if self.too_deep(value):
            raise forms.ValidationError(MSG_JSON_TOO_DEEP, code="too_deep")
        try:
            return super().to_python(value)
        except RecursionError as exc:  # malformed past what the depth reading follows: still no 500
            raise forms.ValidationError(MSG_JSON_TOO_DEEP, code="too_deep") from exc

    def bound_data(self, data, initial):
        if self.too_deep(data):  # shown again as it was sent, never parsed
            return InvalidJSONInput(data)
        return super().bound_data(data, initial)


class FindingsField(forms.Field):
    """Findings picked row by row, stored as the policy file writes them; unknown names refused by name."""

    widget = FindingsWidget

    def __init__(self, *, encoder=None, decoder=None, **kwargs):
        # A model JSONField hands its encoder and decoder to its form field; the rows need neither.
        kwargs["required"] = False
        super().__init__(**kwargs)

    def to_python(self, value) -> list[dict]:
        if not value:
            return []
        known = known_names()
        found, errors = [], []
        for number, row in enumerate(value, start=1):
            if not isinstance(row, dict) or "target" not in row:
                found.append(row)  # a stored finding, already in the file's shape
                continue
            check, target, detail = row["check"].strip(), row["target"].strip(), row["detail"].strip()
            if not check:
                if target or detail:
                    errors.append(gettext("Row %(row)d: choose a check.") % {"row": number})
                continue
            try:
                found.append(_finding(check, target, detail, known))
            except ValidationError as exc:
                errors.extend(gettext("Row %(row)d: %(error)s") % {"row": number, "error": m} for m in exc.messages)
        if errors:
            raise ValidationError(errors)
        return found

    def has_changed(self, initial, data):
        try:
            return (initial or []) != self.to_python(data)
        except ValidationError:
            return True


def _finding(check: str, target: str, detail: str, known: dict) -> dict:
    if check not in CHECKS:
        raise ValidationError(unknown(gettext("check"), check, CHECKS))
    if check == "field":
        return {"check": "field"}
    names = known[check]
    what = {"term_list": gettext("term list"), "rules_judge": gettext("snippet"),
            "pattern_rules": gettext("pattern rule"), "citations": gettext("pattern rule")}[check]
    if not target:
        if check == "citations":
            return {"check": "citations"}
        raise ValidationError(str(MSG_PICK_TARGET) % {"what": what})
    if target not in names:
        raise ValidationError(unknown(what, target, list(names)))
    if check == "term_list":
        finding = {"check": check, "list": target}
        if detail:
            if detail not in names[target]:
                raise ValidationError(gettext("Term list %(list)s has no term %(term)s. Its terms: %(terms)s.") % {
                    "list": target, "term": detail, "terms": ", ".join(names[target]) or "—"})
            finding["term"] = detail
        return finding
    if check == "rules_judge":
        finding = {"check": check, "snippet": target}
        if detail:
            lines = [no for no, _line in names[target]]
            if not detail.isdigit() or int(detail) not in lines:
                raise ValidationError(gettext("Snippet %(snippet)s has no rule on line %(line)s. Its rule lines: "
                                              "%(lines)s.") % {"snippet": target, "line": detail,
                                                               "lines": ", ".join(map(str, lines)) or "—"})
            finding["rule"] = int(detail)
        return finding
    return {"check": check, "rule": target}
