"""/healthz answers a load balancer's probe by IP over plain HTTP, with ALLOWED_HOSTS naming only the public
host and GAVEL_HTTPS's redirect on (issue 42); every other path still refuses an unknown Host, saying on
each surface, in its own error shape, that the host is not in ALLOWED_HOSTS."""
import pytest

pytestmark = pytest.mark.django_db
PROBE = "10.0.0.5:8000"


@pytest.fixture
def production(settings):
    settings.ALLOWED_HOSTS = ["gavel.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
    return settings


def test_the_probe_by_ip_over_http_gets_the_health(client, production):
    for method in (client.get, client.head):
        response = method("/healthz", HTTP_HOST=PROBE)
        assert response.status_code == 200, response.content
        assert response["Content-Type"] == "application/json" and response["X-Request-ID"]
    assert client.get("/healthz", HTTP_HOST=PROBE).json()["database"]["ok"] is True


def test_only_the_probe_skips_the_host_check(client, production):
    assert client.post("/healthz", HTTP_HOST=PROBE).status_code == 400
    assert client.get("/healthz/", HTTP_HOST=PROBE).status_code == 400
    assert client.get("/api/v1/policy", HTTP_HOST=PROBE).status_code == 400


def test_the_right_host_is_still_redirected_to_https_but_the_probe_is_not(client, production):
    page = client.get("/admin/", HTTP_HOST="gavel.example.org")
    assert page.status_code == 301 and page["Location"] == "https://gavel.example.org/admin/"
    assert client.get("/healthz", HTTP_HOST="gavel.example.org").status_code == 200
    assert client.get("/admin/login/", HTTP_HOST="gavel.example.org", HTTP_X_FORWARDED_PROTO="https").status_code == 200


def test_the_page_says_it_in_plain_text_without_entities(client, production):
    page = client.get("/admin/", HTTP_HOST=PROBE)
    assert page.status_code == 400 and page["Content-Type"] == "text/plain; charset=utf-8"
    text = page.content.decode()
    assert text.startswith(f"The host {PROBE} is not in ALLOWED_HOSTS")
    assert "&#x27;" not in text and "&" not in text


@pytest.mark.parametrize("path, message_of", [
    ("/api/v1/screenings", lambda body: body["error"]["message"]),
    ("/openai/v1/chat/completions", lambda body: body["error"]["message"]),
    ("/anthropic/v1/messages", lambda body: body["error"]["message"] if body.get("type") == "error" else None),
])
def test_the_api_paths_say_it_in_their_error_shape(client, production, path, message_of):
    response = client.post(path, {}, content_type="application/json", HTTP_HOST=PROBE)
    assert response.status_code == 400
    assert f"The host {PROBE} is not in ALLOWED_HOSTS" in message_of(response.json())


def test_a_hostile_host_is_not_repeated(client, production):
    page = client.get("/admin/", HTTP_HOST="<script>alert(1)</script>")
    assert page.status_code == 400
    assert b"<" not in page.content and b"script?alert?1??" in page.content


def test_prometheus_scrapes_by_ip_and_the_metrics_keep_their_own_guard(client, production):
    scraped = client.get("/metrics", HTTP_HOST=PROBE, REMOTE_ADDR="127.0.0.1")
    assert scraped.status_code == 200 and b"gavel_runs_total" in scraped.content
    refused = client.get("/metrics", HTTP_HOST=PROBE, REMOTE_ADDR="10.0.0.9")
    assert refused.status_code == 401
    assert client.post("/metrics", HTTP_HOST=PROBE, REMOTE_ADDR="127.0.0.1").status_code == 400
