"""Admin for consumers and their tokens (SPEC §3)."""
from django import forms
from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from governance.models import Consumer
from governance.models import GRANTABLE_KINDS
from governance.records.permissions import is_administrator


# --- Consumers ------------------------------------------------------------------


class ConsumerForm(forms.ModelForm):
    """The kinds a consumer may state, as boxes: the free kinds are always allowed, so only the kinds
    that need a grant are offered (SPEC §3)."""

    kinds = forms.MultipleChoiceField(
        label=_("kinds"), required=False, widget=forms.CheckboxSelectMultiple,
        choices=[(kind, kind) for kind in GRANTABLE_KINDS],
        help_text=_("Kinds this consumer may state besides completion, queued_task and field_fill (always "
                    "allowed). internal is searched for forbidden terms only and never judged; "
                    "image_description is never asked for required terms."))

    class Meta:
        model = Consumer
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "kinds" in self.fields and self.instance.pk:
            self.initial["kinds"] = [k for k in (self.instance.kinds or ()) if k in GRANTABLE_KINDS]

    def clean_kinds(self):
        return ["completion", *(k for k in GRANTABLE_KINDS if k in self.cleaned_data.get("kinds", ()))]


@admin.register(Consumer)
class ConsumerAdmin(admin.ModelAdmin):
    """API consumers. Tokens are issued on the command line; only administrators change a consumer."""

    list_display = ("name", "token_prefix", "is_admin", "configuration_list", "is_active_display", "created_at",
                    "revoked_at")
    list_filter = ("is_admin", ("revoked_at", admin.EmptyFieldListFilter), "configurations")
    search_fields = ("name", "token_prefix")
    ordering = ("name",)
    fields = ("name", "token_prefix", "is_admin", "configurations", "kinds", "throttle_rate", "blocks_as", "hints_as",
              "created_at", "revoked_at")
    readonly_fields = ("token_prefix", "created_at", "revoked_at")
    filter_horizontal = ("configurations",)
    actions = ["revoke"]
    form = ConsumerForm

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("configurations")

    @admin.display(description=_("configurations"))
    def configuration_list(self, obj):
        return ", ".join(c.identifier for c in obj.configurations.all()) or "—"

    @admin.display(description=_("active"), boolean=True, ordering="revoked_at")
    def is_active_display(self, obj):
        return obj.is_active

    def has_add_permission(self, request):
        # A token is shown once, on the command line: `manage.py create_consumer`.
        return False

    # A consumer's grants and its administrator flag reach the policy through
    # the API (PUT /api/v1/policy), so changing a consumer is an administrator's act.
    def has_change_permission(self, request, obj=None):
        return is_administrator(request.user)

    def has_delete_permission(self, request, obj=None):
        return is_administrator(request.user)

    @admin.action(description=_("Revoke the selected consumers' tokens"), permissions=["change"])
    def revoke(self, request, queryset):
        count = queryset.revoke()
        self.message_user(
            request, ngettext("%d token revoked.", "%d tokens revoked.", count) % count, messages.SUCCESS
        )
