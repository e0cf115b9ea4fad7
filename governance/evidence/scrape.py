"""`GET /metrics` (SPEC §13.2): Prometheus' text format, open to this machine, elsewhere only with the token."""
import hmac
import ipaddress
import re

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from governance.evidence import metrics

FORWARDED_FOR = re.compile(r'for="?\[?([^;,"\]]+)', re.IGNORECASE)


def _loopback(address: str) -> bool:
    address = address.strip()
    if address.count(":") == 1 and "." in address:  # "127.0.0.1:8080" in a Forwarded header
        address = address.split(":")[0]
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False  # "unknown", an obfuscated name: not this machine


def client_addresses(request) -> list[str]:
    """Every address the request came through: the peer, and what a proxy says it forwarded for."""
    meta = request.META
    found = [meta.get("REMOTE_ADDR", "")]
    found += [a for a in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    found += [a for a in [meta.get("HTTP_X_REAL_IP", "")] if a.strip()]
    found += FORWARDED_FOR.findall(meta.get("HTTP_FORWARDED", ""))
    return found


def may_read(request) -> bool:
    """Loopback only when no proxy forwarded the request for another address (a proxy on this machine
    connects from 127.0.0.1: its clients are not this machine); anyone with GAVEL_METRICS_TOKEN."""
    token = settings.GAVEL_METRICS_TOKEN
    sent = request.META.get("HTTP_AUTHORIZATION", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    return all(_loopback(address) for address in client_addresses(request))


@require_GET
def metrics_view(request):
    if not may_read(request):
        message = _("The metrics are open to this machine only; from elsewhere send GAVEL_METRICS_TOKEN as a "
                    "bearer token.")
        response = JsonResponse({"error": {"code": "not_authenticated", "message": message, "fields": {}}},
                                status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
