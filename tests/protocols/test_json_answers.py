"""Answers the client asked to be JSON (SPEC §11.8, §5.3): screened as JSON on every protocol, plain and
streamed; an answer that was to be JSON and does not parse is screened as text (docs/termlists.md);
a forced tool's arguments and a tool call's name and id are screened too. The conformance table
(tests/protocols/test_conformance.py) runs the main cases through every protocol; here are the edges,
and the SDKs' own parse helpers against a live Gavel."""
import json

import openai
import pydantic
import pytest

from termlists.models import TermList
from tests.protocols.adapters import sse_events

pytestmark = pytest.mark.django_db

GITHUB_KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
# The key with its first letter written as a JSON escape: a parser reads the key.
ESCAPED_KEY = "\\u0067" + GITHUB_KEY[1:]
JSON_OBJECT = {"type": "json_object"}


class City(pydantic.BaseModel):
    city: str
    street: str


@pytest.fixture
def token(configuration, make_consumer):
    return make_consumer("newsroom-app", [configuration])[1]


@pytest.fixture
def discounts(configuration):
    term_list = TermList.objects.create(name="Discounts", forbidden="Rabatt", message="No discounts.")
    term_list.configurations.set([configuration])
    return term_list


def chat(client, token, **body):
    body = {"model": "newsroom", "messages": [{"role": "user", "content": "Where is the shop?"}], **body}
    response = client.post("/openai/v1/chat/completions", data=json.dumps(body), content_type="application/json",
                           headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.content
    return response


def streamed(response) -> tuple[str, dict, bytes]:
    """(the text a client assembles, the last `gavel` member, every byte) of a Chat Completions stream."""
    raw = b"".join(response.streaming_content)
    text, gavel = "", None
    for _name, data in sse_events(raw):
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        if chunk.get("choices"):
            text += chunk["choices"][0]["delta"].get("content") or ""
        gavel = chunk.get("gavel", gavel)
    return text, gavel, raw


def test_a_json_stream_that_would_be_live_is_held_so_an_escaped_key_is_masked(client, token, provider_server):
    """No term list, no block mode: a text stream is live (§8.1). A JSON answer's escapes hide a key from
    a live stream's redaction, so its stream is held and the key masked in the decoded strings."""
    answer = '{"city": "Kiel", "note": "' + ESCAPED_KEY + '"}'
    provider_server.script([{"stream_chunks": [answer[:20], answer[20:40], answer[40:]]}])
    text, gavel, raw = streamed(chat(client, token, response_format=JSON_OBJECT, stream=True))
    assert GITHUB_KEY[4:20].encode() not in raw
    assert json.loads(text) == {"city": "Kiel", "note": "ghp_***"}
    assert gavel["outcome"] == "allowed"
    assert {"check": "secret_redaction", "result": "redacted"} in gavel["checks"]


def test_a_text_stream_with_no_list_stays_live(client, token, provider_server):
    provider_server.script([{"stream_chunks": ["One ", "two ", "three."]}])
    text, _gavel, raw = streamed(chat(client, token, stream=True))
    assert text == "One two three." and raw.count(b'"content":') >= 3


@pytest.mark.parametrize("answer", [
    '{"city": "\\u0052abatt", "street": "Holstenstrasse 12"',  # cut off: a repairing parser still reads it
    'Here you go: {"city": "\\u0052abatt"}',  # prose around it
], ids=["cut_off", "prose"])
def test_an_answer_that_was_to_be_json_and_does_not_parse_is_searched_with_its_escapes_decoded(
        client, token, provider_server, discounts, answer):
    provider_server.script([{"text": answer}])
    body = chat(client, token, response_format=JSON_OBJECT).json()
    assert body["gavel"]["outcome"] == "blocked" and "No discounts." in body["gavel"]["block"]["message"]
    assert "u0052abatt" not in json.dumps(body) and body["choices"][0]["message"]["content"] is None


def test_an_answer_that_was_to_be_json_and_does_not_parse_has_an_escaped_key_masked(client, token, provider_server):
    provider_server.script([{"text": '{"note": "' + ESCAPED_KEY + '"'}])
    body = chat(client, token, response_format=JSON_OBJECT).json()
    content = body["choices"][0]["message"]["content"]
    assert GITHUB_KEY[4:20] not in content and content == '{"note": "ghp_***"'


def test_prose_where_json_was_asked_is_text_and_holds_the_required_terms(client, token, provider_server,
                                                                         configuration):
    """Screened as text: a finished text (30 words and more) must carry the required terms (SPEC §5.3)."""
    TermList.objects.create(name="Masthead", required="Harbour Gazette").configurations.set([configuration])
    prose = ("The harbour woke early this morning, and the first ferries left on time while the fish market "
             "opened its doors to a crowd of cooks, tourists and neighbours who came for the catch of the night.")
    provider_server.script([{"text": prose}, {"text": json.dumps({"city": prose, "street": prose})}])
    blocked = chat(client, token, response_format=JSON_OBJECT).json()
    assert blocked["gavel"]["outcome"] == "blocked" and "Harbour Gazette" in blocked["gavel"]["block"]["message"]
    # A JSON answer that parses is not asked for required terms (SPEC §5.3).
    assert chat(client, token, response_format=JSON_OBJECT).json()["gavel"]["outcome"] == "allowed"


def test_a_forced_tool_s_escaped_arguments_are_read_as_json(client, token, provider_server, discounts):
    tool = {"type": "function", "function": {"name": "answer", "parameters": {"type": "object"}}}
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "answer",
                                             "arguments": '{"city": "\\u0052abatt"}'}]}])
    body = chat(client, token, tools=[tool], tool_choice={"type": "function", "function": {"name": "answer"}}).json()
    assert body["gavel"]["outcome"] == "blocked"
    assert not body["choices"][0]["message"].get("tool_calls")


def test_a_forbidden_term_in_a_tool_name_is_reported_at_the_name(client, token, provider_server, configuration):
    TermList.objects.create(name="Brand words", forbidden="Kunde", mode="report").configurations.set([configuration])
    tool = {"type": "function", "function": {"name": "save", "parameters": {"type": "object"}}}
    provider_server.script([{"tool_calls": [{"id": "call_1", "name": "kunde-save", "arguments": {"a": "b"}}]}])
    [hint] = chat(client, token, tools=[tool]).json()["gavel"]["hints"]
    assert (hint["type"], hint["terms"], hint["tool_call"], hint["argument"]) == ("forbidden", ["Kunde"], 0, "(name)")


# --- the SDKs' parse helpers, against a live Gavel ---
@pytest.fixture
def sdk(live_server, token):
    from judging.llm.loader import _litellm

    _litellm()  # imported before any client's timeout starts
    with openai.OpenAI(base_url=f"{live_server.url}/openai/v1", api_key=token, max_retries=0, timeout=30) as client:
        yield client


@pytest.mark.django_db(transaction=True)
def test_chat_completions_parse_never_decodes_a_blocked_answer_to_the_forbidden_word(sdk, provider_server,
                                                                                     discounts):
    provider_server.script([{"text": '{"city": "\\u0052abatt", "street": "Holstenstrasse 12"}'},
                            {"text": '{"city": "\\u004biel", "street": "Holstenstrasse 12"}'}])
    # The SDK's own answer to a block (finish_reason content_filter): it raises, and parses nothing.
    with pytest.raises(openai.ContentFilterFinishReasonError) as raised:
        sdk.chat.completions.parse(model="newsroom", response_format=City,
                                   messages=[{"role": "user", "content": "Where is the shop?"}])
    message = raised.value.completion.choices[0].message
    assert message.content is None and "No discounts." in message.refusal
    assert "Rabatt" not in raised.value.completion.model_dump_json().replace("not allow: Rabatt", "")
    # A clean answer is delivered as the provider wrote it and parses as usual.
    clean = sdk.chat.completions.parse(model="newsroom", response_format=City,
                                       messages=[{"role": "user", "content": "Where is the shop?"}])
    assert clean.choices[0].message.parsed == City(city="Kiel", street="Holstenstrasse 12")


@pytest.mark.django_db(transaction=True)
def test_responses_parse_never_decodes_a_blocked_answer_to_the_forbidden_word(sdk, provider_server, discounts):
    provider_server.script([{"text": '{"city": "\\u0052abatt", "street": "Holstenstrasse 12"}'}])
    response = sdk.responses.parse(model="newsroom", input="Where is the shop?", text_format=City)
    assert response.status == "incomplete" and response.output_parsed is None
    assert "Rabatt" not in (response.output_text or "")


@pytest.mark.django_db(transaction=True)
def test_anthropic_messages_parse_never_decodes_a_blocked_answer_to_the_forbidden_word(live_server, token,
                                                                                       provider_server, discounts):
    import anthropic

    provider_server.script([{"text": '{"city": "\\u0052abatt", "street": "Holstenstrasse 12"}'},
                            {"text": '{"city": "\\u004biel", "street": "Holstenstrasse 12"}'}])
    ask = {"model": "newsroom", "max_tokens": 200, "output_format": City,
           "messages": [{"role": "user", "content": "Where is the shop?"}]}
    with anthropic.Anthropic(base_url=f"{live_server.url}/anthropic", api_key=token, max_retries=0,
                             timeout=30) as client:
        # A block's text block is Gavel's message, which is no City: the helper raises, parsing nothing.
        with pytest.raises(pydantic.ValidationError):
            client.messages.parse(**ask)
        [sent] = [r.body for r in provider_server.chat_requests]
        assert sent["response_format"]["type"] == "json_schema"  # output_config.format reached the provider
        clean = client.messages.parse(**ask)
    assert clean.stop_reason == "end_turn" and clean.parsed_output == City(city="Kiel", street="Holstenstrasse 12")


@pytest.mark.parametrize("listed", [False, True], ids=["no_list", "list"])
def test_a_json_answer_nested_too_deep_to_walk_is_screened_as_text_not_a_500(client, token, provider_server,
                                                                             request, listed):
    if listed:
        request.getfixturevalue("discounts")
    deep = "[" * 50_000 + '"\\u0052abatt"' + "]" * 50_000
    provider_server.script([{"text": deep}])
    body = chat(client, token, response_format=JSON_OBJECT).json()
    assert body["gavel"]["outcome"] == ("blocked" if listed else "allowed")
