"""The README's Production section works as written from a fresh clone (issue 25, findings 18 and 19;
Must show 4), and the REST block can be pasted twice.

The Production block runs line by line in one shell in a fresh copy of the checkout (as
tests/test_readme.py copies it), on a database of its own that does not exist yet and this test's
Redis databases; the only changes to it are those values and the port. Its long-running lines
(gunicorn, worker, beat) run in the background; gunicorn must then serve a CSS file and the Swagger
bundle (200), and `check --deploy` in the block must report no issue.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.db import connection

from tests.provider_server import unused_port
from tests.test_readme import fresh_copy

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
LONG_RUNNING = ("gunicorn", "celery")


def production_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Production")
    end = text.find("\n## ", start + 1)
    return [m.group(2) for m in FENCE.finditer(text, start, end) if m.group(1) == "sh"]


def clean_environment(folder: Path) -> dict:
    """What a reader's shell has: PATH and HOME, nothing of this test run."""
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(folder))}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is an answer to look at, not to follow


_opener = urllib.request.build_opener(_NoRedirect)


def get(url: str, **headers) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with _opener.open(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture
def postgres_server(db):
    s = connection.settings_dict
    if connection.vendor != "postgresql":
        if os.environ.get("GAVEL_REQUIRE_SERVICES"):
            pytest.fail("the Production section needs PostgreSQL (DATABASE_URL)")
        pytest.skip("the Production section needs PostgreSQL (DATABASE_URL)")
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}"


@pytest.fixture
def fresh_clone(tmp_path):
    folder = tmp_path / "gavel"
    folder.mkdir()
    fresh_copy(folder)
    (folder / ".venv").unlink()
    (folder / ".venv").symlink_to(Path(sys.prefix))  # the installed environment this test runs in
    return folder


def drop_database(server: str, name: str) -> None:  # noqa: ARG001 - the server the name is on
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {connection.ops.quote_name(name)} WITH (FORCE)")


def as_run_here(block: str, *, server: str, name: str, role: str, redis: str, port: int) -> str:
    """The README's lines with this test's values: its database, role, Redis databases and port. The
    role is created through this test's connection (no sudo here), the packages are this test's (no
    install), and createsuperuser is given its password as Django reads it without a terminal."""
    host_port = server.rsplit("@", 1)[1]
    lines = []
    for line in block.replace("@127.0.0.1:5432/gavel", f"@{host_port}/{name}").replace(
            "postgres://gavel:", f"postgres://{role}:").replace("redis://127.0.0.1:6379/0", f"{redis}/4").replace(
            "redis://127.0.0.1:6379/1", f"{redis}/5").replace("0.0.0.0:8000", f"127.0.0.1:{port}").replace(
            "127.0.0.1:8000", f"127.0.0.1:{port}").replace("-w 4", "-w 2").splitlines():
        command = line.split("  #", 1)[0].rstrip() if not line.startswith(("(", "DATABASE_URL", "SECRET")) else line
        if command.startswith("make install-prod"):
            command = ": packages installed"
        elif command.startswith("sudo -u postgres psql -p 5432 -c "):
            command = f"psql {server}/postgres -c " + command.split(" -c ", 1)[1].replace("ROLE gavel ", f"ROLE {role} ")
        elif "createsuperuser" in command:
            command = f"DJANGO_SUPERUSER_PASSWORD=readme-admin-pw-42 {command} --noinput"
        if any(f"/{program} " in command for program in LONG_RUNNING) or "manage.py run_workers" in command:
            command = f"{command} > {command.split()[0].rsplit('/', 1)[1]}-$$.log 2>&1 &"
        lines.append(command)
    return "\n".join(lines)


def test_the_production_section_works_as_written_from_a_fresh_clone(postgres_server, fresh_clone):
    name = f"gavel_readme_{uuid.uuid4().hex[:8]}"
    role = f"gavel_{uuid.uuid4().hex[:8]}"
    port = unused_port()
    redis = os.environ.get("GAVEL_README_REDIS", "redis://127.0.0.1:6379")
    setup, processes, probes, rest = [as_run_here(block, server=postgres_server, name=name, role=role, redis=redis,
                                                  port=port) for block in production_blocks()]
    assert f"/{name}" in setup and f"127.0.0.1:{port}" in processes
    base = f"http://127.0.0.1:{port}"
    script = ["set -euo pipefail", setup, processes,
              f"for _ in $(seq 1 240); do curl -sf {base}/healthz >/dev/null && break; sleep 0.5; done",
              "echo '=== probes'", probes, "echo '=== rest'", rest, "echo '=== done'", "wait"]
    shell = subprocess.Popen(["bash", "-c", "\n".join(script)], cwd=fresh_clone, env=clean_environment(fresh_clone),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    behind_proxy = {"Host": "gavel.example.org", "X-Forwarded-Proto": "https"}
    output = []
    try:
        for line in shell.stdout:
            output.append(line)
            if line.startswith("=== done"):
                break
        assert (fresh_clone / "var" / "gavel.env").stat().st_mode & 0o077 == 0
        css, css_body = get(f"{base}/static/admin/css/base.css", **behind_proxy)
        bundle, bundle_body = get(f"{base}/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
                                  **behind_proxy)
        docs, docs_body = get(f"{base}/api/v1/docs/", **behind_proxy)
        by_ip, _ = get(f"{base}/healthz")
        wrong_host, wrong_body = get(f"{base}/admin/")
        redirected, _ = get(f"{base}/admin/", Host="gavel.example.org")
    finally:
        os.killpg(shell.pid, signal.SIGTERM)
        try:
            rest_of_output, _ = shell.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(shell.pid, signal.SIGKILL)
            rest_of_output, _ = shell.communicate()
        drop_database(postgres_server, name)
        with connection._nodb_cursor() as cursor:
            cursor.execute(f"DROP ROLE IF EXISTS {role}")
    output = "".join(output) + (rest_of_output or "")
    assert f"Created database {name} (UTF8" in output, output
    assert "Superuser created successfully." in output, output
    assert "System check identified no issues (0 silenced)." in output, output  # check --deploy, clean
    probes_said, rest_said = output.split("=== probes", 1)[1].split("=== rest", 1)
    assert '"status": "ok"' in probes_said and "gavel_tasks{" in probes_said, output
    assert '"outcome":"blocked"' in rest_said and "Rabatt*" in rest_said, output
    assert css == 200 and b"body" in css_body
    assert bundle == 200 and len(bundle_body) > 100_000
    assert docs == 200 and b"swagger-ui-bundle.js" in docs_body
    assert by_ip == 200  # the load balancer's probe
    assert wrong_host == 400 and b"is not in ALLOWED_HOSTS" in wrong_body
    assert redirected == 301  # GAVEL_HTTPS=1: plain HTTP to the public host goes to https


def create_database(server: str, name: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": f"{server}/{name}", "SECRET_KEY": "create-database-test-" + "k" * 40,
           "GAVEL_ENV_FILE": ""}
    env.pop("GAVEL_TESTING", None)
    return subprocess.run([sys.executable, "manage.py", "create_database"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def encoding_of(name: str) -> tuple[str, str]:
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT pg_encoding_to_char(encoding), datctype FROM pg_database WHERE datname = %s", [name])
        return cursor.fetchone()


def test_create_database_makes_it_once_in_utf8_and_then_says_it_exists(postgres_server):
    name = f"gavel_created_{uuid.uuid4().hex[:8]}"
    try:
        runs = [create_database(postgres_server, name) for _ in range(2)]
        encoding, ctype = encoding_of(name)
    finally:
        drop_database(postgres_server, name)
    assert [r.returncode for r in runs] == [0, 0], runs
    assert runs[0].stdout.strip().startswith(f"Created database {name} (UTF8, locale ")
    assert runs[1].stdout.strip() == f"Database {name} exists already."
    assert encoding == "UTF8" and ctype.replace("-", "").lower() in ("c.utf8", "c") or ctype.lower().endswith("utf8")


def test_create_database_refuses_an_existing_database_that_is_not_utf8(postgres_server):
    name = f"gavel_ascii_{uuid.uuid4().hex[:8]}"
    with connection._nodb_cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {name} ENCODING 'SQL_ASCII' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'")
    try:
        refused = create_database(postgres_server, name)
    finally:
        drop_database(postgres_server, name)
    assert refused.returncode == 1
    assert f"Database {name} exists with encoding SQL_ASCII" in refused.stderr
    assert "needs ENCODING 'UTF8'" in refused.stderr


def test_create_database_on_a_cluster_made_without_a_utf8_locale():
    """GAVEL_NON_UTF8_POSTGRES names such a server (`pg_createcluster --locale=C --encoding=SQL_ASCII`),
    e.g. postgres://gavel:pw@127.0.0.1:5433: its template1 is SQL_ASCII, the new database must not be."""
    server = os.environ.get("GAVEL_NON_UTF8_POSTGRES")
    if not server:
        pytest.skip("GAVEL_NON_UTF8_POSTGRES names no PostgreSQL server made without a UTF-8 locale")
    import psycopg

    name = f"gavel_created_{uuid.uuid4().hex[:8]}"
    done = create_database(server, name)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as database:
        template = database.execute("SELECT pg_encoding_to_char(encoding) FROM pg_database "
                                    "WHERE datname = 'template1'").fetchone()[0]
        made = database.execute("SELECT pg_encoding_to_char(encoding), datctype FROM pg_database WHERE datname = %s",
                                [name]).fetchone()
        database.execute(f"DROP DATABASE IF EXISTS {name}")
    assert done.returncode == 0, done.stderr
    # A SQL_ASCII connection hands text back as bytes.
    template, made = bytes(template).decode(), tuple(bytes(value).decode() for value in made)
    assert template == "SQL_ASCII"  # the cluster is what this test is about
    assert made == ("UTF8", "C.UTF-8"), made


@pytest.mark.django_db
def test_a_wrong_host_is_explained_on_the_api_and_in_the_log(client, settings, caplog):
    settings.ALLOWED_HOSTS = ["gavel.example.org"]
    response = client.get("/api/v1/policy", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "The host 127.0.0.1:8000 is not in ALLOWED_HOSTS" in message
    assert any("not in ALLOWED_HOSTS" in record.getMessage() and "gavel.example.org" in record.getMessage()
               for record in caplog.records)
    page = client.get("/admin/", HTTP_HOST="127.0.0.1:8000")
    assert page.status_code == 400 and b"ALLOWED_HOSTS" in page.content and b"<script" not in page.content


@pytest.mark.django_db
def test_the_rest_block_can_be_pasted_twice(configuration):
    from io import StringIO

    from django.core.management import call_command

    from governance.models import Consumer

    tokens = []
    for _ in range(2):
        out = StringIO()
        call_command("create_consumer", "my-app", "--configurations", "newsroom", "--new-token", stdout=out)
        tokens.append(out.getvalue().splitlines()[-1])
    consumer = Consumer.objects.get(name="my-app")
    assert tokens[0] != tokens[1] and all(token.startswith(Consumer.TOKEN_PREFIX) for token in tokens)
    assert Consumer.objects.filter(name="my-app").count() == 1
    assert consumer.token_hash == Consumer.hash_token(tokens[1]) != Consumer.hash_token(tokens[0])


def test_no_readme_example_hard_codes_the_address_and_policy_docs_use_the_venv():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [m.group(2) for m in FENCE.finditer(readme) if m.group(1) in ("sh", "python")]
    hard_coded = [line for block in blocks[1:] for line in block.splitlines()
                  if "127.0.0.1:8000" in line and not line.startswith("export GAVEL=")]
    assert hard_coded == []
    for name in ("policy.md", "releases.md"):
        policy = (ROOT / "docs" / name).read_text(encoding="utf-8")
        assert not re.search(r"(?<![/\w])python manage\.py", policy), name
