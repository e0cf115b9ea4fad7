"""The people and tasks of the review UI's tests: an editor who is not staff, an outsider, and task
rows as a worker leaves them (hints with real offsets, a stored refusal without its passage).

The term lists are real, so an edit is screened again for real: "Acme" is blocked, "revolutionary"
is reported.
"""
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from governance.models import Configuration, Provider, Task
from termlists.models import TermList

ANSWER = (
    "Our new kettle is a revolutionary step for every kitchen. It boils a full litre in under three minutes, "
    "switches itself off when the water is ready, and keeps the handle cool to the touch. "
    "Order today for guaranteed delivery by Friday, and enjoy your first cup of tea this weekend."
)
HYPE = "revolutionary"
PROMISE = "guaranteed delivery by Friday"
RULE_LINE = "Never promise delivery dates."


@pytest.fixture
def fast_passwords(settings):
    """Tests that log in through a form hash a password; the cheapest hasher keeps them fast."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def reviewer(db):
    """An editor: member of the group `editors`, not staff."""
    user = User.objects.create_user("reviewer", "reviewer@example.org", None)
    user.groups.add(Group.objects.get_or_create(name="editors")[0])
    return user


@pytest.fixture
def editor(reviewer):
    """A test client logged in as the editor."""
    client = Client()
    client.force_login(reviewer)
    return client


@pytest.fixture
def outsider(db):
    return User.objects.create_user("outsider", "outsider@example.org", None)


@pytest.fixture
def desk_policy(db):
    """Two configurations a task names, and the term lists its screening (and an edit's) runs."""
    provider = Provider.objects.create(name="desk-gateway", kind="chat", route="openai",
                                       api_base="http://127.0.0.1:9/v1", trust_zone="local", timeout=5)
    desk = Configuration.objects.create(identifier="newsroom-desk", provider=provider, model="writer")
    legal = Configuration.objects.create(identifier="newsroom-legal", provider=provider, model="writer")
    TermList.objects.create(name="Competitors", forbidden="Acme").configurations.set([desk])
    TermList.objects.create(name="Hype words", forbidden=HYPE, mode="report").configurations.set([desk])
    return desk, legal


def hinted_hints(text: str = ANSWER) -> list[dict]:
    """The hints a worker stores for ANSWER: a reported term, a judged rule, a judge that timed out."""
    hype, promise = text.index(HYPE), text.index(PROMISE)
    return [
        {"check": "term_list", "type": "forbidden", "configuration": "newsroom-desk", "list": "Hype words",
         "terms": [HYPE], "passage": HYPE, "start": hype, "end": hype + len(HYPE),
         "message": "The term list “Hype words” does not allow: revolutionary. (report mode: the text was delivered)"},
        {"check": "rules_judge", "type": "violation", "configuration": "newsroom-desk",
         "rule": {"number": 2, "line": RULE_LINE, "snippet": "house-style", "line_no": 3},
         "passage": PROMISE, "start": promise, "end": promise + len(PROMISE),
         "message": f"Rule 2 (“{RULE_LINE}”, snippet house-style) is violated by: “{PROMISE}”."},
        {"check": "rules_judge", "type": "not_checked", "configuration": "newsroom-legal", "reason": "timeout",
         "passage": None, "start": None, "end": None,
         "message": "The rules of newsroom-legal were not checked: the judge did not answer in time."},
    ]


def make_task(*, minutes_ago: int = 0, **values) -> Task:
    values.setdefault("configuration", "newsroom-desk")
    values.setdefault("messages", [{"role": "user", "content": "Describe the kettle for the shop."}])
    task = Task.objects.create(**values)
    if minutes_ago:
        Task.objects.filter(pk=task.pk).update(created=timezone.now() - timedelta(minutes=minutes_ago))
        task.refresh_from_db()
    return task


@pytest.fixture
def hinted_task(desk_policy):
    return make_task(status="ready", outcome="allowed_with_hints", answer=ANSWER, hints=hinted_hints(),
                     also=["newsroom-legal"], correlation_id="corr-hinted", attempts=1,
                     checks=[{"check": "term_list", "result": "reported"}, {"check": "rules_judge", "result": "reported"}],
                     completion={"provider": "desk-gateway", "model": "writer", "usage": {}, "cost": 0.0})


@pytest.fixture
def blocked_task(desk_policy):
    stored = "The term list “Competitors” does not allow: Acme."
    return make_task(status="blocked", outcome="blocked", answer="", hints=[], attempts=1,
                     refusal={"check": "term_list", "message": stored, "stored_message": stored},
                     correlation_id="corr-blocked", minutes_ago=5)


@pytest.fixture
def field_task(desk_policy):
    return make_task(kind="field_fill", status="ready", outcome="allowed", attempts=1,
                     answer="A kettle that boils a litre in three minutes and switches itself off.",
                     field={"record": "page:42", "name": "meta_description", "label": "Meta description",
                            "max_length": 160},
                     minutes_ago=10)


@pytest.fixture
def queued_task(desk_policy):
    return make_task(status="queued", minutes_ago=1)
