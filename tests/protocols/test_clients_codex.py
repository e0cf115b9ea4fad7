"""The real Codex CLI (tests/agents, pinned; installed by .ci/run) in its default mode against a live Gavel
(SPEC §11.9): `codex exec` with only the base URL, the key and the model set — a provider in a private
CODEX_HOME's config.toml, the token in the environment. The model behind Gavel is tests/provider_server.py,
scripted per test: a plain prompt, a round trip through Codex's own shell tool (exec_command, run by the CLI
in its default read-only sandbox with approvals `never`: the command only reads), a blocked answer shown as
Gavel's message, and a report-mode hint shown as a note.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from governance.models import GovernanceEvent
from termlists.models import TermList

CODEX = Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / "codex"
pytestmark = [
    pytest.mark.agent_cli,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CODEX.exists(), reason=f"Codex CLI not installed at {CODEX}: "
                                                  "run `npm ci --prefix tests/agents` (.ci/run does)"),
]
TIMEOUT = 180  # seconds for one `codex exec`: the first start of a busy machine is slow
CONFIG = """model = "{model}"
model_provider = "gavel"

[model_providers.gavel]
name = "Gavel"
base_url = "{base_url}/openai/v1"
env_key = "GAVEL_TOKEN"
wire_api = "responses"
"""


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def codex_configuration(configuration):
    """The configuration Codex's model requests name (`model`); a module may override it."""
    return configuration


@pytest.fixture
def codex_config_extra():
    """More of config.toml (after the provider); a module may override it."""
    return ""


@pytest.fixture
def consumer(codex_configuration, make_consumer):
    """The demo recipe's consumer (docs/openai.md): blocks shown as Gavel's message, hints as a note."""
    consumer, token = make_consumer("codex", [codex_configuration])
    consumer.blocks_as, consumer.hints_as = "message", "note"
    consumer.save()
    consumer.token = token
    return consumer


@pytest.fixture
def codex(live_server, consumer, codex_configuration, codex_config_extra, tmp_path):
    """`codex exec PROMPT` in a fresh CODEX_HOME and an empty working folder; (stdout, stderr)."""
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "config.toml").write_text(CONFIG.format(base_url=live_server.url, model=codex_configuration.identifier)
                                      + codex_config_extra)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "CODEX_"))}
    env.update(CODEX_HOME=str(home), GAVEL_TOKEN=consumer.token, NO_COLOR="1")

    def run(prompt: str, *command: str) -> subprocess.CompletedProcess:
        # --skip-git-repo-check: the working folder is not a git repository (Codex refuses one otherwise).
        done = subprocess.run([str(CODEX), "exec", *command, "--skip-git-repo-check", prompt], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, f"codex exec failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done

    return run


def test_a_plain_prompt_is_answered(codex, provider_server):
    provider_server.script([{"text": "The harbour woke early."}])
    done = codex("Write one line about the harbour.")
    assert done.stdout.strip() == "The harbour woke early."
    [request] = provider_server.chat_requests
    sent = request.body
    assert sent["messages"][-1] == {"role": "user", "content": "Write one line about the harbour."}
    names = [tool["function"]["name"] for tool in sent["tools"]]
    assert "exec_command" in names and "web_search" not in json.dumps(sent["tools"])


def test_a_shell_tool_round_trip_runs_the_command_and_answers(codex, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "exec_command", "arguments": {"cmd": "echo gavel-round-trip"}}]},
        {"text": "The command printed gavel-round-trip."},
    ])
    done = codex("Run `echo gavel-round-trip` and tell me what it printed.")
    assert done.stdout.strip() == "The command printed gavel-round-trip."
    first, second = (request.body for request in provider_server.chat_requests)
    [result] = [m for m in second["messages"] if m["role"] == "tool"]
    assert result["tool_call_id"] == "call_1" and "gavel-round-trip" in result["content"]  # the CLI ran it
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "exec_command"


def test_a_blocked_answer_is_gavel_s_message_once_with_one_provider_call(codex, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}] * 3)
    done = codex("Write one line about the harbour.")
    [blocked] = GovernanceEvent.objects.filter(decision="blocked")
    message = "The term list “Brand words” does not allow: Kunde. Say customer."
    assert done.stdout.strip() == message and done.stdout.count(message) == 1
    assert "harbour woke" not in done.stdout + done.stderr
    assert len(provider_server.chat_requests) == 1  # no retry
    assert GovernanceEvent.objects.filter(decision="blocked").count() == 1 and blocked.check_name == "term_list"


def test_a_report_mode_hint_is_a_note_under_the_answer(codex, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.",
                            mode="report").configurations.set([configuration])
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    done = codex("Write one line about the harbour.")
    answer, _rule, note = done.stdout.strip().partition("\n\n---\n")
    assert answer == "Dear Kunde, the harbour woke early."
    assert note.startswith("Gavel: ") and "Kunde" in note and "Say customer." in note


def test_a_resumed_session_sends_the_conversation_back_and_is_answered(codex, provider_server, configuration):
    """The session's second turn (`codex exec resume --last`): Codex sends the whole conversation again,
    Gavel's earlier answers included — a block shown as a message too."""
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([{"text": "Dear Kunde, hello."}, {"text": "Hello, customer."}])
    codex("Greet the reader.")
    done = codex("Try again, without that word.", "resume", "--last")
    assert done.stdout.strip() == "Hello, customer."
    second = provider_server.chat_requests[1].body["messages"]
    assert [m["content"] for m in second if m["role"] == "user"][-2:] == [
        "Greet the reader.", "Try again, without that word."]
    assert any(m["role"] == "assistant" and "Say customer." in (m["content"] or "") for m in second)
