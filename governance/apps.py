from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from governance.records import signals  # noqa: F401  (policy version bumps)
