"""OpenAPI description of Gavel's token authentication (drf-spectacular)."""
from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ConsumerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "governance.api.auth.ConsumerTokenAuthentication"
    name = "ConsumerToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A consumer token from `manage.py create_consumer` (`Token <token>` is accepted too).",
        }
