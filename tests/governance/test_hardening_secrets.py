"""Issue 25, secrets (findings 1-5, SPEC §9): every way text enters Gavel is masked before it is stored or
sent to a model. One list of secret shapes drives every creation path (tasks, batches, field fills, policy
examples, edits, metadata); afterwards every table is read, and every request the test provider received."""
import json
import zlib

import pytest
from django.apps import apps

from governance.models import Batch, PolicyExample, Task
from governance.policy.importing import import_policy
from governance.review.kept import keep_as_example
from governance.screening.redaction import redact
from governance.work import editors
from tests.governance.test_task_workers import CLEAN
from tests.governance.test_tasks_api import eager  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

KEY40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
# (name, the secret as a consumer writes it, the part that must never be stored or sent)
SHAPES = [
    ("openai", "sk-proj-Q8vN2mR5tW1xY4zA7bC0dE3fG6hJ9k", "Q8vN2mR5tW1xY4zA7bC0dE3fG6hJ9k"),
    ("anthropic", "sk-ant-api03-Hq2Wr8Tz5Yp1Lm4Nx7Vb0Cd3Fg6Jk9", "Hq2Wr8Tz5Yp1Lm4Nx7Vb0Cd3Fg6Jk9"),
    ("aws_access_key", "AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    ("aws_secret_labelled", f"AWS secret: aws_secret_access_key = {KEY40}", KEY40),  # finding 3
    ("github", "ghp_R7tY2uI9oP4aS6dF1gH3jK5lZ8xC0vB2nM4q", "R7tY2uI9oP4aS6dF1gH3jK5lZ8xC0vB2nM4q"),
    ("github_pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "0123456789_abcdefghijklmnop"),
    ("gitlab", "glpat-Xy7Zq2Wr9Ts4Vu6Pk1Lm", "Xy7Zq2Wr9Ts4Vu6Pk1Lm"),
    ("slack", "xoxb-123456789012-abcdefGHIJKL", "123456789012-abcdefGHIJKL"),
    ("slack_webhook", "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/xYz789AbC012dEf345", "T0123ABCD/B0456EFGH"),
    ("google", "AIzaSyD4x9Qw2Er7Ty1Ui8Op3As6Df0Gh5Jk2Lm", "SyD4x9Qw2Er7Ty1Ui8Op3As6Df0Gh5Jk2Lm"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("bearer", "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("gavel_token", "gvl_Zr8Xq3Wm7Tn1Vb5Kc9Lp2Hs6", "Zr8Xq3Wm7Tn1Vb5Kc9Lp2Hs6"),
    ("stripe", "sk_live_51Hq2Wr8Tz5Yp1Lm4Nx7Vb0", "51Hq2Wr8Tz5Yp1Lm4Nx7Vb0"),
    ("pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x9Qw2Er7Ty1Ui8Op3As6Df0Gh5Jk2Lm\n"
            "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA7x9Qw2Er7"),
    ("password", "db_password=Tr0ub4dorXyz3", "Tr0ub4dorXyz3"),
    ("url_userinfo", "https://admin:S3cr3tPa55w0rd@db.example.com/", "S3cr3tPa55w0rd"),
    ("url_query", "https://api.example.com/v1?api_key=Qm9vT2xAc2VjcmV0", "Qm9vT2xAc2VjcmV0"),
    # Invisible characters outside category Cf inside a key (finding 5).
    ("hidden_cgj", "sk-Hq2Wr8Tz5\u034fYp1Lm4Nx7Vb0Cd3Fg6", "Yp1Lm4Nx7Vb0Cd3Fg6"),
    ("hidden_vs16", "ghp_\ufe0fZ7tY2uI9oP4aS6dF1gH3jK5lZ8xC0vB2nM4w", "Z7tY2uI9oP4aS6dF1gH3jK5lZ8xC0vB2nM4w"),
    ("hidden_hangul_filler", "glpat-\u3164Wq7Zq2Wr9Ts4Vu6Pk1Ln", "Wq7Zq2Wr9Ts4Vu6Pk1Ln"),
]
FRAGMENTS = [fragment for _name, _secret, fragment in SHAPES]


def sentence(index: int = 0) -> str:
    """Every shape in one text, as a person pastes them into an instruction."""
    return f"Text {index}. " + "\n".join(f"Use {secret} here." for _name, secret, _fragment in SHAPES)


def leaked(text: str) -> list[str]:
    return [name for (name, _secret, fragment) in SHAPES if fragment in text]


def every_table() -> str:
    """Every row of every table (history tables included; compressed documents opened), as one text."""
    dumped = []
    for model in apps.get_models():
        for row in model._base_manager.values():
            for value in row.values():
                if isinstance(value, memoryview):
                    value = bytes(value)
                if isinstance(value, bytes):
                    try:
                        value = zlib.decompress(value).decode("utf-8", "replace")
                    except zlib.error:
                        value = value.decode("utf-8", "replace")
                dumped.append(json.dumps(value, default=str, ensure_ascii=False))
    return "\n".join(dumped)


def sent_to_models(provider_server) -> str:
    return "\n".join(json.dumps(request.body, ensure_ascii=False) for request in provider_server.requests)


@pytest.mark.parametrize("name,secret,fragment", SHAPES, ids=[s[0] for s in SHAPES])
def test_each_shape_is_masked_alone_and_inside_a_sentence(name, secret, fragment):
    assert fragment not in redact(secret).text
    assert fragment not in redact(f"Please use {secret} for the import.").text


def test_a_labelled_assignment_masks_the_value_not_the_label():
    text = f"AWS secret: aws_secret_access_key = {KEY40}"
    assert redact(text).text == "AWS secret: aws_secret_access_key = ***"


def tool_call_messages(index: int) -> list[dict]:
    """An assistant turn proposing a tool call whose arguments hold every shape (finding 2)."""
    arguments = json.dumps({"config": {name: secret for name, secret, _f in SHAPES}})
    return [
        {"role": "user", "content": f"Store the settings {index}."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{index}", "type": "function", "function": {"name": "save_settings", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": f"call_{index}", "content": "saved"},
        {"role": "user", "content": [{"type": "text", "text": sentence(index)}]},
    ]


def field_of(index: int) -> dict:
    """Field facts a consumer supplies: record and label are sent to the model too (finding 4)."""
    _n, openai, _f = SHAPES[0]
    _n, pat, _f = SHAPES[5]
    return {"record": f"page:{index}:{openai}", "name": "meta_description", "label": f"Meta ({pat})",
            "max_length": 500}


def test_no_creation_path_stores_or_sends_a_secret(api, eager, provider_server, settings,  # noqa: F811
                                                   django_capture_on_commit_callbacks, configuration, django_user_model):
    settings.GAVEL_CALLBACK_HOSTS = ["hooks.example.org"]
    provider_server.set_default({"text": CLEAN})

    def post(path, body):
        with django_capture_on_commit_callbacks(execute=True):
            return api.post(path, body, format="json")

    # Tasks: an instruction, messages with tool-call arguments, a field fill with its metadata.
    assert post("/api/v1/tasks", {"kind": "queued_task", "configuration": "newsroom",
                                  "instruction": sentence(1)}).status_code == 202
    assert post("/api/v1/tasks", {"kind": "queued_task", "configuration": "newsroom",
                                  "messages": tool_call_messages(2)}).status_code == 202
    assert post("/api/v1/tasks", {"kind": "field_fill", "configuration": "newsroom", "instruction": sentence(3),
                                  "field": field_of(3)}).status_code == 202
    # Batches: the same shapes in every kind of item, and in the batch's name (finding 1).
    response = post("/api/v1/batches", {"name": f"Import with {SHAPES[2][1]} and {SHAPES[12][1]}", "items": [
        {"kind": "queued_task", "configuration": "newsroom", "instruction": sentence(4)},
        {"kind": "queued_task", "configuration": "newsroom", "messages": tool_call_messages(5)},
        {"kind": "field_fill", "configuration": "newsroom", "instruction": sentence(6), "field": field_of(6)},
    ]})
    assert response.status_code == 202, response.content
    assert Task.objects.count() == 6 and Batch.objects.count() == 1
    assert all(t.status == "ready" for t in Task.objects.all()), [t.failure for t in Task.objects.all()]

    # An editor's edit, and the edited text kept as a policy example.
    editor = django_user_model.objects.create_user("ed", is_staff=True)
    task = Task.objects.filter(kind="queued_task").order_by("created").first()
    editors.accept(task, user=editor, edited_text=sentence(7))
    keep_as_example(Task.objects.get(pk=task.pk), user=editor)
    # Policy examples: from a policy file (text, note, tool calls) and written directly.
    import_policy({"examples": [{
        "name": "pasted keys", "configuration": "newsroom", "text": sentence(8), "note": sentence(9),
        "tool_calls": [{"name": "save_settings", "arguments": {"token": SHAPES[0][1], "note": sentence(10)}}],
        "expect": {"outcome": "allowed"}}]})
    PolicyExample.objects.create(name="admin typed", configuration="newsroom", text=sentence(11),
                                 note=sentence(12), expect_outcome="allowed")

    assert leaked(every_table()) == []
    requests = sent_to_models(provider_server)
    assert len(provider_server.chat_requests) == 6
    assert leaked(requests) == []
    # What was sent is the masked text, not nothing: the field facts and the tool call reach the model.
    assert "page:3:sk-***" in requests and "save_settings" in requests


def test_a_callback_url_with_credentials_is_refused_naming_the_field(api, settings):
    settings.GAVEL_CALLBACK_HOSTS = ["hooks.example.org"]

    def post(path, body):
        return api.post(path, body, format="json")

    # A callback URL with credentials is refused, naming the field; nothing of it is stored.
    for url in ("https://user:S3cr3tPa55w0rd@hooks.example.org/in",
                "https://hooks.example.org/in?token=Qm9vT2xAc2VjcmV0"):
        refused = post("/api/v1/tasks", {"kind": "queued_task", "configuration": "newsroom", "instruction": "Hi.",
                                         "callback_url": url})
        assert refused.status_code == 400 and "callback_url" in refused.json()["error"]["fields"]
        refused = post("/api/v1/batches", {"callback_url": url, "items": [
            {"kind": "queued_task", "configuration": "newsroom", "instruction": "Hi.", "callback_url": url}]})
        assert refused.status_code == 400 and "callback_url" in refused.json()["error"]["fields"]
    assert Task.objects.count() == 0 and Batch.objects.count() == 0
    assert leaked(every_table()) == []
