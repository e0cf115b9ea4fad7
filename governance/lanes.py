"""The consumers' lane: the browser's middleware is passed by on the JSON paths (issue 30), and the
Content-Security-Policy header is built once, not per response.

Every JSON path (`governance.middleware.is_json_path`: the REST API, the three protocols, /healthz)
authenticates by token (governance/api/auth.py), never by session or cookie. The session, CSRF,
Django's user, messages and static files have nothing to do there, and cost a screening about a
tenth of its CPU. Each class here is the original middleware (a subclass, so Django's checks still
find it), doing exactly what it did on every other path, hooks included. Security headers, the
Content-Security-Policy, the language, the request id and the JSON errors stay on every path.
"""
import http.client

from csp.constants import HEADER
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.signals import setting_changed
from django.middleware.csrf import CsrfViewMiddleware
from whitenoise.middleware import WhiteNoiseMiddleware

from governance.middleware import is_json_path

_HOOKS = ("process_view", "process_exception", "process_template_response")


class BrowserOnly:
    """Put first in the bases of a middleware class: on a JSON path the request goes straight on."""

    def __init__(self, get_response, *args, **kwargs):
        super().__init__(get_response, *args, **kwargs)
        self._next = get_response
        # Django calls a hook where the instance has one: each of the original's is passed by in turn.
        for hook in _HOOKS:
            original = getattr(self, hook, None)
            if original is not None:
                setattr(self, hook, _passed_by(hook, original))

    def __call__(self, request):
        if is_json_path(request.path_info):
            return self._next(request)
        return super().__call__(request)


def _passed_by(hook: str, original):
    def call(request, *args):
        if not is_json_path(request.path_info):
            return original(request, *args)
        return args[-1] if hook == "process_template_response" else None  # the response, or "go on"
    return call


class StaticFiles(BrowserOnly, WhiteNoiseMiddleware):
    pass


class Sessions(BrowserOnly, SessionMiddleware):
    pass


class Csrf(BrowserOnly, CsrfViewMiddleware):
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
