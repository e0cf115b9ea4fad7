"""The real Claude Code CLI (pinned in tests/agents/package.json, installed by .ci/run with
`npm ci --prefix tests/agents`) against a live Gavel and the local test provider (SPEC §11.9, issue 39).

Claude Code runs non-interactively (`claude -p … --output-format json`) in its default mode with only
ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY and ANTHROPIC_MODEL set, a HOME of its own (no user settings) and
a working folder of its own: exactly docs/anthropic.md's recipe. It sends what it sends by default
(a mid-conversation system turn, adaptive thinking, effort, context_management, deferred tools, the beta
headers and `?beta=true`); the provider behind Gavel is tests/provider_server.py, scripted per test.

The tool round trip uses Bash with `echo`: Claude Code runs a read-only shell command such as `echo`
without asking in `-p` mode (its permission rules allow read-only commands in the default mode); a
command that writes would be denied there and never run, which is not a round trip.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from governance.models import GovernanceEvent
from snippets.models import PatternRule
from termlists.models import TermList

CLAUDE = Path(__file__).resolve().parents[1] / "agents" / "node_modules" / ".bin" / "claude"

pytestmark = [
    pytest.mark.agent_cli,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed: run `npm ci --prefix tests/agents`"),
]

FORBIDDEN_ANSWER = "Dear Kunde, the harbour woke early."
HINTED_ANSWER = ("Click here for the timetable. The council met on Tuesday to discuss the new bus timetable, the "
                 "repairs to the old bridge, the library's opening hours and a small park beside the river.")


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before the CLI waits."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def claude_configuration(configuration):
    """The configuration Claude Code's model requests name (ANTHROPIC_MODEL); a module may override it."""
    return configuration


@pytest.fixture
def claude(live_server, claude_configuration, make_consumer, tmp_path):
    """Run Claude Code as docs/anthropic.md says, as a consumer with blocks as a message and hints as a note."""
    configuration = claude_configuration
    consumer, token = make_consumer("claude-code", [configuration])
    consumer.blocks_as, consumer.hints_as = "message", "note"
    consumer.save()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()

    def run(prompt: str, *options: str) -> dict:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "ANTHROPIC_BASE_URL": f"{live_server.url}/anthropic", "ANTHROPIC_API_KEY": token,
               "ANTHROPIC_MODEL": configuration.identifier}
        done = subprocess.run([str(CLAUDE), "-p", prompt, "--output-format", "json", *options], cwd=work, env=env,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, (done.stdout, done.stderr)
        result = json.loads(done.stdout)
        assert result["is_error"] is False, result
        return result

    return run


def test_a_plain_prompt_is_answered(claude, provider_server):
    provider_server.script([{"text": "The harbour opens at six."}])
    result = claude("When does the harbour open?")
    assert result["result"] == "The harbour opens at six."
    [request] = provider_server.chat_requests
    messages = request.body["messages"]
    # Claude Code's environment came as a mid-conversation system turn; the prompt reached the model.
    assert any(m["role"] == "system" and "# Environment" in str(m["content"]) for m in messages[1:])
    assert any(m["role"] == "user" and "When does the harbour open?" in str(m["content"]) for m in messages)
    assert "thinking" not in request.body and "context_management" not in request.body


def test_a_tool_round_trip_runs_the_shell_command_and_answers(claude, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "toolu_01", "name": "Bash",
                         "arguments": {"command": "echo gavel-tool-ok", "description": "Print a marker"}}]},
        {"text": "The command printed the marker."},
    ])
    result = claude("Run echo gavel-tool-ok in the shell.")
    assert result["result"] == "The command printed the marker."
    assert result["permission_denials"] == []
    first, second = provider_server.chat_requests
    assert "Bash" in [tool["function"]["name"] for tool in first.body["tools"]]
    call, answer = second.body["messages"][-2:]
    assert call["tool_calls"][0]["function"]["name"] == "Bash"
    assert json.loads(call["tool_calls"][0]["function"]["arguments"])["command"] == "echo gavel-tool-ok"
    assert answer["role"] == "tool" and answer["tool_call_id"] == "toolu_01"
    assert answer["content"].strip() == "gavel-tool-ok"  # the CLI ran it; its output came back


def test_a_blocked_answer_is_printed_verbatim_once_with_one_provider_call(claude, provider_server, configuration,
                                                                           make_consumer):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([{"text": FORBIDDEN_ANSWER}, {"text": FORBIDDEN_ANSWER}])
    result = claude("Write a greeting for the harbour newsletter.")
    [event] = GovernanceEvent.objects.filter(decision="blocked")  # exactly one blocked event
    assert (event.check_name, event.actor) == ("term_list", "consumer:claude-code")
    assert len(provider_server.chat_requests) == 1  # no retry
    # Gavel's message for this text under this policy (SPEC §11.8: the same on every protocol), as the REST API says it.
    _consumer, token = make_consumer("screener", [configuration])
    screener = APIClient()
    screener.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    verdict = screener.post("/api/v1/screenings", {"configuration": configuration.identifier,
                                                   "text": FORBIDDEN_ANSWER}, format="json").json()
    assert verdict["outcome"] == "blocked" and "Say customer." in verdict["block"]["message"]
    assert result["result"] == verdict["block"]["message"]  # verbatim, once
    assert len(provider_server.chat_requests) == 1  # no retry
    [event] = GovernanceEvent.objects.filter(decision="blocked", correlation_id=result_correlation(provider_server))
    assert event.check_name == "term_list"


def result_correlation(provider_server) -> str:
    """The correlation id of the run Claude Code asked for (the one blocked governance event's)."""
    [event] = GovernanceEvent.objects.filter(decision="blocked").exclude(actor="consumer:screener")
    return event.correlation_id


def test_a_report_mode_hint_shows_in_the_output(claude, provider_server, configuration):
    PatternRule.objects.create(identifier="style.no-click-here", statement='Link text never says "click here".',
                               tags=["house-style"], violation_pattern=r"(?i)\bclick here\b",
                               wrong_samples=["For details, click here."], correct_samples=["Read the report."])
    configuration.rule_mode, configuration.rule_tags = "report", ["house-style"]
    configuration.save()
    provider_server.script([{"text": HINTED_ANSWER}])
    result = claude("Write a line about the council meeting.")
    assert result["result"].startswith(HINTED_ANSWER)
    note = result["result"][len(HINTED_ANSWER):]
    assert note.startswith("\n\n---\nGavel: ") and "click here" in note
    assert len(provider_server.chat_requests) == 1


def test_a_tool_search_loads_a_deferred_tool_for_the_next_turn(claude, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "toolu_01", "name": "ToolSearch", "arguments": {"query": "select:NotebookEdit"}}]},
        {"text": "NotebookEdit is loaded."},
    ])
    result = claude("Load the notebook tool.")
    assert result["result"] == "NotebookEdit is loaded."
    first, second = provider_server.chat_requests
    offered = [[tool["function"]["name"] for tool in request.body["tools"]] for request in (first, second)]
    assert "ToolSearch" in offered[0] and "NotebookEdit" not in offered[0]  # deferred until loaded
    assert "NotebookEdit" in offered[1]
    assert second.body["messages"][-1] == {"role": "tool", "tool_call_id": "toolu_01",
                                           "content": "Tool loaded: NotebookEdit"}


def test_a_session_goes_on_with_its_history(claude, provider_server):
    provider_server.script([{"text": "The harbour opens at six."}, {"text": "It closes at ten."}])
    claude("When does the harbour open?")
    result = claude("And when does it close?", "--continue")
    assert result["result"] == "It closes at ten."
    history = provider_server.chat_requests[1].body["messages"]
    assert {"role": "assistant", "content": "The harbour opens at six."} in history
    last_user = [m for m in history if m["role"] == "user"][-1]
    assert "And when does it close?" in str(last_user["content"])
    assert history.index({"role": "assistant", "content": "The harbour opens at six."}) < history.index(last_user)
