"""Defect 1 of issue 10: a real SSE client library gets the stream (SPEC §8.1).

httpx-sse sends `Accept: text/event-stream`, as every SSE client does; Gavel
must serve the stream whatever `Accept` says. Against a live server, so the
bytes go over a socket exactly as a client reads them.
"""
import httpx
import pytest
from httpx_sse import connect_sse

USER = [{"role": "user", "content": "Write about the harbour."}]


@pytest.fixture
def live_token(transactional_db, configuration, make_consumer):
    _consumer, token = make_consumer("sse-app", [configuration])
    return token


def test_httpx_sse_reads_a_live_stream(live_server, live_token, provider_server):
    chunks = ["The harbour", " woke", " early."]
    provider_server.script([{"stream_chunks": chunks}])
    headers = {"Authorization": f"Bearer {live_token}"}
    body = {"configuration": "newsroom", "messages": USER, "stream": True}
    with httpx.Client(base_url=live_server.url, timeout=10) as client:
        with connect_sse(client, "POST", "/api/v1/completions", json=body, headers=headers) as source:
            assert source.response.status_code == 200
            assert source.response.request.headers["Accept"] == "text/event-stream"
            events = [(event.event, event.json()) for event in source.iter_sse()]
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("done") == 1
    assert "".join(data["text"] for name, data in events if name == "delta") == "".join(chunks)
    assert events[-1][1]["outcome"] == "allowed"


def test_an_error_before_the_stream_is_json_whatever_accept_says(live_server, live_token, provider_server):
    headers = {"Authorization": f"Bearer {live_token}", "Accept": "text/event-stream"}
    body = {"configuration": "unknown-config", "messages": USER, "stream": True}
    response = httpx.post(f"{live_server.url}/api/v1/completions", json=body, headers=headers, timeout=10)
    assert response.status_code == 404
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "unknown_configuration"
