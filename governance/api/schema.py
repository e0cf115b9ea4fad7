"""OpenAPI description of Gavel's token authentication, and component names as a person would write them
(drf-spectacular)."""
import json

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


# drf-spectacular appends "Request" to request components (COMPONENT_SPLIT_REQUEST), so a serializer already
# called ScreeningRequest became "ScreeningRequestRequest" (issue 11): drop the doubled suffix everywhere.
def natural_component_names(result, generator, request, public):
    schemas = result.get("components", {}).get("schemas", {})
    renames = {name: name[: -len("Request")] for name in schemas
               if name.endswith("RequestRequest") and name[: -len("Request")] not in schemas}
    if not renames:
        return result
    text = json.dumps(result)
    for old, new in renames.items():
        text = text.replace(f'"#/components/schemas/{old}"', f'"#/components/schemas/{new}"')
    result = json.loads(text)
    schemas = result["components"]["schemas"]
    for old, new in renames.items():
        schemas[new] = schemas.pop(old)
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    return result
