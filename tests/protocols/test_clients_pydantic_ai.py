"""pydantic-ai with an `openai:` model name — the Responses API in its current releases — against a live
Gavel (SPEC §11.6): an agent with one tool, plain and streamed; a blocked answer reaches the app."""
import asyncio

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ContentFilterError
from pydantic_ai.models import infer_model
from pydantic_ai.models.openai import OpenAIResponsesModel

from termlists.models import TermList

pytestmark = pytest.mark.django_db(transaction=True)

TOOL_THEN_ANSWER = [
    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Kiel"}}]},
    {"text": "It is sunny in Kiel."},
]


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@pytest.fixture
def agent(live_server, configuration, make_consumer, monkeypatch):
    """`openai:newsroom` as the documentation writes it; only the environment points it at Gavel."""
    _consumer, token = make_consumer("newsroom-app", [configuration])
    monkeypatch.setenv("OPENAI_BASE_URL", f"{live_server.url}/openai/v1")
    monkeypatch.setenv("OPENAI_API_KEY", token)
    agent = Agent("openai:newsroom", instructions="Answer briefly.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}, 21 °C."

    return agent


def test_an_openai_model_name_speaks_the_responses_api(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    assert isinstance(infer_model("openai:newsroom"), OpenAIResponsesModel)


def test_an_agent_run_calls_its_tool_through_gavel(agent, provider_server):
    provider_server.script([dict(entry) for entry in TOOL_THEN_ANSWER])
    result = agent.run_sync("What is the weather in Kiel?")
    assert result.output == "It is sunny in Kiel."
    first, second = (request.body for request in provider_server.chat_requests)
    assert first["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert second["messages"][-1]["content"] == "Sunny in Kiel, 21 °C."


def test_a_streamed_agent_run(agent, provider_server):
    provider_server.script([dict(entry) for entry in TOOL_THEN_ANSWER])

    async def run():
        async with agent.run_stream("What is the weather in Kiel?") as result:
            return [text async for text in result.stream_text(delta=True)]

    deltas = asyncio.run(run())
    assert "".join(deltas) == "It is sunny in Kiel."


def test_a_blocked_answer_reaches_the_app(agent, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([{"text": "Dear Kunde, it is sunny in Kiel."}])
    with pytest.raises(ContentFilterError) as caught:
        agent.run_sync("What is the weather in Kiel?")
    assert "Say customer." in caught.value.message  # the refusal part, in the exception's message
    assert "sunny" not in caught.value.message and "sunny" not in (caught.value.body or "")
