"""One settings file for every process (governance/env_file.py): every `manage.py` command, gunicorn and
Celery process reads the environment file before the environment, the real environment winning; a process
that lands on SQLite although the file names a database says so; `check --deploy` warns about evidence
hashed under another key. Run as a person runs it: a fresh process with only PATH and HOME."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from governance.evidence import key_check
from governance.evidence.records import evidence_key
from governance.models import EvidenceRecord

ROOT = Path(__file__).resolve().parents[2]
PRINT = ("from django.conf import settings; d = settings.DATABASES['default']; "
         "print('RESULT', settings.SECRET_KEY, d['ENGINE'], d['NAME'], settings.GAVEL_THROTTLE_RATE)")
FILE_KEY = "from-the-file-" + "k" * 40


def run(*args, cwd=ROOT, **extra):
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **extra}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=120)


def result(done) -> list[str]:
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith("RESULT")).split()[1:]


def write_env(path: Path, **values) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# the installation's settings\n" + "".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def test_the_default_file_in_the_data_folder_is_read_from_any_working_folder(tmp_path):
    data = tmp_path / "data"
    write_env(data / "gavel.env", SECRET_KEY=FILE_KEY, DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}",
              GAVEL_THROTTLE_RATE="7/min")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    key, engine, name, rate = result(run(str(ROOT / "manage.py"), "shell", "-c", PRINT, cwd=elsewhere,
                                         GAVEL_DATA_DIR=str(data)))
    assert (key, name, rate) == (FILE_KEY, str(tmp_path / "prod.sqlite3"), "7/min")


def test_the_real_environment_wins_over_the_file(tmp_path):
    env = write_env(tmp_path / "gavel.env", SECRET_KEY=FILE_KEY, GAVEL_THROTTLE_RATE="7/min",
                    DATABASE_URL=f"sqlite:///{tmp_path / 'prod.sqlite3'}")
    key, _, _, rate = result(run("manage.py", "shell", "-c", PRINT, GAVEL_ENV_FILE=str(env),
                                 GAVEL_THROTTLE_RATE="9/min"))
    assert (key, rate) == (FILE_KEY, "9/min")


def test_a_celery_process_reads_the_same_file(tmp_path):
    """What `celery -A governance worker|beat` runs first: the Celery app, which loads the settings."""
    env = write_env(tmp_path / "gavel.env", SECRET_KEY=FILE_KEY, DATABASE_URL=f"sqlite:///{tmp_path / 'p.sqlite3'}",
                    CELERY_BROKER_URL="redis://127.0.0.1:6390/5")
    done = run("-c", "from governance.celery import app; from django.conf import settings; "
                     "print('RESULT', settings.SECRET_KEY, app.conf.broker_url)", GAVEL_ENV_FILE=str(env))
    assert result(done) == [FILE_KEY, "redis://127.0.0.1:6390/5"]


def test_a_named_file_that_is_missing_refuses_to_start(tmp_path):
    done = run("manage.py", "check", GAVEL_ENV_FILE=str(tmp_path / "typo.env"))
    assert done.returncode != 0
    assert f"GAVEL_ENV_FILE names {tmp_path / 'typo.env'}, which is not a file" in done.stderr


def test_an_empty_gavel_env_file_reads_no_file(tmp_path):
    data = tmp_path / "data"
    write_env(data / "gavel.env", SECRET_KEY=FILE_KEY)
    key, *_ = result(run("manage.py", "shell", "-c", PRINT, GAVEL_ENV_FILE="", GAVEL_DATA_DIR=str(data)))
    assert key != FILE_KEY


def test_sqlite_while_the_file_names_a_database_is_said_on_stderr(tmp_path):
    env = write_env(tmp_path / "gavel.env", SECRET_KEY=FILE_KEY, DATABASE_URL="postgres://gavel@127.0.0.1:1/gavel")
    done = run("manage.py", "shell", "-c", PRINT, GAVEL_ENV_FILE=str(env), DATABASE_URL="",
               GAVEL_DATA_DIR=str(tmp_path / "var"))
    assert result(done)[1] == "django.db.backends.sqlite3"
    assert f"{env} names a database (DATABASE_URL), but DATABASE_URL in this process's environment is empty" \
        in done.stderr
    quiet = run("manage.py", "shell", "-c", PRINT, GAVEL_ENV_FILE=str(env), GAVEL_DATA_DIR=str(tmp_path / "var"))
    assert result(quiet)[1] == "governance.postgresql" and "warning" not in quiet.stderr


def test_the_test_run_never_reads_the_default_file(tmp_path):
    data = tmp_path / "data"
    write_env(data / "gavel.env", SECRET_KEY=FILE_KEY)
    done = run("manage.py", "shell", "-c", PRINT, GAVEL_TESTING="1", GAVEL_DATA_DIR=str(data))
    assert result(done)[0] == "gavel-test-key-not-for-production"


def evidence(key_id: str) -> EvidenceRecord:
    return EvidenceRecord.objects.create(surface="screening", configuration="newsroom", policy_version=1,
                                         outcome="allowed", text_hash="0" * 64, key_id=key_id)


@pytest.mark.django_db
def test_check_deploy_warns_about_evidence_under_another_key():
    evidence(evidence_key()[1])
    assert key_check.evidence_under_another_key() == []
    evidence("feedfacefeedface")
    evidence("feedfacefeedface")
    (warning,) = key_check.evidence_under_another_key()
    assert warning.id == "gavel.W001"
    assert "2 evidence record(s)" in warning.msg and "feedfacefeedface" in warning.msg
    assert evidence_key()[1] in warning.msg and "GAVEL_ENV_FILE" in warning.hint
    with pytest.raises(SystemCheckError) as raised:  # check --deploy reports it
        call_command("check", "--deploy", "--fail-level", "WARNING")
    assert "gavel.W001" in str(raised.value) and "feedfacefeedface" in str(raised.value)


@pytest.mark.django_db
def test_plain_check_does_not_query_evidence():
    evidence("feedfacefeedface")
    call_command("check", "--fail-level", "WARNING")  # no --deploy: the check does not run
