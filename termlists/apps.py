from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TermlistsConfig(AppConfig):
    name = "termlists"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = _("Term lists")  # the admin's section heading, in the reader's language
