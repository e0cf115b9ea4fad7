"""`manage.py seed_demo`: the demo policy, model, logins and consumer of the embedded default (SPEC §11.4).

Idempotent: every run leaves the same state and prints the same passwords and token. They are
drawn at random on the first run and kept in the local data folder (`var/demo-logins.json`,
readable by its owner only), never derived from anything public.
"""
import json
import os
import secrets
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

from governance import policy

from governance.work import queue
from governance.models import Configuration, Consumer, Task

DEMO_CONSUMER = "demo-app"
DEMO_USERS = ("admin", "policy-editor", "editor")
CREDENTIALS_FILE = "demo-logins.json"

# The demo model (judging/demo_model.py): answered through litellm's mock_response, with no model,
# no server and no network. `echo` writes (it repeats the last user message), `judge` judges the two
# house-style rules a machine can check. GAVEL_DEMO_MODEL (a litellm model string such as
# `openai/qwen2.5:7b`, at GAVEL_DEMO_API_BASE) puts a real local model in their place.
DEMO_MODEL_PROVIDER = {"name": "demo-model", "kind": "chat", "route": "demo", "trust_zone": "local", "timeout": 5}
LOCAL_MODEL_API_BASE = "http://127.0.0.1:11434/v1"  # Ollama's OpenAI-compatible endpoint


def demo_models() -> tuple[list[dict], str, str, str]:
    """(providers, provider name, writer model, judge model) of the demo configurations."""
    configured = os.environ.get("GAVEL_DEMO_MODEL", "").strip()
    if "/" not in configured:
        return [DEMO_MODEL_PROVIDER], DEMO_MODEL_PROVIDER["name"], "echo", "judge"
    route, model = configured.split("/", 1)
    local = {"name": "demo-local", "kind": "chat", "route": route,
             "api_base": os.environ.get("GAVEL_DEMO_API_BASE", "").strip() or LOCAL_MODEL_API_BASE,
             "trust_zone": "local", "timeout": 30}
    return [DEMO_MODEL_PROVIDER, local], local["name"], model, model


def demo_policy_document() -> dict:
    providers, provider, writer, judge = demo_models()
    return {
        "providers": providers,
        "configurations": [
            {
                "identifier": "demo",
                "provider": provider,
                "model": writer,
                "system_prompt": "You write short, plain texts for a company website.",
                # `en` selects the English and the language-neutral rules of the editorial corpus.
                "context_tags": ["house-style", "en"],
                "rules": {"mode": "report", "tags": ["house-style", "en"], "judges": ["demo-judge"], "default": "block"},
            },
            {
                "identifier": "demo-judge",
                "provider": provider,
                "model": judge,
                "temperature": 0.0,
                "timeout": 15,
            },
            {
                "identifier": "demo-writer",
                "provider": "demo-model",
                "model": "echo",
                "system_prompt": "You write product texts and meta descriptions for a company website.",
                "rules": {"mode": "report", "tags": ["house-style"], "judges": ["demo-writer-judge"], "default": "block"},
            },
            {
                "identifier": "demo-writer-judge",
                "provider": "demo-model",
                "model": "judge",
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
    return {**demo_policy_document(), "pattern_rules": corpus["pattern_rules"]}


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
    # Drafts (SPEC §12.5): every admin save lands in one; publishing stays with approvers (publish_policy).
    "governance.policydraft",
)


DEMO_NAMESPACE = uuid.UUID("6f1d2c0e-4a53-4c1b-9a57-1c2f6b0d9e11")


def demo_credentials() -> dict:
    """The demo passwords and token of this install: read from the data folder, or drawn at random
    and written there (mode 0600) on the first run."""
    folder = Path(settings.GAVEL_DATA_DIR)
    path = folder / CREDENTIALS_FILE
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        stored = {}
    passwords = stored.get("passwords") if isinstance(stored.get("passwords"), dict) else {}
    token = stored.get("token") if isinstance(stored.get("token"), str) else ""
    wanted = {"passwords": {user: passwords.get(user) or secrets.token_urlsafe(12) for user in DEMO_USERS},
              "token": token if token.startswith(Consumer.TOKEN_PREFIX) else Consumer.TOKEN_PREFIX + secrets.token_urlsafe(32)}
    if wanted != stored:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{CREDENTIALS_FILE}.{os.getpid()}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(wanted, handle, indent=2)
        os.replace(temporary, path)
    return wanted


def demo_token() -> str:
    return demo_credentials()["token"]


def base_url() -> str:
    """Where the printed links point: `make run PORT=…` passes its address."""
    return (os.environ.get("GAVEL_DEMO_URL") or "http://127.0.0.1:8000").rstrip("/")


class Command(BaseCommand):
    help = (
        "Create (or restore) the demo policy, the logins admin, policy-editor and editor, and the consumer "
        "demo-app. Idempotent; prints the logins and, alone on the last line, the demo token."
    )

    def handle(self, *args, **options):
        document = demo_policy()
        self.credentials = demo_credentials()
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
        url = base_url()
        model = document["configurations"][0]
        self.stdout.write(f"Demo model: configuration demo writes with provider {model['provider']}, model {model['model']}"
                          f"{' (no model server needed)' if model['provider'] == DEMO_MODEL_PROVIDER['name'] else ''}.")
        self.stdout.write(f"Demo tasks: {tasks} queued now; review them at {url}/review/")
        self.stdout.write(f"Log in at {url}/admin/ (editors: {url}/accounts/login/) as:")
        for username, password, role in logins:
            self.stdout.write(f"  {username} / {password}    ({role})")
        self.stdout.write(f"These logins and the token are kept in {Path(settings.GAVEL_DATA_DIR) / CREDENTIALS_FILE}.")
        self.stdout.write(f"Consumer {DEMO_CONSUMER} (granted: demo, demo-writer); its token, for 'Authorization: Bearer …':")
        self.stdout.write(token)

    def ensure_user(self, username: str, *, superuser=False, staff=False):
        """The user exists with this install's demo password and these rights; return the password."""
        User = get_user_model()
        password = self.credentials["passwords"][username]
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

    def ensure_consumer(self) -> str:
        token = self.credentials["token"]
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
