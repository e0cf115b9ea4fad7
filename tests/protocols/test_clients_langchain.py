"""LangChain's ChatOpenAI with `use_responses_api=True` against a live Gavel (SPEC §11.6): an answer,
a stream, a tool call, and a blocked answer the app can read."""
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from termlists.models import TermList

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded():
    """Gavel's first model call imports litellm, which takes seconds on a busy machine: before any client's timeout."""
    from judging.llm.loader import _litellm

    _litellm()


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}, 21 °C."


@pytest.fixture
def llm(live_server, configuration, make_consumer):
    _consumer, token = make_consumer("newsroom-app", [configuration])
    return ChatOpenAI(model="newsroom", base_url=f"{live_server.url}/openai/v1", api_key=token,
                      use_responses_api=True, max_retries=0, timeout=30)


def test_an_answer_and_a_stream(llm, provider_server):
    provider_server.script([{"text": "The harbour woke early."}, {"text": "The harbour woke early."}])
    assert llm.invoke("Write about the harbour.").text == "The harbour woke early."
    chunks = list(llm.stream("Write about the harbour."))
    assert "".join(chunk.text for chunk in chunks) == "The harbour woke early."
    assert len([chunk for chunk in chunks if chunk.text]) > 1
    assert all(request.path.endswith("/chat/completions") for request in provider_server.chat_requests)


def test_a_tool_call_and_its_answer(llm, provider_server):
    provider_server.script([
        {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Kiel"}}]},
        {"text": "It is sunny in Kiel."},
    ])
    with_tools = llm.bind_tools([get_weather])
    history = [HumanMessage("What is the weather in Kiel?")]
    first = with_tools.invoke(history)
    [call] = first.tool_calls
    assert (call["name"], call["args"]) == ("get_weather", {"city": "Kiel"})
    history += [first, ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])]
    assert with_tools.invoke(history).text == "It is sunny in Kiel."
    assert provider_server.chat_requests[1].body["messages"][-1]["content"] == "Sunny in Kiel, 21 °C."


def test_a_blocked_answer(llm, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    answer = llm.invoke("Write about the harbour.")
    assert answer.text == ""
    [block] = answer.content
    assert block["type"] == "refusal" and "Say customer." in block["refusal"]
    assert answer.response_metadata["status"] == "incomplete"
    assert answer.response_metadata["incomplete_details"]["reason"] == "content_filter"
    assert "harbour woke" not in repr(answer)


def test_a_blocked_stream(llm, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", message="Say customer.").configurations.set(
        [configuration])
    provider_server.script([{"text": "Dear Kunde, the harbour woke early."}])
    chunks = list(llm.stream("Write about the harbour."))
    assert "".join(chunk.text for chunk in chunks) == ""
    refusals = [block["refusal"] for chunk in chunks if isinstance(chunk.content, list)
                for block in chunk.content if isinstance(block, dict) and block.get("type") == "refusal"]
    assert any("Say customer." in refusal for refusal in refusals)
    assert chunks[-1].response_metadata["incomplete_details"]["reason"] == "content_filter"
    assert "harbour woke" not in repr(chunks)
