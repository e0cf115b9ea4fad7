from django.apps import AppConfig

from judging import model_calls


class GovernanceConfig(AppConfig):
    name = "governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from governance.records import signals  # noqa: F401  (policy version bumps)
        from governance.policy import versions  # noqa: F401  (each bump kept as a revision)
        from governance.evidence import key_check  # noqa: F401  (check --deploy: evidence under another key)
        # The call service reads the models, so it is imported once they are loaded; judges get it
        # handed in here and never import it (judging sits below governance.runs).
        from governance.runs import calls

        model_calls.install(calls)
        # The embedded default has no celery beat: its requests start the callback sweep when it is due.
        from django.core.signals import request_started

        from governance.work import embedded_sweep

        request_started.connect(embedded_sweep.on_request, dispatch_uid="gavel-embedded-callback-sweep")
