"""The endpoint `/mcp/<configuration>` (SPEC §14): Streamable HTTP's POST, answered with one JSON body.

A plain Django view, not the SDK's ASGI server: Gavel serves WSGI under gunicorn, one request per thread,
and a tool call is one request and one answer, so nothing needs a stream (docs/mcp.md). GET (a
server-to-client stream) is answered 405, as the transport allows; no session is kept, so DELETE is 405 too.
Token and grants as on the other protocols: 401 without a valid token, 404 for an unknown configuration,
403 for one not granted.
"""
import json
import math
from types import SimpleNamespace

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions

from governance.api.auth import ConsumerRateThrottle, ConsumerTokenAuthentication
from governance.errors import GavelError
from governance.protocols.mcp import checks, rpc

STATUS_OF_ERROR = {"not_granted": 403, "unknown_configuration": 404}


def _refusal(status: int, message: str, request_id=None) -> JsonResponse:
    response = JsonResponse(rpc.error(request_id, -32001, message), status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="gavel"'
    return response


@csrf_exempt
def endpoint(request, identifier: str):
    if request.method != "POST":
        response = HttpResponse(status=405)
        response["Allow"] = "POST"
        return response
    try:
        consumer_and_token = ConsumerTokenAuthentication().authenticate(request)
    except exceptions.AuthenticationFailed as exc:
        return _refusal(401, str(exc.detail))
    if consumer_and_token is None:
        return _refusal(401, "Send a consumer token as Authorization: Bearer <token>.")
    consumer = consumer_and_token[0]
    throttle = ConsumerRateThrottle()
    if not throttle.allow_request(SimpleNamespace(user=consumer), None):  # the consumer's rate, as everywhere
        response = _refusal(429, "Too many requests for this consumer's throttle rate; slow down.")
        response["Retry-After"] = str(max(1, math.ceil(throttle.wait() or 1)))
        return response
    try:
        configuration = checks.granted_configuration(identifier, consumer)
    except GavelError as exc:
        return _refusal(STATUS_OF_ERROR.get(exc.code, 400), exc.message)
    try:
        message = rpc.parse(request.body)
    except RequestDataTooBig:
        return _refusal(413, "The request is too large.")
    except rpc.RpcError as exc:
        return JsonResponse(rpc.error(exc.request_id, exc.code, exc.message), status=400)
    answer = rpc.handle(message, configuration=configuration, consumer=consumer)
    if answer is None:
        return HttpResponse(status=202)
    return HttpResponse(json.dumps(answer, ensure_ascii=False), content_type="application/json")
