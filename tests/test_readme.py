"""The README's examples work as written, on a fresh copy of the checkout, right after `make run`.

The checkout's files (`git ls-files`: tracked and new, not ignored — so no var/, no SQLite file, no
generated secret) are copied into a temporary folder, `make run PORT=<free port>` starts the
embedded server there with no environment but PATH and HOME, and every ```sh and ```python block
of the README (but the first, which is `make run` / `make test` itself, and those of the
"Production" section, which need PostgreSQL and Redis) runs in order in one shell, as a reader
pastes them into a second terminal. The only change made to them: the port.

Each example must succeed (the shell runs with `set -euo pipefail`) and show what it promises: the
demo model's answer with a judged hint, a block, a task ready and a field fill ready.

The copy's `.venv` is a symlink to this checkout's, with the files' times kept, so `make run`'s
`install` step sees it installed and does not spend minutes reinstalling the same pinned packages.
Marked `readme`: deselect with `-m "not readme"`.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.provider_server import unused_port

pytestmark = pytest.mark.readme

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
BLOCK_MARK = "=== README block {} ==="


def readme_blocks() -> list[tuple[str, str]]:
    """(language, code) of every runnable block, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    production = text.index("\n## Production")
    next_heading = text.find("\n## ", production + 1)
    skipped = (production, next_heading if next_heading >= 0 else len(text))
    blocks = []
    for match in FENCE.finditer(text):
        if match.group(1) in ("sh", "python") and not skipped[0] <= match.start() < skipped[1]:
            blocks.append((match.group(1), match.group(2)))
    return blocks


def fresh_copy(target: Path) -> None:
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True)
    if listing.returncode != 0:
        pytest.skip("not a git checkout: nothing says which files a clone would hold")
    listed = listing.stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():  # a file deleted in the working tree but still in the index is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)  # times kept: make compares them with .venv/.installed
    (target / ".venv").symlink_to(ROOT / ".venv")


def wait_healthy(url: str, process: subprocess.Popen, seconds: float = 150) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"make run exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("make run did not answer /healthz in time")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    if not (ROOT / ".venv" / ".installed").exists():
        pytest.skip("run make install first")
    if shutil.which("make") is None or shutil.which("git") is None:
        pytest.skip("needs make and git")
    folder = tmp_path_factory.mktemp("readme") / "gavel"
    folder.mkdir()
    fresh_copy(folder)
    port = unused_port()
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(folder))}
    log = (folder.parent / "make-run.log").open("w")
    server = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=folder, env=environment, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        yield folder, port, environment
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # make, manage.py runserver and its reloader child
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


def run_examples(folder: Path, port: int, environment: dict) -> dict[int, str]:
    """Run every block in one shell; return each block's output by its number."""
    lines = ["set -euo pipefail"]
    for number, (language, code) in enumerate(readme_blocks()[1:], start=1):
        code = code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        lines.append(f"echo '{BLOCK_MARK.format(number)}'")
        if language == "python":
            lines += [".venv/bin/python - <<'README_PYTHON'", code.rstrip("\n"), "README_PYTHON"]
        else:
            lines.append(code)
    # The timeout guards against a hang: on a loaded 2-core machine the blocks' thirty-odd process starts
    # took over 120 s.
    finished = subprocess.run(["bash", "-c", "\n".join(lines)], cwd=folder, env=environment, capture_output=True,
                              text=True, timeout=300)
    assert finished.returncode == 0, f"an example failed:\n{finished.stdout}\n{finished.stderr}"
    outputs, current = {}, None
    for line in finished.stdout.splitlines():
        mark = re.fullmatch(r"=== README block (\d+) ===", line)
        if mark:
            current = int(mark.group(1))
            outputs[current] = ""
        elif current is not None:
            outputs[current] += line + "\n"
    return outputs


def json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_every_readme_example_works_on_a_fresh_copy_right_after_make_run(checkout):
    folder, port, environment = checkout
    blocks = readme_blocks()
    assert blocks[0] == ("sh", blocks[0][1]) and [line.split()[:2] for line in blocks[0][1].splitlines()] == \
        [["make", "run"], ["make", "test"]]  # the README's first two commands
    outputs = run_examples(folder, port, environment)
    assert sorted(outputs) == list(range(1, len(blocks)))  # every block ran
    answers = [body for output in outputs.values() for body in json_lines(output)]

    # The demo model answered, and the demo judge reported a rule with its passage.
    written = next(b for b in answers if b.get("completion") and b.get("outcome") == "allowed_with_hints")
    assert written["completion"]["provider"] == "demo-model" and written["text"].startswith("Book your seat today!")
    assert {(h["rule"]["number"], h["passage"]) for h in written["hints"] if h["check"] == "rules_judge"} == \
        {(1, "Book your seat today!"), (3, "8")}
    # A block names the list and the term.
    blocked = next(b for b in answers if b.get("outcome") == "blocked")
    assert blocked["block"]["check"] == "term_list" and "Kunde" in blocked["block"]["message"]
    # A task and a field fill, ready.
    tasks = {b["kind"]: b for b in answers if "kind" in b and "status" in b}
    assert tasks["queued_task"]["status"] == "ready" and tasks["queued_task"]["text"]
    assert tasks["field_fill"]["status"] == "ready" and tasks["field_fill"]["field"]["name"] == "meta_description"
    assert tasks["field_fill"]["text"] == "Plan meetings without the back and forth."
    # The openai SDK and litellm got the demo model's answers, and the SDK saw the block.
    printed = "".join(outputs.values())
    assert "Hello from the openai SDK. allowed" in printed
    assert "The term list “Demo brand words” does not allow: Kunde." in printed
    assert "Hello from litellm." in printed
    # The release workflow with a draft: made, submitted with a time, and published by the command the
    # README names for the embedded default (no celery beat there).
    assert re.search(r"Draft (\d+) created: 1 change\(s\); nothing is live until it is published\.", printed)
    assert re.search(r"Draft \d+ submitted\.", printed) and re.search(r"Draft \d+ publishes at ", printed)
    assert re.search(r"Draft \d+ published as version \d+\.", printed)

    # Nothing was set up by hand: the secret key and the demo logins were generated into var/.
    assert (folder / "var" / "secret_key").is_file() and (folder / "var" / "demo-logins.json").is_file()


# The tutorials a user reads (docs/guide/), each in a shell of its own against the same server, after the
# README's examples, as a reader who goes on from the README. The operator's tutorial is left out: its
# commands are production's (PostgreSQL, systemd), which tests/production/test_production_readme.py walks.
TUTORIALS = ("developer", "policy-writer")


def tutorial_blocks(name: str) -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "guide" / f"{name}.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text) if m.group(1) in ("sh", "python")]


def run_tutorial(name: str, folder: Path, port: int, environment: dict) -> str:
    lines = ["set -euo pipefail"]
    for language, code in tutorial_blocks(name):
        code = code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        if language == "python":
            lines += [".venv/bin/python - <<'TUTORIAL_PYTHON'", code.rstrip("\n"), "TUTORIAL_PYTHON"]
        else:
            lines.append(code)
    finished = subprocess.run(["bash", "-c", "\n".join(lines)], cwd=folder, env=environment, capture_output=True,
                              text=True, timeout=180)
    assert finished.returncode == 0, f"{name}: a block failed:\n{finished.stdout}\n{finished.stderr}"
    return finished.stdout


def test_every_tutorial_block_works_on_the_embedded_default(checkout):
    folder, port, environment = checkout
    assert all(tutorial_blocks(name) for name in TUTORIALS)

    developer = run_tutorial("developer", folder, port, environment)
    answers = json_lines(developer)
    assert any(b.get("outcome") == "blocked" and b["block"]["check"] == "term_list" for b in answers)
    assert any(b.get("outcome") == "allowed_with_hints" and b.get("completion") for b in answers)
    assert "blocked: The term list “Demo brand words” does not allow: Kunde." in developer  # the openai SDK
    assert any(b.get("kind") == "queued_task" and b["status"] == "ready" for b in answers)

    writer = run_tutorial("policy-writer", folder, port, environment)
    assert "Retired product names" in writer  # imported
    assert re.search(r'"outcome": "blocked"', writer) and "does not allow: Planner Pro" in writer  # screened
    assert re.search(r"Draft (\d+) created: 1 change\(s\); nothing is live until it is published\.", writer)
    assert re.search(r"Draft \d+ published as version \d+\.", writer)
