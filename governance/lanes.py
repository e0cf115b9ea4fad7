"""The consumers' lane: the browser's middleware is passed by on the JSON paths (issue 30).

Every JSON path (`governance.middleware.is_json_path`: the REST API, the three protocols, /healthz)
authenticates by token (governance/api/auth.py), never by session or cookie. The session, CSRF,
Django's user, messages and static files have nothing to do there, and cost a screening about a
tenth of its CPU. Each class here is the original middleware (a subclass, so Django's checks still
find it), doing exactly what it did on every other path, hooks included. Security headers, the
Content-Security-Policy, the language, the request id and the JSON errors stay on every path.
"""
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
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
