"""Request ids on every response, JSON errors instead of HTML pages under /api/, /openai/, /anthropic/ and /healthz,
and the plain outage page on every other path while the database is unreachable."""
import logging
import re
import sys
import uuid

from django.core.exceptions import SuspiciousOperation
from django.core.signals import got_request_exception
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape
from django.utils.translation import gettext, gettext_lazy

from governance.protocols.anthropic.errors import anthropic_error
from governance.protocols.openai_chat.errors import openai_error

logger = logging.getLogger("gavel.request")
# What a client's X-Request-ID may be to be echoed; anything else is replaced by a fresh id (SPEC §11.1).
_SAFE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")

SERVER_ERROR_MESSAGE = "Gavel could not complete the request; it has been logged."
# The error a status becomes when Django answered it with a page of its own.
HTTP_ERRORS = {
    400: ("bad_request", "The request could not be read."),
    403: ("forbidden", "This request is not allowed."),
    404: ("not_found", "No such endpoint."),
    413: ("too_large", "The request body is too large."),
    500: ("server_error", SERVER_ERROR_MESSAGE),
    503: ("unavailable", "A service Gavel needs is unreachable; try again shortly."),
}
# Seconds a client is asked to wait after a 503 (the database unreachable, e.g. restarting).
RETRY_AFTER_UNAVAILABLE = 5


def error_body(code: str, message: str, fields: dict | None = None) -> dict:
    """The one error body shape of SPEC §11.1."""
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def is_json_path(path: str) -> bool:
    """Paths whose every answer, errors included, is JSON (SPEC §11.1, §11.5)."""
    return path.startswith(("/api/", "/healthz", "/openai/", "/v1/", "/anthropic/", "/mcp/"))


def is_gateway_path(path: str) -> bool:
    """The OpenAI-compatible gateway, at /openai/v1/ and at /v1/ (SPEC §11.5): OpenAI's error body."""
    return path.startswith(("/openai/", "/v1/"))


def is_anthropic_path(path: str) -> bool:
    """The Anthropic Messages API, at /anthropic/v1/ and /v1/messages (SPEC §11.7): Anthropic's error body."""
    return path.startswith("/anthropic/") or path.rstrip("/") == "/v1/messages"


def error_response(status: int, path: str = "", message: str | None = None) -> JsonResponse:
    """The one error shape for an HTTP status, with a generic message unless one is given; OpenAI's under
    /openai/ (§11.5), Anthropic's under /anthropic/ (§11.7)."""
    fallback = ("server_error", SERVER_ERROR_MESSAGE) if status >= 500 else ("error", "The request failed.")
    code, generic = HTTP_ERRORS.get(status, fallback)
    body = error_body(code, message or generic)
    if is_anthropic_path(path):
        body = anthropic_error(status, body["error"])
    elif is_gateway_path(path):
        body = openai_error(status, body["error"])
    response = JsonResponse(body, status=status)
    if status == 503:
        response["Retry-After"] = str(RETRY_AFTER_UNAVAILABLE)
    return response


def is_outage(exc: BaseException) -> bool:
    """The database could not be reached or dropped the connection: a 503, not a bug (a 500)."""
    from django.db import InterfaceError, OperationalError

    return isinstance(exc, (OperationalError, InterfaceError))


OUTAGE_PAGE = gettext_lazy("Gavel cannot reach its database at the moment. Nothing was changed; try again in a "
                           "few seconds.")


def outage_page() -> HttpResponse:
    """A plain 503 page for an admin or review page while the database is unreachable: no template, no
    context processor, nothing that would ask the database again."""
    title = gettext("Service unavailable")
    body = (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{escape(title)}</title></head>'
            f"<body><h1>{escape(title)}</h1><p>{escape(OUTAGE_PAGE)}</p></body></html>")
    response = HttpResponse(body, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_UNAVAILABLE)
    return response


def _note_outage(sender, request=None, **kwargs):
    """Django signals every unhandled exception before it answers it (still inside its `except`): an outage is
    noted on the request, so that the page answered in DEBUG too is the outage page (RequestIDMiddleware)."""
    if request is not None and is_outage(sys.exc_info()[1]):
        request.database_unreachable = True


got_request_exception.connect(_note_outage, dispatch_uid="gavel-note-outage")


class RequestIDMiddleware:
    """First in MIDDLEWARE: the request id, and the guard that keeps Django's error pages off JSON paths.

    Django turns an exception raised in any middleware (a bad Host header, a
    failing session store) into a response inside that middleware's own layer:
    under DEBUG a page with the trace. Being the outermost layer, this one sees
    that response, not the exception, so under /api/ and /healthz it replaces
    any error answer that is not JSON with the one error shape. An exception
    that does reach it (DEBUG_PROPAGATE_EXCEPTIONS, a failing error handler) is
    answered the same way.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        sent = request.headers.get("X-Request-ID", "")
        # The correlation id of what this request screens is always Gavel's own: a client-chosen id
        # would merge screenings (and other consumers' events) that share it. The request id is only
        # echoed; without a usable one sent, the two are the same fresh id.
        request.correlation_id = uuid.uuid4().hex
        request.request_id = sent if _SAFE_ID.fullmatch(sent) else request.correlation_id
        if is_json_path(request.path):
            response = self.guarded(request)
        else:
            response = self.get_response(request)
            if response.status_code == 500 and getattr(request, "database_unreachable", False):
                # Without DEBUG, handler500 already answered the outage page; with it (`make run`), Django's
                # debug page would be a 500 that shows the database error to whoever tried to log in.
                response = outage_page()
        response["X-Request-ID"] = request.request_id
        return response

    def guarded(self, request):
        try:
            response = self.get_response(request)
        except SuspiciousOperation as exc:
            logger.warning("refused %s on %s (request %s): %s", type(exc).__name__, request.path, request.request_id,
                           exc)
            return error_response(400, request.path)
        except Exception as exc:
            if is_outage(exc):
                logger.error("database unreachable on %s (request %s): %s", request.path, request.request_id,
                             type(exc).__name__)
                return error_response(503, request.path)
            logger.exception("unhandled error on %s (request %s)", request.path, request.request_id)
            return error_response(500, request.path)
        if response.status_code < 400 or response.get("Content-Type", "").startswith("application/json"):
            return response
        if response.status_code >= 500:
            # Django has logged the trace (logger django.request); this line ties it to the request id.
            logger.error("server error %d on %s (request %s)", response.status_code, request.path,
                         request.request_id)
        return error_response(response.status_code, request.path)


class JSONErrorMiddleware:
    """Under the JSON paths, an error raised in a view is a JSON 500 with no trace, DEBUG or not."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_json_path(request.path):
            return None
        if is_outage(exception):
            logger.error("database unreachable on %s (request %s): %s", request.path,
                         getattr(request, "request_id", "-"), type(exception).__name__)
            return error_response(503, request.path)
        logger.exception("unhandled error on %s (request %s)", request.path, getattr(request, "request_id", "-"))
        return error_response(500, request.path)


MSG_BODY_TOO_BIG = gettext_lazy(
    "The form sent %(size)s; one save may send at most %(limit)s (DATA_UPLOAD_MAX_MEMORY_SIZE). Nothing was saved: "
    "shorten the longest field, or ask an administrator to raise the limit."
)


class AdminBodyLimitMiddleware:
    """An admin POST over DATA_UPLOAD_MAX_MEMORY_SIZE goes back to its page with the limit stated (issue 11).

    Django would refuse it with a bare 400 the moment anything reads the body. The browser keeps the
    input: the admin pages check the size before sending (templates/admin/base_site.html), so this is
    the answer only when that check could not run.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.conf import settings

        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if request.method == "POST" and limit is not None and request.path.startswith("/admin/"):
            try:
                size = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                size = 0
            if size > limit:
                from django.contrib import messages
                from django.http import HttpResponseRedirect
                from django.template.defaultfilters import filesizeformat

                messages.error(request, MSG_BODY_TOO_BIG % {"size": filesizeformat(size),
                                                            "limit": filesizeformat(limit)})
                return HttpResponseRedirect(request.get_full_path(), status=303)
        return self.get_response(request)


def limits(request) -> dict:
    """Template context: the upload limit the admin pages check before sending a form."""
    from django.conf import settings

    return {"gavel_upload_limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0}


class UserLanguageMiddleware:
    """A signed-in person's profile language wins over the browser's Accept-Language (SPEC §1).

    After AuthenticationMiddleware; LocaleMiddleware has already chosen from the request, and its
    Content-Language header follows whatever is active when the response passes back.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.utils import translation

        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and not is_json_path(request.path):
            language = (getattr(getattr(user, "gavel_profile", None), "language", "") or "")
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = language
        return self.get_response(request)

