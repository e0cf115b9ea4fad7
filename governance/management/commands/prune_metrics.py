"""`manage.py prune_metrics`: remove the metric files of processes that have ended from this installation's
PROMETHEUS_MULTIPROC_DIR.

prometheus_client's multiprocess mode keeps one file per kind and process (`counter_<pid>.db`,
`histogram_<pid>.db`, …) and `/metrics` sums them all; files of ended processes pile up with every restart.
This removes only such files whose process is not running on this machine — never the directory, never
another file in it, never the files of a live process (a worker still counting) — so it is safe at any time,
also on a directory shared by mistake. The web unit runs it before gunicorn starts (deploy/systemd/).
"""
import os
import re
from pathlib import Path

from django.core.management.base import BaseCommand

# prometheus_client's file names: <kind>_<pid>.db, gauges as gauge_<mode>_<pid>.db.
METRIC_FILE = re.compile(r"^(?:counter|histogram|summary|gauge_[a-z]+)_(\d+)\.db$")


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running
        return True
    return True


class Command(BaseCommand):
    help = "Remove the metric files of ended processes from PROMETHEUS_MULTIPROC_DIR (safe while Gavel runs)."

    def handle(self, *args, **options):
        folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
        if not folder:
            self.stdout.write("PROMETHEUS_MULTIPROC_DIR is not set: each process counts for itself, nothing to prune.")
            return
        removed = kept = 0
        for path in sorted(Path(folder).iterdir()):
            match = METRIC_FILE.match(path.name)
            if not match or not path.is_file():
                continue
            if running(int(match.group(1))):
                kept += 1
                continue
            path.unlink(missing_ok=True)
            removed += 1
        self.stdout.write(f"{folder}: removed {removed} file(s) of ended processes, kept {kept} of running ones.")
