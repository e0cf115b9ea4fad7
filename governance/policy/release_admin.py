"""Policy releases in the admin (SPEC §12): the *Test the policy* page and the *Policy history*
page (versions, a diff between two, restore as a draft). Thin views over governance.policy.release.
"""
import yaml
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance import policy
from governance.records.permissions import is_administrator
from governance.policy import proposals, release, versions
from governance.policy.testing import JUDGE_MODES
from governance.policy.loading import load_yaml

MSG_HISTORY_ADMINS_ONLY = gettext_lazy("Only administrators and policy editors who may work with drafts see and "
                                       "restore policy versions.")


class PolicyTestForm(forms.Form):
    judges = forms.ChoiceField(
        label=gettext_lazy("Judges"), initial="cached",
        choices=[("cached", gettext_lazy("reuse kept verdicts (verdict cache)")),
                 ("live", gettext_lazy("ask every judge again")), ("skip", gettext_lazy("ask no judge"))])
    only = forms.CharField(label=gettext_lazy("Only these examples"), required=False,
                           help_text=gettext_lazy("Names separated by commas; empty tests every example."))
    draft = forms.CharField(
        label=gettext_lazy("Draft policy file (optional)"), required=False, strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 100, "spellcheck": "false", "class": "gavel-body"}),
        help_text=gettext_lazy("Paste a policy file to test it instead of the current policy; nothing is written. "
                               "Administrators only."))

    def clean_draft(self):
        text = self.cleaned_data.get("draft") or ""
        if not text.strip():
            return None
        try:
            return load_yaml(text)
        except yaml.YAMLError as exc:
            raise forms.ValidationError(_("The document does not parse as YAML: %(error)s") % {"error": str(exc)})


def _may_test(user) -> bool:
    return is_administrator(user) or (user.is_active and user.is_staff and user.has_perm("governance.view_policyexample"))


def policy_test(request):
    """Screen every example and show the per-example and per-rule tables."""
    if not _may_test(request.user):
        raise PermissionDenied
    form = PolicyTestForm(request.POST or None)
    report = errors = None
    if request.method == "POST" and form.is_valid():
        draft = form.cleaned_data["draft"]
        if draft is not None and not is_administrator(request.user):
            raise PermissionDenied
        names = [n.strip() for n in form.cleaned_data["only"].split(",") if n.strip()] or None
        try:
            report = release.test_policy(draft=draft, only=names, judges=form.cleaned_data["judges"])
        except policy.PolicyInvalid as exc:
            errors = sorted(exc.errors.items())
        except release.UnknownRecord as exc:
            form.add_error("only", str(exc))
    if not request.user.is_superuser and "draft" in form.fields:
        del form.fields["draft"]
    context = {**admin.site.each_context(request), "title": _("Test the policy"), "form": form, "report": report,
               "errors": errors, "judge_modes": JUDGE_MODES}
    return TemplateResponse(request, "admin/gavel/policy_test.html", context)


def may_see_history(user) -> bool:
    """Administrators, and policy editors who work with drafts (their restore is a draft, not a release)."""
    return is_administrator(user) or (user.is_active and user.is_staff and user.has_perm("governance.view_policydraft"))


def policy_history(request):
    """The kept versions; the difference between two; restore one as a draft, previewed before it is published."""
    if not may_see_history(request.user):
        raise PermissionDenied(MSG_HISTORY_ADMINS_ONLY)
    if request.method == "POST" and "restore" in request.POST:
        if not (is_administrator(request.user) or request.user.has_perm("governance.add_policydraft")):
            raise PermissionDenied(MSG_HISTORY_ADMINS_ONLY)
        try:
            number = int(request.POST["restore"])
        except ValueError:
            number = 0
        try:
            draft = proposals.draft_from_version(number, request.user)
        except release.UnknownRecord as exc:
            messages.error(request, str(exc))
        except policy.PolicyInvalid as exc:
            messages.error(request, _("Version %(number)s cannot be imported as it stands: %(errors)s") % {
                "number": number, "errors": "; ".join(f"{p}: {' '.join(m)}" for p, m in exc.errors.items())})
        else:
            # Restore is a draft (SPEC §12.5): its page previews it, including what it would remove.
            messages.success(request, _("Version %(number)s is now a draft: check what it changes and removes, "
                                        "then submit or publish it. Nothing is live yet.") % {"number": number})
            return redirect("admin:governance_policydraft_change", draft.pk)
        return redirect("gavel_policy_history")
    rows = versions.history(200)
    numbers = [r.number for r in rows]
    diff_lines, a, b = None, request.GET.get("a"), request.GET.get("b")
    if a and b:
        try:
            text = versions.diff(int(a), int(b))
        except ValueError:
            text = None
        if text is None:
            messages.error(request, _("Choose two kept versions."))
        else:
            diff_lines = [(_line_kind(line), line.rstrip("\n")) for line in text.splitlines(keepends=True)]
    elif len(numbers) >= 2:
        a, b = str(numbers[1]), str(numbers[0])
    context = {**admin.site.each_context(request), "title": _("Policy history"), "rows": rows, "a": a, "b": b,
               "diff_lines": diff_lines, "numbers": numbers,
               "may_restore": is_administrator(request.user) or request.user.has_perm("governance.add_policydraft")}
    return TemplateResponse(request, "admin/gavel/policy_history.html", context)


def _line_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "added", "-": "removed"}.get(line[:1], "same")
