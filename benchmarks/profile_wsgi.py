"""Gavel's WSGI app under cProfile, counting CPU time (`time.process_time`), for profiling a gunicorn
worker on real requests (docs/operations.md, "The request path, profiled"). The first 30 requests warm
up unprofiled; the stats are written to $PROFILE_DIR/worker-<pid>.pstats when the worker exits.

    PYTHONPATH=benchmarks:. gunicorn profile_wsgi:application -w 1 -b 127.0.0.1:18520
    (send requests; stop gunicorn with SIGTERM)
    python -c "import pstats; pstats.Stats('/tmp/worker-<pid>.pstats').sort_stats('cumulative').print_stats(40)"
"""
import atexit
import cProfile
import os
import time

from governance.wsgi import application as _application

_profile = cProfile.Profile(time.process_time)
_seen = [0]
WARM = 30


def application(environ, start_response):
    _seen[0] += 1
    if _seen[0] <= WARM:
        return _application(environ, start_response)
    _profile.enable()
    try:
        result = _application(environ, start_response)
        body = [b"".join(result)]  # a stream is read inside the profile too
        if hasattr(result, "close"):
            result.close()
        return body
    finally:
        _profile.disable()


@atexit.register
def _write():
    _profile.dump_stats(os.path.join(os.environ.get("PROFILE_DIR", "/tmp"), f"worker-{os.getpid()}.pstats"))
