"""The REST API (SPEC §11.1, `/api/v1/`): token auth, errors, serializers, views, the OpenAPI schema."""
