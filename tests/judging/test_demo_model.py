"""The demo model of the embedded default: a writer and a judge that answer with no model server."""
import json

import pytest

from judging import demo_model, prompts

RULES = [(1, "Headlines carry no exclamation mark."), (2, "Address the reader formally."),
         (3, "Write the numbers one to twelve as words.")]


def verdict(text):
    return json.loads(demo_model.answer("judge", prompts.judge_prompt(RULES, text).messages))


def test_the_judge_finds_its_two_rules_with_passages_copied_from_the_text():
    text = "Book your seat today! The course for 8 teams starts in May; 2024 was full."
    found = verdict(text)["violations"]
    assert found == [{"rule": 1, "passage": "Book your seat today!"}, {"rule": 3, "passage": "8"}]
    assert all(v["passage"] in text for v in found)


def test_the_judge_allows_a_text_that_breaks_neither_and_knows_no_other_rule():
    assert verdict("We answer every question within eight hours, and 2024 was a good year.") == {"violations": []}
    assert verdict("Hey you, 100 percent of 13 readers agree.") == {"violations": []}


def test_the_judge_reads_the_text_between_the_markers_only():
    # The rules themselves mention no digit or "!": a text without either passes, whatever the prompt says.
    messages = prompts.judge_prompt(RULES, "Plain words.").messages
    messages[0]["content"] += "\nExample: Buy 3 now!"
    assert json.loads(demo_model.answer("judge", messages)) == {"violations": []}


def test_the_writer_echoes_the_last_user_message():
    messages = [{"role": "system", "content": "Write."}, {"role": "user", "content": "first"},
                {"role": "assistant", "content": "x"}, {"role": "user", "content": "second"}]
    assert demo_model.answer("echo", messages) == "second"


@pytest.mark.django_db
def test_the_demo_configuration_answers_and_its_judge_reports_a_rule(make_consumer):
    """What the README shows: `demo` answers through litellm's mock path and the demo judge reports."""
    from django.core.management import call_command
    from rest_framework.test import APIClient

    from governance.models import Configuration

    call_command("seed_demo", stdout=open("/dev/null", "w"))
    _consumer, token = make_consumer("readme", Configuration.objects.filter(identifier="demo"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    text = ("Book your seat today! Our planning course for 8 teams starts in May, and every participant "
            "receives a printed handbook, a certificate and a year of updates to the course material.")
    body = client.post("/api/v1/completions", {"configuration": "demo", "messages": [
        {"role": "user", "content": text}]}, format="json").json()
    assert body["text"] == text and body["completion"]["provider"] == "demo-model"
    judged = [(h["rule"]["line"], h["passage"]) for h in body["hints"] if h["check"] == "rules_judge"]
    assert judged == [("Headlines carry no exclamation mark.", "Book your seat today!"),
                      ("Write the numbers one to twelve as words.", "8")]
    assert body["outcome"] == "allowed_with_hints"
