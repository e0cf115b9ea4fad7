"""The metrics directory is the installation's own (its data folder, or what the environment file names),
and `prune_metrics` removes only the files of ended processes: never a directory, never another file,
never a running process's counts (issue 42: no `rm -rf` of a shared path)."""
import subprocess
import sys
from io import StringIO

from django.core.management import call_command

from tests.governance.test_env_file import run, write_env

PRINT = "import os; print('RESULT', os.environ.get('PROMETHEUS_MULTIPROC_DIR', '-'))"


def test_a_production_process_counts_in_its_data_folder(tmp_path):
    data = tmp_path / "data"
    write_env(data / "gavel.env", SECRET_KEY="k" * 50, DATABASE_URL=f"sqlite:///{tmp_path / 'p.sqlite3'}")
    done = run("manage.py", "shell", "-c", PRINT, GAVEL_DATA_DIR=str(data))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == str(data / "metrics") and (data / "metrics").is_dir()
    named = run("manage.py", "shell", "-c", PRINT, GAVEL_DATA_DIR=str(data),
                PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "elsewhere"))
    assert named.stdout.split()[-1] == str(tmp_path / "elsewhere") and (tmp_path / "elsewhere").is_dir()


def test_the_embedded_default_counts_per_process(tmp_path):
    done = run("manage.py", "shell", "-c", PRINT, GAVEL_DATA_DIR=str(tmp_path / "var"))
    assert done.stdout.split()[-1] == "-"


def test_prune_removes_only_the_files_of_ended_processes(tmp_path, monkeypatch):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead, alive = int(ended.stdout), subprocess.os.getpid()
    for name in (f"counter_{dead}.db", f"histogram_{dead}.db", f"counter_{alive}.db", "notes.txt", "counter_x.db"):
        (tmp_path / name).write_text("x")
    (tmp_path / f"counter_{dead + 1}.db.d").mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    out = StringIO()
    call_command("prune_metrics", stdout=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"counter_{alive}.db", "notes.txt", "counter_x.db", f"counter_{dead + 1}.db.d"])
    assert "removed 2 file(s) of ended processes, kept 1" in out.getvalue()


def test_prune_without_a_directory_does_nothing(monkeypatch):
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    out = StringIO()
    call_command("prune_metrics", stdout=out)
    assert "nothing to prune" in out.getvalue()
