from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SnippetsConfig(AppConfig):
    name = "snippets"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = _("Snippets")  # the admin's section heading, in the reader's language
