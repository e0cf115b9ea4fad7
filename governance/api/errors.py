"""One error body for every API error (SPEC §11.1), never a stack trace."""
import json
import logging
import re
import sys

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.utils.html import escape
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response

from governance.errors import (  # noqa: F401  (re-exported for the views)
    BadInput, BudgetExceeded, Conflict, GavelError, NotGranted, ProviderBusy, ProviderFailed, ProviderTimedOut,
    TooLarge, UnknownRecord, Unprocessable,
)
from governance.middleware import (
    RETRY_AFTER_UNAVAILABLE, error_body, error_response, is_gateway_path, is_json_path, is_outage, outage_page,
)
from governance.pages import admin_permission_denied

logger = logging.getLogger("gavel.api")


# The HTTP status of each domain error; the services never see these numbers.
STATUS_OF = {
    BadInput: status.HTTP_400_BAD_REQUEST,
    TooLarge: status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    NotGranted: status.HTTP_403_FORBIDDEN,
    UnknownRecord: status.HTTP_404_NOT_FOUND,
    Conflict: status.HTTP_409_CONFLICT,
    Unprocessable: status.HTTP_422_UNPROCESSABLE_ENTITY,
    BudgetExceeded: status.HTTP_429_TOO_MANY_REQUESTS,
    ProviderBusy: status.HTTP_429_TOO_MANY_REQUESTS,
    ProviderFailed: status.HTTP_502_BAD_GATEWAY,
    ProviderTimedOut: status.HTTP_504_GATEWAY_TIMEOUT,
}


def policy_refused(exc, message: str, fields: dict, *, text: bool = False) -> GavelError:
    """A policy document the import refused: 400 when it breaks the policy schema (its structure), 422 when it
    keeps it and what it says cannot be done (a reference to no record, a name given twice: SEMANTIC of
    governance/policy/schema.py). Every path is named either way. A document sent as YAML text (`text`) is
    422 either way: no JSON Schema says what a text holds."""
    kind = BadInput if exc.structural and not text else Unprocessable
    return kind(message, code="invalid_policy", fields=fields)


def status_of(exc: GavelError) -> int:
    for klass in type(exc).__mro__:
        if klass in STATUS_OF:
            return STATUS_OF[klass]
    return status.HTTP_400_BAD_REQUEST


def field_messages(detail) -> dict:
    """DRF's nested error detail → {"field.path": ["message", ...]} (the error shape's `fields`)."""
    fields: dict[str, list[str]] = {}

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif isinstance(node, list):
            if not node:
                return  # an item without errors, beside one that has them
            if all(not isinstance(item, (dict, list)) for item in node):
                fields.setdefault(path or "non_field_errors", []).extend(str(item) for item in node)
            else:
                for index, item in enumerate(node):
                    walk(item, f"{path}[{index}]")
        else:
            fields.setdefault(path or "non_field_errors", []).append(str(node))

    walk(detail, "")
    return fields


_STATUS_CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "too_large",
    415: "unsupported_media_type",
    429: "throttled",
}


def exception_handler(exc, context):
    """Turn any exception raised in an API view into the one error shape."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)

    if isinstance(exc, GavelError):
        response = Response(error_body(exc.code, exc.message, exc.fields), status=status_of(exc))
        if isinstance(exc, ProviderBusy):
            response["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, exceptions.ValidationError):
        fields = field_messages(exc.detail)
        return Response(error_body("invalid", "The request has invalid fields.", fields), status=400)
    if isinstance(exc, exceptions.ParseError):
        return Response(error_body("malformed", f"The body is not valid JSON: {exc.detail}"), status=400)
    if isinstance(exc, exceptions.UnsupportedMediaType):
        # A body Gavel cannot read is bad input, whatever it claimed to be.
        return Response(error_body("malformed", "Send the body as JSON (Content-Type: application/json)."), status=400)
    if isinstance(exc, exceptions.Throttled):
        response = Response(
            error_body("throttled", "Too many requests; try again later.", {}), status=429
        )
        if exc.wait is not None:
            response["Retry-After"] = str(int(exc.wait) + 1)
        return response
    if isinstance(exc, exceptions.APIException):
        code = _STATUS_CODES.get(exc.status_code, "error")
        response = Response(error_body(code, str(exc.detail)), status=exc.status_code)
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            response["WWW-Authenticate"] = 'Bearer realm="gavel"'
        return response
    if is_outage(exc):
        # The database is down or restarting: the client may retry; the connection is dropped at the
        # end of the request and the next one reconnects (CONN_HEALTH_CHECKS).
        logger.error("database unreachable (request %s): %s", getattr(context.get("request"), "request_id", "-"),
                     type(exc).__name__)
        return _as_drf(error_response(503))
    logger.exception("unhandled API error", exc_info=exc)
    return Response(error_body("server_error", "Gavel could not complete the request; it has been logged."), status=500)


def _as_drf(response) -> Response:
    drf = Response(json.loads(response.content), status=response.status_code)
    for header in ("Retry-After",):
        if header in response:
            drf[header] = response[header]
    return drf


# Django's own error views (handler400 ... handler500 in governance/urls.py): the one
# error shape under /api/, /openai/ and /healthz, Django's pages everywhere else.


def bad_request(request, exception):
    if isinstance(exception, DisallowedHost):
        return disallowed_host(request)
    if is_json_path(request.path):
        return error_response(400, request.path)
    return defaults.bad_request(request, exception)


# What of a refused Host header is repeated back: host name characters only, the rest shown as "?".
_NOT_HOST_CHARACTERS = re.compile(r"[^A-Za-z0-9.:\[\]_-]")


def disallowed_host(request):
    """A Host that ALLOWED_HOSTS does not name: the usual slip of a new installation. The answer and
    the log say so (Django's own line names only the header), on every path in its own shape: plain text
    (nothing to escape: only host name characters are repeated), JSON, OpenAI's or Anthropic's error."""
    host = _NOT_HOST_CHARACTERS.sub("?", request.META.get("HTTP_HOST", "")[:200])
    logger.warning("refused a request for host %r: it is not in ALLOWED_HOSTS (%s); add it there",
                   host, ",".join(settings.ALLOWED_HOSTS) or "empty")
    message = (f"The host {host} is not in ALLOWED_HOSTS; an administrator adds it there (the environment "
               "variable ALLOWED_HOSTS, comma-separated).")
    if is_json_path(request.path):
        return error_response(400, request.path, message)
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")


def permission_denied(request, exception):
    if is_json_path(request.path):
        return error_response(403, request.path)
    if request.path.startswith("/admin/"):
        return admin_permission_denied(request, exception)
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception):
    if is_json_path(request.path):
        return error_response(404, request.path)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if is_outage(sys.exc_info()[1]):
        # Raised in a view or in a middleware (the session, the user): the database is unreachable.
        logger.error("database unreachable on %s (request %s)", request.path, getattr(request, "request_id", "-"))
        return error_response(503, request.path) if is_json_path(request.path) else outage_page()
    if not is_json_path(request.path):
        return defaults.server_error(request)
    # Django has logged the trace (logger django.request); this line ties it to the request id.
    logger.error("server error on %s (request %s)", request.path, getattr(request, "request_id", "-"))
    return error_response(500, request.path)
