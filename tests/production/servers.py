"""Gunicorn started by a test, on the test database: a live server in its own processes."""
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from tests.provider_server import unused_port

ROOT = Path(__file__).resolve().parent.parent.parent


def test_database_url() -> str:
    """The database pytest-django made, as a DATABASE_URL another process can open."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@contextmanager
def gunicorn_on_test_database(log_dir: Path, *, workers: int = 2, database_url: str | None = None,
                              bind: str = "127.0.0.1", **env):
    """Yield the base URL (on 127.0.0.1) of gunicorn serving Gavel on the test database; stop it afterwards.
    `bind="0.0.0.0"` listens on every address of the machine too."""
    port = unused_port()
    environment = {**os.environ, "DATABASE_URL": database_url or test_database_url(), "DEBUG": "0",
                   "SECRET_KEY": "gunicorn-test-secret", "PYTHONPATH": str(ROOT), **env}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    log = (log_dir / f"gunicorn-{port}.log").open("w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "governance.wsgi:application", "--bind", f"{bind}:{port}",
         "--workers", str(workers), "--timeout", "60"],
        cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # it answers; what it says about the services is the test's business
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"gunicorn did not start:\n{log.read()[-3000:]}")
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
