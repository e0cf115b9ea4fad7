"""The deployment units operators copy (deploy/systemd/*.service, Procfile) start the same three commands
as the README's Production section, so a change to one that forgets the others fails here."""
import configparser
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
INSTALLED = "/srv/gavel/"  # where the units expect the checkout (their comments say to adjust it)
KINDS = {"gunicorn": "web", "run_workers": "workers", "beat": "beat"}


def kind(command: str) -> str:
    return next(name for word, name in KINDS.items() if word in command)


def readme_processes() -> dict[str, list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Production")
    section = text[start:text.find("\n## ", start + 1)]
    commands = [line.split("#", 1)[0].strip() for _, block in FENCE.findall(section) for line in block.splitlines()
                if line.startswith((".venv/bin/gunicorn", ".venv/bin/celery", ".venv/bin/python manage.py run_workers"))]
    found = {kind(command): shlex.split(command) for command in commands}
    assert set(found) == {"web", "workers", "beat"} and len(commands) == 3, commands
    return found


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(ROOT / "deploy" / "systemd" / f"gavel-{name}.service")
    return parser


def test_each_systemd_unit_starts_the_readmes_command_in_the_checkout():
    for name, command in readme_processes().items():
        service = unit(name)["Service"]
        assert service["WorkingDirectory"] == INSTALLED.rstrip("/")  # var/gavel.env found from the checkout
        started = shlex.split(service["ExecStart"])
        assert started[0] == INSTALLED + command[0] and started[1:] == command[1:], (name, started)
        assert service.get("EnvironmentFile") is None  # the settings come from var/gavel.env, as in the README


def test_the_web_unit_prunes_the_metric_files_first():
    assert unit("web")["Service"]["ExecStartPre"] == INSTALLED + ".venv/bin/python manage.py prune_metrics"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/python manage.py prune_metrics" in readme


def test_the_procfile_names_the_same_commands():
    lines = [line for line in (ROOT / "Procfile").read_text().splitlines() if line and not line.startswith("#")]
    procfile = {kind(command): shlex.split(command) for name, command in (line.split(": ", 1) for line in lines)}
    assert procfile == readme_processes()


def test_no_doc_or_unit_clears_a_fixed_shared_metrics_path():
    files = [ROOT / "README.md", ROOT / "Procfile", *(ROOT / "docs").rglob("*.md"), *(ROOT / "deploy").rglob("*")]
    for path in files:
        if path.is_file() and "decisions" not in path.parts:  # a decision record may say what was replaced
            text = path.read_text(encoding="utf-8")
            assert "/run/gavel-metrics" not in text and 'rm -rf "$PROMETHEUS_MULTIPROC_DIR"' not in text, path
