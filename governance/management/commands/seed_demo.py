"""`manage.py seed_demo`: the demo policy, logins and consumer of the embedded default (SPEC §11.4).

Idempotent: every run leaves the same state and prints the same passwords and token, because
they are derived from SECRET_KEY rather than stored anywhere in clear.
"""
import base64
import hashlib
import hmac
import uuid
from pathlib import Path

import yaml

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management.base import BaseCommand
from django.db import transaction

from governance import policy, queue
from governance.models import Configuration, Consumer, Task

ADMIN_URL = "http://127.0.0.1:8000/admin/"
REVIEW_URL = "http://127.0.0.1:8000/review/"
LOGIN_URL = "http://127.0.0.1:8000/accounts/login/"
DEMO_CONSUMER = "demo-app"

DEMO_POLICY = {
    "providers": [
        {
            "name": "demo-local",
            "kind": "chat",
            "route": "openai",
            "api_base": "http://127.0.0.1:11434/v1",
            "trust_zone": "local",
            "timeout": 30,
        },
        {
            # Answered by litellm's own mock_response (the last user message, echoed): no model,
            # no server, no network. It lets the first run show a populated review queue.
            "name": "demo-echo-no-model",
            "kind": "chat",
            "route": "demo",
            "trust_zone": "local",
            "timeout": 5,
        },
    ],
    "configurations": [
        {
            "identifier": "demo",
            "provider": "demo-local",
            "model": "qwen2.5:7b",
            "system_prompt": "You write short, plain texts for a company website.",
            # `en` selects the English and the language-neutral rules of the editorial corpus.
            "context_tags": ["house-style", "en"],
            "rules": {"mode": "report", "tags": ["house-style", "en"], "judges": ["demo-judge"], "default": "block"},
        },
        {
            "identifier": "demo-judge",
            "provider": "demo-local",
            "model": "qwen2.5:7b",
            "temperature": 0.0,
            "timeout": 15,
        },
        {
            "identifier": "demo-writer",
            "provider": "demo-echo-no-model",
            "model": "echo",
            "system_prompt": "You write product texts and meta descriptions for a company website.",
            "rules": {"mode": "report", "tags": ["house-style"], "judges": ["demo-writer-judge"], "default": "block"},
        },
        {
            "identifier": "demo-writer-judge",
            "provider": "demo-echo-no-model",
            "model": "echo",
            "temperature": 0.0,
        },
    ],
    "snippets": [
        {
            "identifier": "house-style",
            "name": "House style",
            "tags": ["house-style"],
            "sort": 10,
            "body": (
                "Headlines carry no exclamation mark.\n"
                "Address the reader formally.\n"
                "Write the numbers one to twelve as words.\n"
            ),
        },
    ],
    "term_lists": [
        {
            "name": "Demo brand words",
            "configurations": ["demo"],
            "forbidden": ["Kunde", "Rabatt*"],
            "mode": "block",
            "message": "Write “Mandant” instead of “Kunde”, and make no discount promises.",
        },
        {
            "name": "Demo buzzwords",
            "configurations": ["demo-writer"],
            "forbidden": ["leverage", "synergy", "world-class"],
            "mode": "report",
            "message": "Say what the product does instead.",
        },
        {
            "name": "Demo brand words (writer)",
            "configurations": ["demo-writer"],
            "forbidden": ["Kunde", "Rabatt*"],
            "mode": "block",
            "message": "Write “Mandant” instead of “Kunde”, and make no discount promises.",
        },
    ],
}

# The editorial starter corpus (docs/editorial-corpus.md), shipped with the code and loaded with the demo.
EDITORIAL_CORPUS = Path(settings.BASE_DIR) / "policies" / "editorial-starter.yaml"


def demo_policy() -> dict:
    """The demo policy with the pattern rules of the editorial starter corpus."""
    corpus = yaml.safe_load(EDITORIAL_CORPUS.read_text(encoding="utf-8"))
    return {**DEMO_POLICY, "pattern_rules": corpus["pattern_rules"]}


# The demo tasks (SPEC §10) answered by the echo provider: their instruction is their answer.
# Fixed ids keep seed_demo idempotent: a task that exists is left as it is (an editor may have
# reviewed it).
DEMO_TASKS = (
    ("ready-with-hints", "queued_task", None,
     "Our new planning tool helps teams leverage their calendars: it finds a free hour for everyone, "
     "books the room and sends the agenda before the meeting starts, so nobody has to ask twice "
     "and the week keeps its shape even when plans change at short notice."),
    ("blocked", "queued_task", None,
     "Every Kunde who books this week receives a Rabatt of twenty percent on the first year, and the "
     "offer is valid for all plans, including the new team plan that we launched last month for "
     "growing companies with more than ten people."),
    ("failed", "queued_task", None, "litellm.InternalServerError"),
    ("field-fill", "field_fill",
     {"record": "page:42", "name": "meta_description", "label": "Meta description", "max_length": 160},
     "Plan meetings without the back and forth: our planning tool finds a free hour for the whole team, "
     "books a room that fits, sends the agenda in advance and moves everything when someone cancels, "
     "so your week stays in order."),
)

# The policy models a policy editor may add, change and view (SPEC §1); the admin-only fields
# stay read-only for this user (SPEC §2.3).
POLICY_EDITOR_MODELS = (
    "governance.provider",
    "governance.configuration",
    "snippets.snippet",
    "snippets.patternrule",
    "termlists.termlist",
    # Examples change what is tested, never what is enforced (SPEC §12.1).
    "governance.policyexample",
)


DEMO_NAMESPACE = uuid.UUID("6f1d2c0e-4a53-4c1b-9a57-1c2f6b0d9e11")


def derive(purpose: str, length: int = 43) -> str:
    """A stable secret for `purpose`: HMAC-SHA256 of SECRET_KEY, URL-safe, so reruns print the same."""
    digest = hmac.new(settings.SECRET_KEY.encode("utf-8"), purpose.encode("utf-8"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")[:length]


def demo_token() -> str:
    return Consumer.TOKEN_PREFIX + derive(DEMO_CONSUMER)


class Command(BaseCommand):
    help = (
        "Create (or restore) the demo policy, the logins admin, policy-editor and editor, and the consumer "
        "demo-app. Idempotent; prints the logins and, alone on the last line, the demo token."
    )

    def handle(self, *args, **options):
        document = demo_policy()
        with transaction.atomic():
            report = policy.import_policy(document)
            logins = [
                ("admin", self.ensure_user("admin", superuser=True), "administrator: every field, /admin/"),
                ("policy-editor", self.ensure_policy_editor(),
                 "policy editor: term lists, snippets, pattern rules, configurations"),
                ("editor", self.ensure_editor(), "reviewer: group editors, the review UI at /review/"),
            ]
            token = self.ensure_consumer()
        tasks = self.ensure_demo_tasks()

        self.stdout.write(
            f"Demo policy: {len(report.created)} created, {len(report.changed)} changed, "
            f"{len(report.unchanged)} unchanged."
        )
        self.stdout.write(
            f"Editorial corpus: {len(document['pattern_rules'])} pattern rules from policies/{EDITORIAL_CORPUS.name}; "
            "the demo configuration checks those tagged en."
        )
        self.stdout.write(f"Demo tasks: {tasks} queued now; review them at {REVIEW_URL}")
        self.stdout.write(f"Log in at {ADMIN_URL} (editors: {LOGIN_URL}) as:")
        for username, password, role in logins:
            self.stdout.write(f"  {username} / {password}    ({role})")
        self.stdout.write(f"Consumer {DEMO_CONSUMER} (granted: demo, demo-writer); its token, for 'Authorization: Bearer …':")
        self.stdout.write(token)

    def ensure_user(self, username: str, *, superuser=False, staff=False):
        """The user exists with the derived password and these rights; return the password."""
        User = get_user_model()
        password = derive(f"password:{username}", 16)
        user, created = User.objects.get_or_create(username=username)
        wanted = {"is_superuser": superuser, "is_staff": superuser or staff, "is_active": True}
        dirty = created or any(getattr(user, k) != v for k, v in wanted.items())
        for key, value in wanted.items():
            setattr(user, key, value)
        if created or not user.check_password(password):
            user.set_password(password)
            dirty = True
        if dirty:
            user.save()
        return password

    def ensure_policy_editor(self) -> str:
        password = self.ensure_user("policy-editor", staff=True)
        user = get_user_model().objects.get(username="policy-editor")
        user.user_permissions.add(*self.policy_permissions())
        return password

    def ensure_editor(self) -> str:
        password = self.ensure_user("editor")
        group, _ = Group.objects.get_or_create(name="editors")
        get_user_model().objects.get(username="editor").groups.add(group)
        return password

    @staticmethod
    def policy_permissions() -> list:
        permissions = []
        for label in POLICY_EDITOR_MODELS:
            model = apps.get_model(label)
            content_type = ContentType.objects.get_for_model(model)
            codenames = [f"{action}_{model._meta.model_name}" for action in ("add", "change", "view")]
            permissions += Permission.objects.filter(content_type=content_type, codename__in=codenames)
        return permissions

    @staticmethod
    def ensure_consumer() -> str:
        token = demo_token()
        consumer = Consumer.objects.filter(name=DEMO_CONSUMER).first() or Consumer(name=DEMO_CONSUMER)
        # Save only when something differs, so a rerun on a seeded database writes nothing.
        watched = ("token_hash", "token_prefix", "revoked_at", "is_admin")
        stored = [getattr(consumer, name) for name in watched]
        consumer.set_token(token)
        consumer.revoked_at = None
        consumer.is_admin = False
        if consumer.pk is None or [getattr(consumer, name) for name in watched] != stored:
            consumer.save()
        consumer.configurations.add(*Configuration.objects.filter(identifier__in=["demo", "demo-writer"]))
        return token

    @staticmethod
    def ensure_demo_tasks() -> int:
        """Queue each demo task that does not exist yet; return how many were queued now."""
        consumer = Consumer.objects.get(name=DEMO_CONSUMER)
        queued = 0
        for name, kind, field, instruction in DEMO_TASKS:
            task_id = uuid.uuid5(DEMO_NAMESPACE, name)
            if Task.objects.filter(pk=task_id).exists():
                continue
            task = Task.objects.create(
                id=task_id, kind=kind, consumer=consumer, configuration="demo-writer", field=field,
                messages=[{"role": "user", "content": instruction}],
            )
            queued += 1
            transaction.on_commit(lambda pk=task.pk: queue.enqueue(pk))
        return queued
