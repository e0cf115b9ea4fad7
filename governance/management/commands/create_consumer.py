"""`manage.py create_consumer NAME --configurations a,b [--admin]`: a new API consumer (SPEC §11.3).

`create_consumer NAME --rotate-secret` gives an existing consumer a new callback secret and prints it."""
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_slug
from django.db import transaction

from governance.models import FREE_KINDS, GRANTABLE_KINDS, THROTTLE_RATE_RE, Configuration, Consumer


def split_names(value: str) -> list[str]:
    names = []
    for name in (value or "").split(","):
        name = name.strip()
        if name and name not in names:
            names.append(name)
    return names


class Command(BaseCommand):
    help = (
        "Create an API consumer granted the given configurations and print its token once, alone on the "
        "last line. Only the token's hash is stored: a lost token cannot be shown again (revoke and create anew)."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="the consumer's name (a slug)")
        parser.add_argument("--configurations", default="", metavar="A,B",
                            help="comma-separated configuration identifiers the consumer may call")
        parser.add_argument("--admin", action="store_true",
                            help="an administrator consumer: may also read the governance log and the policy")
        parser.add_argument("--throttle", default="", metavar="RATE",
                            help="e.g. 120/min; default GAVEL_THROTTLE_RATE")
        parser.add_argument("--kinds", default="", metavar="K,L",
                            help="call kinds the consumer may state besides completion, queued_task and "
                                 "field_fill: internal, image_description")
        parser.add_argument("--blocks-as", choices=[c for c, _label in Consumer.BLOCKS_AS_CHOICES], default=None,
                            help="how a block reaches this consumer on the OpenAI and Anthropic endpoints: refusal "
                                 "(the protocol's refusal, the default) or message (a normal finished answer whose "
                                 "text is Gavel's message: for Claude Code and Codex)")
        parser.add_argument("--hints-as", choices=[c for c, _label in Consumer.HINTS_AS_CHOICES], default=None,
                            help="where report-mode hints reach this consumer: member (the gavel member only, the "
                                 "default) or note (also a short note after the answer text: for agent CLIs)")
        parser.add_argument("--rotate-secret", action="store_true",
                            help="give the existing consumer NAME a new callback secret and print it once "
                                 "(the old one stops verifying at once)")
        parser.add_argument("--new-token", action="store_true",
                            help="when a consumer NAME exists already (the same command run again), give it these "
                                 "grants and a new token instead of failing; its old token stops working")

    def handle(self, *args, name, configurations, admin, throttle, kinds="", rotate_secret=False, new_token=False,
               blocks_as=None, hints_as=None, **options):
        if rotate_secret:
            return self.rotate(name)
        try:
            validate_slug(name)
        except ValidationError as exc:
            raise CommandError(f"{name!r} is not a valid consumer name: use letters, digits, - and _.") from exc
        if throttle and not THROTTLE_RATE_RE.match(throttle):
            raise CommandError(f"{throttle!r} is not a rate: give e.g. 120/min or 5000/day.")
        granted_kinds = split_names(kinds)
        unknown_kinds = [k for k in granted_kinds if k not in (*FREE_KINDS, *GRANTABLE_KINDS)]
        if unknown_kinds:
            raise CommandError(f"Unknown kind: {', '.join(unknown_kinds)} (give {', '.join(GRANTABLE_KINDS)}).")
        identifiers = split_names(configurations)
        if not identifiers and not admin:
            raise CommandError("Name at least one configuration with --configurations (or use --admin).")
        found = {c.identifier: c for c in Configuration.objects.filter(identifier__in=identifiers)}
        unknown = [i for i in identifiers if i not in found]
        if unknown:
            raise CommandError(f"Unknown configuration: {', '.join(unknown)}")
        existing = Consumer.objects.filter(name=name).first()
        if existing is not None and not new_token:
            raise CommandError(f"A consumer named {name} exists already; revoke_consumer it, choose another name, "
                               f"or add --new-token to give it a new token.")

        with transaction.atomic():
            consumer = existing or Consumer(name=name)
            consumer.is_admin, consumer.throttle_rate = admin, throttle
            consumer.kinds = ["completion", *(k for k in GRANTABLE_KINDS if k in granted_kinds)]
            # Not given: a new consumer gets the defaults, an existing one keeps what it had.
            consumer.blocks_as = blocks_as or consumer.blocks_as
            consumer.hints_as = hints_as or consumer.hints_as
            token = consumer.issue_token()
            consumer.save()
            consumer.configurations.set([found[i] for i in identifiers])

        kind = "administrator consumer" if admin else "consumer"
        done = "Gave a new token to" if existing is not None else "Created"
        self.stdout.write(f"{done} {kind} {name}, granted: {', '.join(identifiers) or '(no configuration)'}.")
        self.stdout.write(f"Throttle rate: {throttle or 'GAVEL_THROTTLE_RATE (default)'}.")
        extra = [k for k in consumer.kinds if k in GRANTABLE_KINDS]
        self.stdout.write(f"Kinds granted besides the free ones: {', '.join(extra) or 'none'}.")
        self.stdout.write(f"Blocks as: {consumer.blocks_as}; hints as: {consumer.hints_as}.")
        self.stdout.write("Its callback secret signs the callbacks of its tasks (X-Gavel-Signature); it is shown "
                          "this once, and create_consumer --rotate-secret replaces it.")
        self.stdout.write(f"callback secret: {consumer.callback_secret}")
        self.stdout.write("Its token is shown this once; only its hash is stored. "
                          "Send it as 'Authorization: Bearer <token>'.")
        self.stdout.write(token)

    def rotate(self, name: str) -> None:
        with transaction.atomic():
            consumer = Consumer.objects.select_for_update().filter(name=name).first()
            if consumer is None:
                raise CommandError(f"No consumer named {name}.")
            secret = consumer.issue_callback_secret()
            consumer.save(update_fields=["callback_secret"])
        self.stdout.write(f"New callback secret of {name}; the old one no longer verifies. It is shown this once.")
        self.stdout.write(f"callback secret: {secret}")
