"""Real agent CLIs calling tools through Gavel's MCP gateway (SPEC §14, issue 40), both pinned in tests/agents:
Claude Code with an `--mcp-config` naming `/mcp/newsroom` as a `type: "http"` server with a bearer token, and
Codex with `[mcp_servers.gavel]` (`url`, `bearer_token_env_var`) in its config.toml. Each CLI's model is behind
Gavel (Anthropic Messages / OpenAI Responses), scripted by tests/provider_server.py to ask for a tool. The CLI
calls the tool through Gavel; the upstream (tests/protocols/mcp_upstream.py) logs what reached it; the
provider's next request shows what the model was given back. The exact configurations: docs/mcp.md.

The model's requests name another configuration (`desk`) than the MCP endpoint (`newsroom`): with one
configuration for both, a tool call holding a forbidden term is already stopped in the model's answer (its
arguments are screened there, §8.2) and never reaches the gateway — this file tests the gateway.
"""
import json

import pytest

from governance.models import Configuration, EvidenceRecord, GovernanceEvent
from tests.protocols.mcp_upstream import LEAKED_KEY
from tests.protocols.test_clients_claude_code import CLAUDE, _litellm_loaded, claude  # noqa: F401 (fixtures)
from tests.protocols.test_clients_codex import CODEX, codex, consumer  # noqa: F401 (fixtures)
from tests.protocols.test_mcp_gateway import FORBIDDEN, gateway, upstream  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.agent_cli, pytest.mark.django_db(transaction=True)]
needs_claude = pytest.mark.skipif(not CLAUDE.exists(),
                                  reason="Claude Code is not installed: run `npm ci --prefix tests/agents`")
needs_codex = pytest.mark.skipif(not CODEX.exists(),
                                 reason="Codex is not installed: run `npm ci --prefix tests/agents`")


@pytest.fixture
def desk(provider, gateway):
    """The model's configuration: the same provider, no term list (the gateway's `newsroom` has one)."""
    return Configuration.objects.create(identifier="desk", provider=provider, model="test-model")


@pytest.fixture
def claude_configuration(desk):
    return desk


@pytest.fixture
def codex_configuration(desk):
    return desk


@pytest.fixture
def mcp_claude(claude, live_server, gateway, tmp_path):
    """Claude Code with Gavel's MCP endpoint as the server `gavel`, allowed to call the tools named."""
    config = tmp_path / "gavel-mcp.json"
    config.write_text(json.dumps({"mcpServers": {"gavel": {
        "type": "http", "url": f"{live_server.url}/mcp/newsroom",
        "headers": {"Authorization": f"Bearer {gateway['token']}"}}}}))

    def run(prompt: str, *tools: str) -> dict:
        allowed = ["--allowedTools", *[f"mcp__gavel__{tool}" for tool in tools]] if tools else []
        return claude(prompt, "--mcp-config", str(config), *allowed)

    return run


def tool_message(request, call_id: str) -> dict:
    [message] = [m for m in request.body["messages"] if m["role"] == "tool" and m["tool_call_id"] == call_id]
    return message


@needs_claude
def test_an_approved_read_tool_is_called_through_gavel_and_its_result_reaches_the_model(mcp_claude, provider_server,
                                                                                         upstream):
    provider_server.script([
        {"tool_calls": [{"id": "toolu_01", "name": "mcp__gavel__search_pages", "arguments": {"query": "harbour"}}]},
        {"text": "Three pages mention the harbour."},
    ])
    result = mcp_claude("Search the newsroom's pages for harbour.", "search_pages")
    assert result["result"] == "Three pages mention the harbour."
    assert result["permission_denials"] == []
    assert upstream.calls == [("search_pages", {"query": "harbour"})]  # the upstream saw the call, once
    first, second = provider_server.chat_requests
    # Claude Code names Gavel's tools mcp__gavel__<tool> (deferred behind ToolSearch, listed in its system turn).
    assert "mcp__gavel__search_pages" in json.dumps(first.body["messages"])
    assert "3 pages match harbour" in tool_message(second, "toolu_01")["content"]
    [event] = GovernanceEvent.objects.filter(check_name="tool_call")
    assert (event.decision, event.detail["tool"], event.detail["result"]) == ("forwarded", "search_pages", "forwarded")
    assert event.actor == "consumer:agent"
    record = EvidenceRecord.objects.get(surface="mcp")
    assert record.outcome == "allowed"


@needs_claude
def test_a_write_call_with_a_forbidden_term_is_refused_and_the_model_reads_why(mcp_claude, provider_server,
                                                                               upstream):
    body = f"We beat {FORBIDDEN} today."
    provider_server.script([
        {"tool_calls": [{"id": "toolu_02", "name": "mcp__gavel__publish_page",
                         "arguments": {"title": "News", "body": body}}]},
        {"text": "Gavel refused to publish the page."},
    ])
    result = mcp_claude("Publish a page titled News.", "publish_page")
    assert result["result"] == "Gavel refused to publish the page."
    assert upstream.calls == []  # never reached the tool
    [event] = GovernanceEvent.objects.filter(check_name="tool_call")
    assert (event.decision, event.detail["tool"], event.detail["result"]) == ("blocked", "publish_page", "blocked")
    assert EvidenceRecord.objects.get(surface="mcp").outcome == "blocked"
    refusal = tool_message(provider_server.chat_requests[1], "toolu_02")["content"]
    # Gavel's message is the tool result (isError: Claude Code prefixes "Error: " and adds a note of its own on the
    # schema, since the model called the deferred tool without loading it through ToolSearch first).
    assert refusal.startswith(f"Error: The term list “Competitors” does not allow: {FORBIDDEN}.")


@needs_claude
def test_a_secret_in_a_tool_result_reaches_the_model_masked(mcp_claude, provider_server, upstream):
    provider_server.script([
        {"tool_calls": [{"id": "toolu_03", "name": "mcp__gavel__get_page", "arguments": {"page_id": "42"}}]},
        {"text": "Page 42 explains the deployment."},
    ])
    result = mcp_claude("Read page 42.", "get_page")
    assert result["result"] == "Page 42 explains the deployment."
    assert upstream.calls == [("get_page", {"page_id": "42"})]
    second = provider_server.chat_requests[1]
    assert "Page 42: deploy with OPENAI key" in tool_message(second, "toolu_03")["content"]
    assert LEAKED_KEY not in json.dumps(second.body) and LEAKED_KEY[:12] not in json.dumps(second.body)
    [event] = GovernanceEvent.objects.filter(check_name="tool_call")
    assert (event.detail["tool"], event.detail["result"]) == ("get_page", "forwarded")
    assert EvidenceRecord.objects.filter(surface="mcp").count() == 1


@needs_claude
def test_without_allowed_tools_print_mode_denies_the_call_before_gavel(mcp_claude, provider_server, upstream):
    """Why the tests pass `--allowedTools mcp__gavel__<tool>`: in `-p` mode nobody can answer Claude Code's
    permission prompt, so an MCP tool not allowed beforehand is denied by the CLI itself — even a read."""
    provider_server.script([
        {"tool_calls": [{"id": "toolu_04", "name": "mcp__gavel__search_pages", "arguments": {"query": "harbour"}}]},
        {"text": "I was not allowed to search."},
    ])
    result = mcp_claude("Search the newsroom's pages for harbour.")
    assert [denial["tool_name"] for denial in result["permission_denials"]] == ["mcp__gavel__search_pages"]
    assert upstream.calls == [] and not GovernanceEvent.objects.filter(check_name="tool_call").exists()
    assert "haven't granted it" in tool_message(provider_server.chat_requests[1], "toolu_04")["content"]


# What `codex exec` may call without asking (approval policy `never`: any other MCP tool call is refused by Codex
# itself). Only the tools these tests call.
CODEX_APPROVED = ("search_pages", "publish_page", "get_page")


# Codex: `[mcp_servers.gavel]` in config.toml; the bearer token from the environment (`bearer_token_env_var`),
# here the same consumer token Codex's model requests carry, granted `newsroom` too.
@pytest.fixture
def codex_config_extra(live_server):
    return f"""
[mcp_servers.gavel]
url = "{live_server.url}/mcp/newsroom"
bearer_token_env_var = "GAVEL_TOKEN"

""" + "".join(f'\n[mcp_servers.gavel.tools.{tool}]\napproval_mode = "approve"\n' for tool in CODEX_APPROVED)


@pytest.fixture
def mcp_codex(codex, consumer, gateway):
    consumer.configurations.add(gateway["configuration"])
    return codex


@needs_codex
def test_codex_calls_an_approved_read_tool_through_gavel(mcp_codex, provider_server, upstream):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "mcp__gavel__search_pages", "arguments": {"query": "harbour"}}]},
        {"text": "Three pages mention the harbour."},
    ])
    done = mcp_codex("Search the newsroom's pages for harbour.")
    assert done.stdout.strip() == "Three pages mention the harbour."
    assert upstream.calls == [("search_pages", {"query": "harbour"})]
    first, second = provider_server.chat_requests
    assert "mcp__gavel__search_pages" in [tool["function"]["name"] for tool in first.body["tools"]]
    assert "3 pages match harbour" in tool_message(second, "call_1")["content"]
    [event] = GovernanceEvent.objects.filter(check_name="tool_call")
    assert (event.decision, event.detail["tool"], event.actor) == ("forwarded", "search_pages", "consumer:codex")
    assert EvidenceRecord.objects.get(surface="mcp").outcome == "allowed"


@needs_codex
def test_codex_gets_gavel_s_refusal_of_a_write_with_a_forbidden_term(mcp_codex, provider_server, upstream):
    provider_server.script([
        {"tool_calls": [{"id": "call_2", "name": "mcp__gavel__publish_page",
                         "arguments": {"title": "News", "body": f"We beat {FORBIDDEN} today."}}]},
        {"text": "Gavel refused to publish the page."},
    ])
    done = mcp_codex("Publish a page titled News.")
    assert done.stdout.strip() == "Gavel refused to publish the page."
    assert upstream.calls == []
    [event] = GovernanceEvent.objects.filter(check_name="tool_call")
    assert (event.decision, event.detail["tool"]) == ("blocked", "publish_page")
    assert EvidenceRecord.objects.get(surface="mcp").outcome == "blocked"
    refusal = tool_message(provider_server.chat_requests[1], "call_2")["content"]
    assert f"The term list “Competitors” does not allow: {FORBIDDEN}." in refusal


@needs_codex
def test_codex_gets_a_secret_in_a_tool_result_masked(mcp_codex, provider_server, upstream):
    provider_server.script([
        {"tool_calls": [{"id": "call_3", "name": "mcp__gavel__get_page", "arguments": {"page_id": "42"}}]},
        {"text": "Page 42 explains the deployment."},
    ])
    done = mcp_codex("Read page 42.")
    assert done.stdout.strip() == "Page 42 explains the deployment."
    assert upstream.calls == [("get_page", {"page_id": "42"})]
    second = provider_server.chat_requests[1]
    assert "Page 42: deploy with OPENAI key" in tool_message(second, "call_3")["content"]
    assert LEAKED_KEY[:12] not in json.dumps(second.body) and LEAKED_KEY[:12] not in done.stdout + done.stderr
    [event] = GovernanceEvent.objects.filter(check_name="tool_call")
    assert (event.detail["tool"], event.detail["result"]) == ("get_page", "forwarded")


@needs_codex
def test_codex_refuses_an_mcp_tool_not_approved_in_its_config_before_gavel(mcp_codex, provider_server, upstream):
    """Why config.toml sets `approval_mode = "approve"` per tool: `codex exec` never asks, so it refuses the rest."""
    provider_server.script([
        {"tool_calls": [{"id": "call_4", "name": "mcp__gavel__send_newsletter", "arguments": {"subject": "Hi"}}]},
        {"text": "I could not send it."},
    ])
    mcp_codex("Send the newsletter.")
    assert upstream.calls == [] and not GovernanceEvent.objects.filter(check_name="tool_call").exists()
    assert "requires approval" in tool_message(provider_server.chat_requests[1], "call_4")["content"]
