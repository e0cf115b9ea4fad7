from django.apps import AppConfig


class TermlistsConfig(AppConfig):
    name = "termlists"
    default_auto_field = "django.db.models.BigAutoField"
