"""The installation's environment file: one settings file that every process of an installation reads.

gunicorn, each Celery worker, beat and every `manage.py` command import governance/settings.py, which
calls `load()` first: the variables of the file (python-dotenv's `NAME=value` lines) are put into the
environment, and a variable the real environment already has wins. So one file gives every process the
same SECRET_KEY, database, broker and evidence key, with no `export` line to repeat in each shell.

Where: `GAVEL_ENV_FILE` names it; unset, it is `gavel.env` in the data folder (`GAVEL_DATA_DIR`, the
checkout's `var/` by default), found from the checkout, not from the folder a command starts in. A file
that GAVEL_ENV_FILE names and that does not exist is an error (a typo must not start an empty SQLite
installation); `GAVEL_ENV_FILE=` (empty) reads none. The test run never reads the default file, so a
developer's production file never reaches a test.
"""
import os
import sys
from pathlib import Path

from dotenv import dotenv_values

FILE_NAME = "gavel.env"


class MissingEnvFile(Exception):
    """GAVEL_ENV_FILE names a file that does not exist."""


def default_path(base_dir: Path) -> Path:
    return Path(os.environ.get("GAVEL_DATA_DIR") or base_dir / "var") / FILE_NAME


def load(base_dir: Path, testing: bool) -> tuple[Path | None, dict[str, str]]:
    """Put the file's variables into os.environ where unset; return (the file read or None, its values)."""
    named = os.environ.get("GAVEL_ENV_FILE")
    if named == "":
        return None, {}
    if named is None:
        if testing:
            return None, {}
        path = default_path(base_dir)
        if not path.is_file():
            return None, {}
    else:
        path = Path(named)
        if not path.is_file():
            raise MissingEnvFile(f"GAVEL_ENV_FILE names {path}, which is not a file (GAVEL_ENV_FILE= reads none).")
    values = {name: value for name, value in dotenv_values(path).items() if value is not None}
    for name, value in values.items():
        os.environ.setdefault(name, value)
    return path, values


def warn_sqlite_fallback(path: Path | None, values: dict[str, str], engine: str) -> str | None:
    """A process that runs on SQLite although its environment file names a database says so on stderr
    (an empty DATABASE_URL in the real environment won over the file). Returns the warning, if any."""
    if path is None or not values.get("DATABASE_URL") or "sqlite" not in engine:
        return None
    if "sqlite" in values["DATABASE_URL"].split(":", 1)[0]:
        return None
    warning = (f"gavel: warning: {path} names a database (DATABASE_URL), but DATABASE_URL in this process's "
               "environment is empty, so this process uses the SQLite file. Unset DATABASE_URL to use the file's.")
    print(warning, file=sys.stderr)
    return warning
