"""Each pytest-xdist worker gets services of its own (`make test` runs the suite on several workers).

Loaded with `-p tests.parallel` (pytest.ini), so it runs before pytest-django reads Gavel's settings and
before any test starts a process: what it changes in the environment, the settings and every Celery worker,
gunicorn or `manage.py` a test starts see alike. Outside xdist (a plain `python -m pytest`) it changes nothing.

- The database: pytest-django already names each worker's test database apart (`test_<name>_gw0`, `_gw1`, …;
  SQLite's test file carries the process id).
- Redis: worker `gwK` uses database index `N + K × GAVEL_TEST_REDIS_STRIDE` of `CELERY_BROKER_URL` and of
  `CACHE_URL` (stride 2 by default: with broker 0 and cache 1, gw0 uses 0 and 1, gw1 2 and 3). So one worker's
  `cache.clear()` never empties another's throttle counts, and one worker's Celery workers never see (or restore)
  another's messages.
- Metrics: `PROMETHEUS_MULTIPROC_DIR` becomes a fresh sub-folder per worker, so a test that counts what its
  processes wrote counts no other worker's.
- Ports are taken free from the system (`tests.provider_server.unused_port`), temporary folders are pytest's
  own per worker.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

REDIS_VARIABLES = ("CELERY_BROKER_URL", "CACHE_URL")


def worker_index(name: str | None = None) -> int | None:
    """K of the xdist worker `gwK` this process is, or None outside xdist."""
    match = re.fullmatch(r"gw(\d+)", name if name is not None else os.environ.get("PYTEST_XDIST_WORKER", ""))
    return int(match.group(1)) if match else None


def redis_url_for_worker(url: str, index: int, stride: int) -> str:
    """The Redis URL with its database index moved on by index × stride; any other URL as it is."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or index == 0:
        return url
    database = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{database + index * stride}"))


def isolate(environ=os.environ) -> None:
    index = worker_index(environ.get("PYTEST_XDIST_WORKER", ""))
    if index is None:
        return
    stride = int(environ.get("GAVEL_TEST_REDIS_STRIDE") or 2)
    for variable in REDIS_VARIABLES:
        if environ.get(variable):
            environ[variable] = redis_url_for_worker(environ[variable], index, stride)
    if environ.get("PROMETHEUS_MULTIPROC_DIR"):
        folder = Path(environ["PROMETHEUS_MULTIPROC_DIR"]) / f"gw{index}"
        shutil.rmtree(folder, ignore_errors=True)  # this worker's own folder, of an earlier run
        folder.mkdir(parents=True)
        environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)


isolate()
