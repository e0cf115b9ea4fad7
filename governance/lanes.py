"""The consumers' lane: the browser's middleware is passed by on the JSON paths (issue 30), and the
Content-Security-Policy header is built once, not per response.

Every JSON path (`governance.middleware.is_json_path`: the REST API, the three protocols, /healthz)
authenticates by token (governance/api/auth.py), never by session or cookie. Django's user, the
messages and the static files have nothing to do there. Each class here is the original middleware
(a subclass, so Django's admin checks still find it), doing exactly what it did on every other path.
The session and CSRF middleware stay as Django names them on every path: `check --deploy` looks for
them by name (and checks the session cookie's settings only when it finds the session's). Security
headers, the Content-Security-Policy, the language, the request id and the JSON errors stay too.
"""
import http.client

from csp.constants import HEADER
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from whitenoise.middleware import WhiteNoiseMiddleware

from governance.middleware import is_json_path

_HOOKS = ("process_view", "process_exception", "process_template_response")


class BrowserOnly:
    """Put first in the bases of a middleware class: on a JSON path the request goes straight on.
    Only for a middleware that works in its __call__ alone: one with a hook (process_view, …) would
    still have it called on JSON paths, so it is refused here rather than half passed by."""

    def __init__(self, get_response, *args, **kwargs):
        super().__init__(get_response, *args, **kwargs)
        self._next = get_response
        hooks = [hook for hook in _HOOKS if hasattr(self, hook)]
        if hooks:
            raise ImproperlyConfigured(f"{type(self).__name__} has {', '.join(hooks)}: it cannot be passed by")

    def __call__(self, request):
        if is_json_path(request.path_info):
            return self._next(request)
        return super().__call__(request)


class StaticFiles(BrowserOnly, WhiteNoiseMiddleware):
    pass


class Authentication(BrowserOnly, AuthenticationMiddleware):
    pass


class Messages(BrowserOnly, MessageMiddleware):
    pass


# --- the Content-Security-Policy header, built once per setting ---------------------------------------
_PER_RESPONSE = ("_csp_config", "_csp_update", "_csp_replace", "_csp_exempt",
                 "_csp_config_ro", "_csp_update_ro", "_csp_replace_ro", "_csp_exempt_ro")
_built: dict = {}


class ContentSecurityPolicy(CSPMiddleware):
    """django-csp's middleware, with the installation's one policy built into its header once instead of
    on every response (a tenth of a screening's middleware). Whatever could make a response's header
    differ goes to django-csp as before: a nonce asked for, a view's own policy or exemption, a
    report-only policy or excluded prefixes in the settings, Django's debug error pages."""

    def process_response(self, request, response):
        if (getattr(request, "_csp_nonce", None) is not None or HEADER in response
                or any(hasattr(response, name) for name in _PER_RESPONSE) or not _plain_policy()
                or (settings.DEBUG and response.status_code in (http.client.INTERNAL_SERVER_ERROR,
                                                                http.client.NOT_FOUND))):
            return super().process_response(request, response)
        header = _built.get("header")
        if header is None:
            header = _built["header"] = build_policy()
        if header:
            response[HEADER] = header
        # As django-csp does: a nonce asked for after the header is written is an error, not a silent gap.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


def _plain_policy() -> bool:
    policy = getattr(settings, "CONTENT_SECURITY_POLICY", None) or {}
    return not getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None) and not policy.get("EXCLUDE_URL_PREFIXES")


def _forget_policy(*, setting, **kwargs):
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _built.clear()


setting_changed.connect(_forget_policy, dispatch_uid="gavel-csp-header")
