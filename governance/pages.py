"""Pages Gavel renders for people outside the admin's own views: a login lock-out and the admin's 403.

Both use the admin's layout, say what happened in the reader's language, and name the way out.
"""
from django.conf import settings
from django.template.response import TemplateResponse

from governance.models import UserProfile


def locked_out(request, original_response=None, credentials=None):
    """django-axes' lock-out response (AXES_LOCKOUT_CALLABLE): 429, and a page a person can act on."""
    from axes.helpers import get_cool_off, get_failure_limit

    cool_off = get_cool_off(request)
    context = {
        "title": "",
        "failure_limit": get_failure_limit(request, credentials),
        "cooloff_minutes": int(cool_off.total_seconds() // 60) if cool_off else None,
    }
    response = TemplateResponse(request, "registration/locked_out.html", context,
                                status=settings.AXES_HTTP_RESPONSE_CODE)
    return response.render()


def switch_language(request):
    """The admin's language switch: saves the choice in the person's profile (SPEC §1) and goes back."""
    return save_language(request, fallback="/admin/")


def save_language(request, *, fallback: str):
    """Save the POSTed language in the person's profile and go back to `next` (else `fallback`).

    The admin's switch and the review header's both land here, so a choice made in one holds in the other.
    """
    from django.http import HttpResponseNotAllowed, HttpResponseRedirect
    from django.utils.http import url_has_allowed_host_and_scheme

    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    language = request.POST.get("language", "")
    if language not in {code for code, _name in settings.LANGUAGES} | {""}:
        language = ""
    UserProfile.objects.update_or_create(user=request.user, defaults={"language": language})
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        back = fallback
    return HttpResponseRedirect(back)


def admin_permission_denied(request, exception):
    """A 403 inside the admin, in the admin's layout: what was refused, why, and the way back."""
    from django.contrib import admin
    from django.utils.http import url_has_allowed_host_and_scheme
    from django.views import defaults

    if not hasattr(request, "user"):
        # Refused before the authentication middleware ran: no admin page can be drawn for nobody.
        return defaults.permission_denied(request, exception)

    reason = str(exception) if exception is not None and str(exception) else ""
    back = request.META.get("HTTP_REFERER", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        back = ""
    context = {
        **admin.site.each_context(request),
        "title": "",
        "reason": reason,
        "back": (back or request.path) if request.method == "POST" else back,
    }
    return TemplateResponse(request, "admin/gavel/403.html", context, status=403).render()
