"""Admin-only fields (SPEC §2.3): shown read-only to a non-administrator, refused whole in a POST."""
from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _

from governance.models import LINK_FIELDS
from governance.records import writes
from governance.records.permissions import admin_only_fields, field_label, is_administrator, require_admin_for


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
