"""The consumer token as Anthropic's clients send it: the `x-api-key` header (SPEC §11.7)."""
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from governance.api.auth import consumer_by_token_hash
from governance.models import Consumer


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`x-api-key: <consumer token>`; without that header the next class reads `Authorization: Bearer`."""

    def authenticate(self, request):
        token = request.META.get("HTTP_X_API_KEY")
        if token is None:
            return None
        token = token.strip()
        if not token or not token.isascii() or " " in token:
            raise exceptions.AuthenticationFailed(_("The token is not valid."))
        consumer = consumer_by_token_hash(Consumer.hash_token(token))
        if consumer is None or not consumer.is_active:
            raise exceptions.AuthenticationFailed(_("The token is not valid or has been revoked."))
        return consumer, consumer

    def authenticate_header(self, request):
        return 'Bearer realm="gavel"'


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "governance.protocols.anthropic.auth.ApiKeyAuthentication"
    name = "AnthropicApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "x-api-key",
                "description": "A consumer token, as Anthropic's clients send their key (Bearer works too)."}
