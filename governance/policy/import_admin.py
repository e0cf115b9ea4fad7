"""Policy import and export in the admin (SPEC §1, §11.2), for administrators: export downloads the YAML;
import takes an upload or a pasted document, shows the dry run, and applies it on confirmation, atomically.

Thin views over governance.policy: the same validation, report and atomicity as `manage.py import_policy`.
"""
import yaml
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance import policy
from governance.records.permissions import is_administrator
from governance.policy import release, release_paths
from governance.policy import replay as replaying
from governance.policy.loading import load_yaml

MSG_ADMINS_ONLY = gettext_lazy("Only an administrator (superuser) may import or export the policy file: it holds "
                               "every admin-only field.")


MSG_IMPORT_TITLE = gettext_lazy("Imported policy file")
MSG_IMPORT_DRAFTED = gettext_lazy("Four eyes: nothing was released. The file is now a draft with %(count)d "
                                  "change(s); another approver publishes it.")


class PolicyImportForm(forms.Form):
    upload = forms.FileField(label=gettext_lazy("Policy file"), required=False,
                             help_text=gettext_lazy("A YAML (or JSON) policy document, in the format of docs/policy.md."))
    text = forms.CharField(label=gettext_lazy("…or paste it here"), required=False, strip=False,
                           widget=forms.Textarea(attrs={"rows": 18, "cols": 100, "spellcheck": "false",
                                                        "class": "gavel-body"}))
    prune = forms.BooleanField(label=gettext_lazy("Remove records of the sections in the file that it no longer "
                                                  "names (--prune)"), required=False)

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("upload")
        if upload:
            try:
                cleaned["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError({"upload": _("The file is not UTF-8 text. Save it as UTF-8 and upload "
                                                         "it again.")}) from None
        if not (cleaned.get("text") or "").strip():
            raise forms.ValidationError(_("Upload a policy file or paste one."))
        try:
            cleaned["document"] = load_yaml(cleaned["text"])
        except yaml.YAMLError as exc:
            raise forms.ValidationError({"text": _("The document does not parse as YAML: %(error)s") % {
                "error": str(exc)}}) from None
        return cleaned


def _require_administrator(request) -> None:
    if not is_administrator(request.user):
        raise PermissionDenied(MSG_ADMINS_ONLY)


def policy_export(request):
    """Download the whole policy as YAML."""
    _require_administrator(request)
    response = HttpResponse(policy.export_yaml(), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="gavel-policy-{timezone.localdate():%Y-%m-%d}.yaml"'
    return response


def policy_import(request):
    """Dry run first; apply only when the administrator confirms the document they saw the report of."""
    _require_administrator(request)
    form = PolicyImportForm(request.POST or None, request.FILES or None)
    report = errors = plan = None
    if request.method == "POST" and form.is_valid():
        apply = "_apply" in request.POST
        document, prune = form.cleaned_data["document"], form.cleaned_data["prune"]
        try:
            if apply:
                # The gate replays the same window as the dry run did: a refusal re-shows the report the
                # administrator saw one click before, not an empty replay (issue 27).
                released = release_paths.release_or_draft(
                    document, actor=request.user, source="admin", prune=prune, title=str(MSG_IMPORT_TITLE),
                    allow_regressions=bool(request.POST.get("allow_regressions")), replay=replaying.DEFAULT_REPLAY)
                if isinstance(released, release_paths.Proposed):
                    # Four eyes: the file is a draft another approver publishes; its page is the next step.
                    messages.success(request, MSG_IMPORT_DRAFTED % {"count": len(released.draft.changes)})
                    return redirect("admin:governance_policydraft_change", released.draft.pk)
                report, plan = released
            else:
                plan = release.plan_release(document, prune=prune)
                report = plan.report
        except release.ExamplesRegressed as exc:
            messages.error(request, str(exc))
            plan = exc.plan
            report = plan.report
            apply = False
        except policy.PolicyInvalid as exc:
            errors = sorted(exc.errors.items())
        if report is not None and apply:
            messages.success(request, _("Policy imported: %(summary)s") % {"summary": _summary(report)})
            return redirect("gavel_policy_import")
    context = {
        **admin.site.each_context(request),
        "title": _("Import the policy file"),
        "form": form,
        "report": report,
        "summary": _summary(report) if report else "",
        "errors": errors,
        "rows": _rows(report) if report else [],
        "plan": plan,
        "replay_changes": sorted(plan.replay.changes.items()) if plan else [],
        "replay_rules": sorted(plan.replay.by_rule.items()) if plan else [],
    }
    return TemplateResponse(request, "admin/gavel/policy_import.html", context)


def _summary(report) -> str:
    return _("%(created)d created, %(changed)d changed, %(removed)d removed, %(unchanged)d unchanged.") % {
        "created": len(report.created), "changed": len(report.changed), "removed": len(report.removed),
        "unchanged": len(report.unchanged)}


def _rows(report) -> list[tuple[str, str, str]]:
    """(what happens, record, keys) for the dry run's table."""
    rows = [(_("create"), entry, "") for entry in report.created]
    rows += [(_("change"), entry, ", ".join(report.changed_keys.get(entry, ()))) for entry in report.changed]
    rows += [(_("remove"), entry, "") for entry in report.removed]
    return rows
