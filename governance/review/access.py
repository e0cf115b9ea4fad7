"""Who may use the review UI and the dashboard: editors (SPEC §1, §10).

Anonymous visitors go to the editors' login page (settings.LOGIN_URL, Django's LoginView, which
unlike the admin's login lets non-staff users in); anyone else logged in gets a 403 page.
"""
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render

from governance.work import editors


def editor_required(view):
    @wraps(view)
    def guarded(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not editors.is_editor(request.user):
            return render(request, "review/forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return guarded
