"""The OpenAI Agents SDK in its default mode (the Responses API) against a live Gavel (SPEC §11.6):
one agent with one function tool, run plain and streamed; a blocked answer reaches the app."""
import asyncio

import pytest
from agents import Agent, ModelBehaviorError, RunConfig, Runner, function_tool
from agents.models.openai_provider import OpenAIProvider
from openai import AsyncOpenAI

from termlists.models import TermList

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 21 °C."


@pytest.fixture
def run_config(live_server, configuration, make_consumer):
    """The SDK's own default provider (Responses API), pointed at Gavel; no traces leave the machine."""
    _consumer, token = make_consumer("newsroom-app", [configuration])
    client = AsyncOpenAI(base_url=f"{live_server.url}/openai/v1", api_key=token, max_retries=0, timeout=30)
    return RunConfig(model_provider=OpenAIProvider(openai_client=client), tracing_disabled=True)


@pytest.fixture
def agent():
    return Agent(name="Desk", instructions="Answer briefly.", model="newsroom", tools=[get_weather])


TOOL_THEN_ANSWER = [
    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Kiel"}}]},
    {"text": "It is sunny in Kiel."},
]


def test_an_agent_run_calls_its_tool_through_gavel_and_answers(agent, run_config, provider_server):
    provider_server.script([dict(entry) for entry in TOOL_THEN_ANSWER])
    result = Runner.run_sync(agent, "What is the weather in Kiel?", run_config=run_config)
    assert result.final_output == "It is sunny in Kiel."
    first, second = (request.body for request in provider_server.chat_requests)
    assert first["tools"][0]["function"]["name"] == "get_weather"
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == "Sunny in Kiel, 21 °C."
    assert second["messages"][-2]["tool_calls"][0]["id"] == tool_message["tool_call_id"]


def test_a_streamed_agent_run_delivers_the_text_deltas(agent, run_config, provider_server):
    provider_server.script([dict(entry) for entry in TOOL_THEN_ANSWER])

    async def run():
        result = Runner.run_streamed(agent, "What is the weather in Kiel?", run_config=run_config)
        deltas = [event.data.delta async for event in result.stream_events()
                  if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"]
        return result, deltas

    result, deltas = asyncio.run(run())
    assert result.final_output == "It is sunny in Kiel."
    assert "".join(deltas) == "It is sunny in Kiel." and len(deltas) > 1


@pytest.fixture
def brand_words(configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])


def test_a_blocked_answer_raises_the_sdk_s_exception_carrying_the_block_message(agent, run_config, provider_server,
                                                                                brand_words):
    provider_server.script([{"text": "Dear Kunde, it is sunny in Kiel."}])
    with pytest.raises(ModelBehaviorError) as caught:
        Runner.run_sync(agent, "What is the weather in Kiel?", run_config=run_config)
    assert "content_filter" in str(caught.value) and "Say customer." in str(caught.value)
    assert "sunny" not in str(caught.value)


def test_a_blocked_streamed_run_shows_the_refusal_then_raises(agent, run_config, provider_server, brand_words):
    provider_server.script([{"text": "Dear Kunde, it is sunny in Kiel."}])
    seen = []

    async def run():
        result = Runner.run_streamed(agent, "What is the weather in Kiel?", run_config=run_config)
        async for event in result.stream_events():
            if event.type == "raw_response_event":
                seen.append(event.data)

    with pytest.raises(ModelBehaviorError) as caught:
        asyncio.run(run())
    assert "Say customer." in str(caught.value)
    [refusal] = [event.refusal for event in seen if event.type == "response.refusal.done"]
    assert "Say customer." in refusal
    assert not any(event.type == "response.output_text.delta" for event in seen)
