"""The developer's commands: `make help` names every target; each pytest-xdist worker its own Redis databases."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.parallel import isolate, redis_url_for_worker, worker_index

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_help_lists_every_target_with_one_line():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = re.search(r"^\.PHONY:(.*)$", makefile, re.MULTILINE).group(1).split()
    shown = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    lines = shown.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(targets)
    assert all(len(line.split()) > 1 for line in lines)  # each with what it does


def test_each_xdist_worker_gets_redis_databases_of_its_own():
    assert worker_index("gw0") == 0 and worker_index("gw3") == 3 and worker_index("") is None
    assert redis_url_for_worker("redis://127.0.0.1:6379/0", 0, 2) == "redis://127.0.0.1:6379/0"
    assert redis_url_for_worker("redis://127.0.0.1:6379/1", 1, 2) == "redis://127.0.0.1:6379/3"
    assert redis_url_for_worker("redis://127.0.0.1:6379", 2, 2) == "redis://127.0.0.1:6379/4"
    assert redis_url_for_worker("redis://:pw@redis.example:6380/2", 1, 10) == "redis://:pw@redis.example:6380/12"
    assert redis_url_for_worker("locmem://", 1, 2) == "locmem://"


def test_outside_xdist_nothing_changes_and_in_a_worker_every_service_moves(tmp_path):
    plain = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    isolate(plain)
    assert plain == {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}

    (tmp_path / "gw1").mkdir()
    (tmp_path / "gw1" / "counter_1.db").write_bytes(b"of an earlier run")
    worker = {"PYTEST_XDIST_WORKER": "gw1", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
              "CACHE_URL": "redis://127.0.0.1:6379/1", "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    isolate(worker)
    assert worker["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/2"
    assert worker["CACHE_URL"] == "redis://127.0.0.1:6379/3"
    assert worker["PROMETHEUS_MULTIPROC_DIR"] == str(tmp_path / "gw1")
    assert list((tmp_path / "gw1").iterdir()) == []  # a fresh folder
