"""`manage.py` in a checkout needs no variable: without DATABASE_URL the embedded settings apply, with
a secret key generated into the local data folder; with DATABASE_URL (production) SECRET_KEY is
required. Run as a person runs it: a fresh process with nothing in its environment but PATH and HOME."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


def manage(*args, **extra):
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **extra}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True,
                          text=True, timeout=120)


def test_without_database_url_a_secret_key_is_generated_once_into_the_data_folder(tmp_path):
    data = tmp_path / "var"
    first = manage("shell", "-c", PRINT_KEY, GAVEL_DATA_DIR=str(data))
    assert first.returncode == 0, first.stderr
    key = (data / "secret_key").read_text().strip()
    assert first.stdout.split()[-1] == key and len(key) >= 50
    assert (data / "secret_key").stat().st_mode & 0o077 == 0  # the owner's only
    again = manage("shell", "-c", PRINT_KEY, GAVEL_DATA_DIR=str(data))
    assert again.stdout.split()[-1] == key  # kept: sessions survive a restart
    other = manage("shell", "-c", PRINT_KEY, GAVEL_DATA_DIR=str(tmp_path / "elsewhere"))
    assert other.stdout.split()[-1] != key  # another install, another key


def test_commands_run_without_debug_or_any_variable(tmp_path):
    done = manage("check", GAVEL_DATA_DIR=str(tmp_path / "var"))
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues" in done.stdout


def test_a_production_database_without_secret_key_refuses_to_start(tmp_path):
    refused = manage("check", DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}",
                     GAVEL_DATA_DIR=str(tmp_path / "var"))
    assert refused.returncode != 0
    assert "SECRET_KEY is required when DATABASE_URL is set" in refused.stderr
    assert not (tmp_path / "var").exists()  # nothing generated for production
    allowed = manage("check", DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}", SECRET_KEY="x" * 50)
    assert allowed.returncode == 0, allowed.stderr
