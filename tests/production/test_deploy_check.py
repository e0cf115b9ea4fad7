"""Defect 5 of issue 10: `manage.py check --deploy` is clean behind TLS with one switch, GAVEL_HTTPS=1."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def check_deploy(**extra) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GAVEL_", "DEBUG", "PYTEST"))}
    env.update(SECRET_KEY="k" * 20 + "Zq8-vR2_xT5!mW9@pL3#nB6$hJ4%cF7^dS1&gK0*" + "y" * 20,
               ALLOWED_HOSTS="gavel.example.org", **extra)
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_without_the_switch_the_deploy_check_names_the_tls_settings():
    result = check_deploy()
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr + result.stdout


def test_with_gavel_https_the_deploy_check_reports_no_issue():
    result = check_deploy(GAVEL_HTTPS="1")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout, result.stdout + result.stderr


def test_the_switch_trusts_the_proxy_header_and_keeps_healthz_plain(settings):
    # What the switch sets, read from a fresh process (settings are read once at start).
    code = ("from django.conf import settings as s; "
            "print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, "
            "s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS > 0, s.SECURE_REDIRECT_EXEMPT)")
    env = {**os.environ, "GAVEL_HTTPS": "1", "DJANGO_SETTINGS_MODULE": "governance.settings"}
    out = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "('HTTP_X_FORWARDED_PROTO', 'https') True True True True ['^healthz$', '^metrics$']"
