"""Bulk actions of the admin (issue 11): activate, deactivate, report mode, for term lists and snippets.

Each record is saved, not UPDATEd, so its history row names the person; the whole action is one policy
edit (one version bump). Term lists and snippets hold no admin-only field (SPEC §2.3); were one named
here, `writes.save_record` would still refuse it.
"""
from django.contrib import admin, messages
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from governance.models import one_bump
from governance.records.writes import save_record


def _set(modeladmin, request, queryset, **values):
    changed = 0
    with transaction.atomic(), one_bump():
        for record in queryset.select_for_update():
            if all(getattr(record, name) == value for name, value in values.items()):
                continue
            record._history_user = request.user
            save_record(request.user, record, values)
            changed += 1
    unchanged = queryset.count() - changed
    modeladmin.message_user(request, ngettext("%(n)d record changed", "%(n)d records changed", changed)
                            % {"n": changed} + (ngettext("; %(n)d already so.", "; %(n)d already so.", unchanged)
                                                % {"n": unchanged} if unchanged else "."), messages.SUCCESS)


@admin.action(description=_("Activate the selected records"), permissions=["change"])
def activate(modeladmin, request, queryset):
    _set(modeladmin, request, queryset, is_active=True)


@admin.action(description=_("Deactivate the selected records"), permissions=["change"])
def deactivate(modeladmin, request, queryset):
    _set(modeladmin, request, queryset, is_active=False)


@admin.action(description=_("Switch the selected term lists to report mode (shadow: hints, no block)"),
              permissions=["change"])
def report_mode(modeladmin, request, queryset):
    _set(modeladmin, request, queryset, mode="report")


@admin.action(description=_("Switch the selected term lists to block mode"), permissions=["change"])
def block_mode(modeladmin, request, queryset):
    _set(modeladmin, request, queryset, mode="block")
