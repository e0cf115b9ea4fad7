"""Logins that resist guessing (issue 11, Must show 4): django-axes counts failures per user name and per address,
locks with a page a person understands, logs every lock-out, and an administrator lifts the lock."""
import logging

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import reverse

LOGIN = reverse("admin:login")
PASSWORD = "correct horse battery staple"


@pytest.fixture
def editor(db, settings):
    # A fast hasher: these tests sign in dozens of times, and PBKDF2's cost is not what they test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return User.objects.create_user("editor", "editor@example.org", PASSWORD, is_staff=True)


def sign_in(client, username, password):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"})


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_ten_wrong_passwords_lock_the_user_name_and_an_administrator_lifts_it(editor, caplog):
    client = Client()
    caplog.set_level(logging.WARNING, logger="gavel.security")
    for attempt in range(1, 10):
        response = sign_in(client, "editor", f"wrong-{attempt}")
        assert response.status_code == 200, attempt  # the form again, with Django's own error
        assert "Please enter the correct username and password" in response.content.decode()
    locked = sign_in(client, "editor", "wrong-10")
    assert locked.status_code == 429

    # The right password is refused now, and the page says why and what to do.
    refused = sign_in(client, "editor", PASSWORD)
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Signing in is locked" in page
    assert ("There were 10 failed sign-ins for this user name or from this address, so signing in is locked for "
            "now. Your password was not checked, not even a right one.") in page
    assert "The lock lifts by itself after 60 minutes." in page
    assert "An administrator can lift it at once" in page
    assert not signed_in(client)
    # Every lock-out is logged, naming the user name and the address.
    assert any("login locked out: user name 'editor' from address 127.0.0.1" in r.getMessage()
               for r in caplog.records)

    # An administrator lifts the lock in the admin: the access attempts of the user name go.
    from axes.models import AccessAttempt

    root = Client()
    root.force_login(User.objects.create_superuser("root", "root@example.org", None))
    attempts = list(AccessAttempt.objects.filter(username="editor").values_list("pk", flat=True))
    assert attempts
    lifted = root.post(reverse("admin:axes_accessattempt_changelist"), {
        "action": "delete_selected", "_selected_action": attempts, "post": "yes"})
    assert lifted.status_code == 302
    assert not AccessAttempt.objects.filter(username="editor").exists()

    welcome = sign_in(client, "editor", PASSWORD)
    assert welcome.status_code == 302 and signed_in(client)


def test_fifty_failures_from_one_address_lock_the_address_for_every_user_name(editor):
    client = Client()
    for attempt in range(49):
        sign_in(client, f"guess-{attempt}", "wrong")
    # 49 failures spread over user names lock none of them, and not the address.
    assert sign_in(client, "editor", PASSWORD).status_code == 302
    client.logout()
    sign_in(client, "guess-49", "wrong")
    sign_in(client, "guess-50", "wrong")
    assert sign_in(client, "editor", PASSWORD).status_code == 429
    # Another address is not locked for the same user name (it has one failure of its own at most).
    other = Client(REMOTE_ADDR="10.0.0.7")
    assert sign_in(other, "editor", PASSWORD).status_code == 302


def test_a_success_clears_the_count(editor):
    client = Client()
    for _ in range(9):
        sign_in(client, "editor", "wrong")
    assert sign_in(client, "editor", PASSWORD).status_code == 302
    client.logout()
    assert sign_in(client, "editor", "wrong").status_code == 200  # the count starts again: no lock


def test_any_django_login_is_counted_not_only_the_admins(editor):
    # /accounts/login/ (and any view that calls authenticate with the request) goes through the same backend.
    factory = RequestFactory()
    for _ in range(10):
        request = factory.post("/accounts/login/")
        assert authenticate(request, username="editor", password="wrong") is None
    request = factory.post("/accounts/login/")
    assert authenticate(request, username="editor", password=PASSWORD) is None
    assert request.axes_locked_out


def test_a_success_of_another_account_never_clears_the_count_on_an_administrator(editor):
    """The attacker's own account does not reset the count: 9 wrong, sign in as oneself, repeat (finding 1)."""
    User.objects.create_user("mallory", "m@example.org", "mallory's own password", is_staff=True)
    client = Client()
    for round_ in range(3):
        for attempt in range(9 if round_ == 0 else 1):
            response = sign_in(client, "editor", f"wrong-{round_}-{attempt}")
            if response.status_code == 429:
                break
        assert sign_in(client, "mallory", "mallory's own password").status_code == 302
        client.logout()
    # 11 wrong passwords for editor from this address: locked, the right password is not even checked.
    assert sign_in(client, "editor", PASSWORD).status_code == 429
    # Mallory's own success cleared only mallory's count: editor's stays, from this address.
    from axes.models import AccessAttempt

    assert AccessAttempt.objects.filter(username="editor").exists()
    # From another address the editor signs in (the lock holds the user name from that address only).
    assert sign_in(Client(REMOTE_ADDR="10.0.0.9"), "editor", PASSWORD).status_code == 302
