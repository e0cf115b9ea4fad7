"""The WSGI app of benchmarks/screening_floor.py: Gavel as served, plus the same screening with less of the
stack around it, for measuring only. Never served by Gavel.

- POST /bench/plain-view/screenings: a plain Django view, no DRF (no Request wrapper, negotiation,
  serializer or renderer). The token's statement, the throttle, the screening with its evidence record
  and the response headers are Gavel's own functions, as the API view calls them.
- POST /bench/no-handler/screenings: the same work in a bare WSGI function, before Django's handler and
  its middleware (request id, tracing, security headers, sessions, CSRF, locale, the JSON error guard).
- POST /bench/nothing: a 404 from a bare WSGI function that reads the body and answers `{}`: gunicorn's
  own part of any request.

Both take only a well-formed request from a known consumer; anything else is a 500 the benchmark stops on.
"""
import json
import os
import uuid

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "governance.settings")

from django.conf import settings  # noqa: E402
from django.db import close_old_connections  # noqa: E402
from django.http import HttpResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402

from governance.wsgi import application as gavel  # noqa: E402  (sets Django up)

from governance.api.auth import ConsumerRateThrottle, consumer_by_token_hash  # noqa: E402
from governance.models import Consumer  # noqa: E402
from governance.screening import service  # noqa: E402
from governance import urls as gavel_urls  # noqa: E402


class _Caller:
    def __init__(self, user):
        self.user = user


def screen(authorization: str, raw: bytes, correlation_id: str) -> tuple[dict, int]:
    consumer = consumer_by_token_hash(Consumer.hash_token(authorization.split()[1]))
    if consumer is None or not ConsumerRateThrottle().allow_request(_Caller(consumer), None):
        raise RuntimeError("the benchmark's consumer was refused")
    data = {"also": [], "format": "text", "kind": "completion", **json.loads(raw)}
    screening, version = service.screen(data, consumer=consumer, actor=f"consumer:{consumer.name}",
                                        reader_language=settings.LANGUAGE_CODE, correlation_id=correlation_id)
    return screening.as_response(version), version


def _headers(body: dict, version: int) -> list[tuple[str, str]]:
    return [("X-Gavel-Policy-Version", str(version)), ("X-Gavel-Outcome", body["outcome"]),
            ("X-Gavel-Screening", body["id"])]


@csrf_exempt
def plain_view(request):
    body, version = screen(request.META["HTTP_AUTHORIZATION"], request.body, request.correlation_id)
    response = HttpResponse(json.dumps(body), content_type="application/json")
    for name, value in _headers(body, version):
        response[name] = value
    return response


# Gavel's URLconf with one path more, and its error views (a URLconf without them gets Django's HTML ones).
urlpatterns = [path("bench/plain-view/screenings", plain_view), *gavel_urls.urlpatterns]
handler400, handler403 = gavel_urls.handler400, gavel_urls.handler403
handler404, handler500 = gavel_urls.handler404, gavel_urls.handler500
settings.ROOT_URLCONF = __name__


def application(environ, start_response):
    if environ.get("PATH_INFO") == "/bench/nothing":  # what gunicorn costs a request with nothing to do
        environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        start_response("404 Not Found", [("Content-Type", "application/json"), ("Content-Length", "2")])
        return [b"{}"]
    if environ.get("PATH_INFO") != "/bench/no-handler/screenings":
        return gavel(environ, start_response)
    close_old_connections()  # what Django's request_started does
    try:
        raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        body, version = screen(environ["HTTP_AUTHORIZATION"], raw, uuid.uuid4().hex)
    finally:
        close_old_connections()  # and request_finished
    out = json.dumps(body).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(out))),
                              *_headers(body, version)])
    return [out]
