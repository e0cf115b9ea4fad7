"""Request ids on every response, and JSON errors instead of HTML pages under /api/."""
import logging
import re
import uuid

from django.http import JsonResponse

logger = logging.getLogger("gavel.request")
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class RequestIDMiddleware:
    """Echo a caller's X-Request-ID (when it is a sane token) or make one; set it on every response."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        sent = request.headers.get("X-Request-ID", "")
        request.request_id = sent if _SAFE_ID.match(sent) else uuid.uuid4().hex
        response = self.get_response(request)
        response["X-Request-ID"] = request.request_id
        return response


def error_body(code: str, message: str, fields: dict | None = None) -> dict:
    """The one error body shape of SPEC §11.1."""
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


class JSONErrorMiddleware:
    """Under /api/ and /healthz, an unhandled error is a JSON 500 with no trace, DEBUG or not."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith("/api/") and response.status_code == 404 and \
                not response.get("Content-Type", "").startswith("application/json"):
            return JsonResponse(error_body("not_found", "No such endpoint."), status=404)
        return response

    def process_exception(self, request, exception):
        if not (request.path.startswith("/api/") or request.path.startswith("/healthz")):
            return None
        logger.exception("unhandled error on %s (request %s)", request.path, getattr(request, "request_id", "-"))
        return JsonResponse(
            error_body("server_error", "Gavel could not complete the request; it has been logged."), status=500
        )
