"""Gavel's core records: providers, configurations, consumers, governance events.

Field meanings follow SPEC §2; the admin-only ones are named in
`governance.permissions.ADMIN_ONLY_FIELDS`, never here.
"""
import hashlib
import re
import secrets
import uuid
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import IntegrityError, models, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from judging.zones import TRUST_ZONES


def validate_tag_list(value):
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(_("Enter a list of tags."))


def normalise_tags(values) -> list[str]:
    """Tags are a set, stored trimmed and lower-cased, in first-seen order (SPEC §2.4)."""
    seen: list[str] = []
    for raw in values or []:
        tag = str(raw).strip().lower()
        if tag and tag not in seen:
            seen.append(tag)
    return seen


class Provider(models.Model):
    class Kind(models.TextChoices):
        CHAT = "chat", _("chat")
        DECISION = "decision", _("decision")

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.CHAT)
    route = models.CharField(
        max_length=64, help_text=_("litellm provider prefix, e.g. openai, anthropic, ollama, hosted_vllm")
    )
    api_base = models.URLField(max_length=500, blank=True, default="")
    api_key_env = models.CharField(
        max_length=128,
        blank=True,
        default="",
        help_text=_("Name of the environment variable holding the key. Keys never enter the database."),
    )
    trust_zone = models.CharField(
        max_length=32, choices=[(z, z) for z in TRUST_ZONES], blank=True, default="",
        help_text=_("Blank means the provider declares no zone."),
    )
    timeout = models.PositiveIntegerField(default=30, validators=[MinValueValidator(1)], help_text=_("seconds"))
    price_per_mtok_in = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    price_per_mtok_out = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        if self.api_key_env and not self.api_key_env.replace("_", "").isalnum():
            raise ValidationError({"api_key_env": _("Give the name of an environment variable, not a key.")})
        if self.pk and Provider.objects.filter(pk=self.pk).exclude(kind=self.kind).exists():
            # Changing the kind must not turn this provider's configurations into mixed ones (SPEC §6.4).
            from governance.families import configuration_faults

            mixed = []
            for configuration in self.configurations.all():
                configuration.provider = self
                if configuration_faults(configuration):
                    mixed.append(configuration.identifier)
            if mixed:
                raise ValidationError({"kind": _("Configurations %(names)s would mix chat and decision settings "
                                                 "under this kind.") % {"names": ", ".join(mixed)}})


class Configuration(models.Model):
    class RuleMode(models.TextChoices):
        OFF = "off", _("off")
        REPORT = "report", _("report")
        BLOCK = "block", _("block")

    class RuleDefault(models.TextChoices):
        BLOCK = "block", _("block")
        ALLOW = "allow", _("allow")

    identifier = models.SlugField(max_length=100, unique=True)
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="configurations")
    model = models.CharField(max_length=200)
    system_prompt = models.TextField(blank=True, default="")
    temperature = models.FloatField(null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(2)])
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    timeout = models.PositiveIntegerField(default=0, help_text=_("seconds; 0 uses the provider's timeout"))
    # Ordered identifiers of other configurations, one hop deep (SPEC §2.2).
    fallbacks = models.JSONField(default=list, blank=True)
    budget_daily_requests = models.PositiveIntegerField(default=0, help_text=_("0 means no cap"))
    budget_daily_tokens = models.PositiveBigIntegerField(default=0, help_text=_("0 means no cap"))
    budget_daily_cost = models.DecimalField(
        max_digits=12, decimal_places=4, default=Decimal("0"), help_text=_("0 means no cap")
    )
    context_tags = models.JSONField(default=list, blank=True, validators=[validate_tag_list])
    rule_mode = models.CharField(max_length=8, choices=RuleMode.choices, default=RuleMode.OFF)
    rule_tags = models.JSONField(default=list, blank=True, validators=[validate_tag_list])
    # Ordered identifiers of judging configurations (SPEC §6.2).
    rule_judges = models.JSONField(default=list, blank=True)
    rule_default = models.CharField(max_length=8, choices=RuleDefault.choices, default=RuleDefault.BLOCK)
    min_confidence = models.FloatField(default=0.9, validators=[MinValueValidator(0), MaxValueValidator(1)])
    # PROTECT: deleting the escalation target must not silently switch escalation off (SPEC §2.3).
    escalation = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["identifier"]

    def __str__(self):
        return self.identifier

    def effective_timeout(self) -> int:
        return self.timeout or self.provider.timeout

    def clean(self):
        errors = {}
        self.context_tags = normalise_tags(self.context_tags)
        self.rule_tags = normalise_tags(self.rule_tags)
        for field in ("fallbacks", "rule_judges"):
            value = getattr(self, field)
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                errors[field] = _("Enter a list of configuration identifiers.")
                continue
            if self.identifier and self.identifier in value:
                errors[field] = _("A configuration cannot name itself.")
                continue
            repeated = [v for v in dict.fromkeys(value) if value.count(v) > 1] if field == "rule_judges" else []
            if repeated:
                # A judge named twice would be asked twice about one text (SPEC §6.2: at most once).
                errors[field] = _("A judge may be named only once: %(names)s") % {"names": ", ".join(repeated)}
                continue
            known = set(Configuration.objects.filter(identifier__in=value).values_list("identifier", flat=True))
            missing = [v for v in value if v not in known]
            if missing:
                errors[field] = _("Unknown configuration: %(names)s") % {"names": ", ".join(missing)}
        if self.escalation_id and self.pk and self.escalation_id == self.pk:
            errors["escalation"] = _("A configuration cannot escalate to itself.")
        from governance.families import configuration_faults

        for fault in configuration_faults(self):  # chat and decision never mix (SPEC §6.4)
            errors.setdefault(fault.field, fault.message)
        if errors:
            raise ValidationError(errors)


class PolicyVersion(models.Model):
    """One row whose number changes with every policy edit (SPEC §11.1)."""

    value = models.PositiveBigIntegerField(default=1)

    @classmethod
    def current(cls) -> int:
        row = cls.objects.filter(pk=1).values_list("value", flat=True).first()
        return row or 1

    @classmethod
    def bump(cls) -> None:
        # The row is made by a migration, so this is one UPDATE.
        if cls.objects.filter(pk=1).update(value=F("value") + 1):
            return
        try:
            with transaction.atomic():
                cls.objects.create(pk=1, value=2)
        except IntegrityError:
            # Another process made the row between our UPDATE and our INSERT: count this edit on it.
            cls.objects.filter(pk=1).update(value=F("value") + 1)


# DRF's rate syntax: requests per second, minute, hour or day ("120/min", "5000/day").
THROTTLE_RATE_RE = re.compile(r"^[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)$")


class ConsumerQuerySet(models.QuerySet):
    def revoke(self) -> int:
        """Revoke the consumers here that are still active; return how many were."""
        # A conditional UPDATE, so two concurrent revocations record the first moment only.
        return self.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


class Consumer(models.Model):
    """A system that calls the REST API with a token. Only the token's hash is stored."""

    TOKEN_PREFIX = "gvl_"

    name = models.SlugField(max_length=100, unique=True)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    token_prefix = models.CharField(max_length=12, editable=False)
    is_admin = models.BooleanField(
        default=False, help_text=_("An administrator consumer may read the governance log and the policy.")
    )
    configurations = models.ManyToManyField(Configuration, blank=True, related_name="consumers")
    throttle_rate = models.CharField(
        max_length=32, blank=True, default="", help_text=_("e.g. 120/min; blank uses GAVEL_THROTTLE_RATE"),
        validators=[RegexValidator(THROTTLE_RATE_RE, _("Give a rate such as 120/min or 5000/day."))],
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ConsumerQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    # DRF treats request.user as a user object; a consumer is always authenticated.
    is_authenticated = True
    is_anonymous = False

    @staticmethod
    def hash_token(token: str) -> str:
        # Tokens carry 256 bits of randomness, so an unsalted SHA-256 cannot be
        # brute-forced and lets authentication be one indexed lookup.
        return hashlib.sha256(token.encode("utf-8")).hexdigest()

    def issue_token(self) -> str:
        """Give the consumer a new token; return it (the only time it is readable)."""
        token = self.TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.set_token(token)
        return token

    def set_token(self, token: str) -> None:
        """Make `token` the consumer's token: keep its hash and the prefix shown after creation."""
        self.token_hash = self.hash_token(token)
        self.token_prefix = token[:10]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class GovernanceEvent(models.Model):
    """Append-only audit row holding policy facts, never generated text (SPEC §2.7, §9)."""

    class Decision(models.TextChoices):
        BLOCKED = "blocked"
        REPORTED = "reported"
        NOT_CHECKED = "not_checked"
        REDACTED = "redacted"
        ESCALATED = "escalated"
        UNVERIFIED = "unverified"
        BUDGET_REFUSED = "budget_refused"
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    class Check(models.TextChoices):
        SECRET_REDACTION = "secret_redaction"
        TERM_LIST = "term_list"
        PATTERN_RULES = "pattern_rules"
        CITATIONS = "citations"
        RULES_JUDGE = "rules_judge"
        BUDGET = "budget"
        FIELD = "field"
        REVIEW = "review"

    at = models.DateTimeField(default=timezone.now, db_index=True)
    correlation_id = models.CharField(max_length=64, db_index=True)
    decision = models.CharField(max_length=20, choices=Decision.choices, db_index=True)
    # `check` would shadow Model.check(); the column and the API still say "check".
    check_name = models.CharField(max_length=20, choices=Check.choices, db_column="check")
    # Identifiers, not foreign keys: the log outlives the records it names.
    configuration = models.CharField(max_length=100, blank=True, default="", db_index=True)
    provider = models.CharField(max_length=100, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    actor = models.CharField(max_length=150, blank=True, default="")
    mode = models.CharField(max_length=8, blank=True, default="")
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["configuration", "at"])]

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.decision} {self.check_name} {self.configuration}"


class UsageDay(models.Model):
    """Requests, tokens and cost one configuration used on one calendar day (budget caps)."""

    configuration = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="usage_days")
    day = models.DateField()
    requests = models.PositiveIntegerField(default=0)
    tokens = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    # For the dashboard (SPEC §10: judge failure rate and latency): calls whose provider failed
    # (errors, timeouts), and the summed latency of the calls that answered.
    failures = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["configuration", "day"], name="usage_day_unique")]


class Task(models.Model):
    """A queued task or a field fill (SPEC §2.8, §10): the database row is the source of truth.

    A Celery message carries only the id. Contents (messages, answer, edited
    text, passages in hints) are emptied by the purge after
    GAVEL_TASK_RETENTION_DAYS; status, facts and timestamps stay.
    """

    class Kind(models.TextChoices):
        QUEUED_TASK = "queued_task", _("queued task")
        FIELD_FILL = "field_fill", _("field fill")

    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        READY = "ready", _("ready")
        BLOCKED = "blocked", _("blocked")
        FAILED = "failed", _("failed")
        CANCELLED = "cancelled", _("cancelled")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")

    class Review(models.TextChoices):
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")

    # Statuses in which the worker's work is over.
    FINISHED = (Status.READY, Status.BLOCKED, Status.FAILED, Status.CANCELLED, Status.ACCEPTED, Status.REJECTED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices, default=Kind.QUEUED_TASK)
    status = models.CharField(_("status"), max_length=16, choices=Status.choices, default=Status.QUEUED,
                              db_index=True)
    consumer = models.ForeignKey(Consumer, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
                                 verbose_name=_("consumer"))
    # Identifiers, not foreign keys: a task outlives a renamed or deleted configuration,
    # and the worker resolves them when it runs (a missing one fails the task with a reason).
    configuration = models.CharField(_("configuration"), max_length=100, db_index=True)
    also = models.JSONField(_("further configurations"), default=list, blank=True)
    messages = models.JSONField(_("input messages"), default=list, blank=True,
                                help_text=_("OpenAI-shaped messages; an instruction is stored as one user message."))
    field = models.JSONField(_("field"), null=True, blank=True,
                             help_text=_("Field fills only: record, name, label, max_length."))
    site = models.CharField(_("site"), max_length=100, blank=True, default="")
    language = models.CharField(_("language"), max_length=35, blank=True, default="")
    callback_url = models.URLField(_("callback URL"), max_length=1000, blank=True, default="")

    attempts = models.PositiveIntegerField(_("attempts"), default=0,
                                           help_text=_("How many times a worker claimed this task."))
    lease_until = models.DateTimeField(_("claimed until"), null=True, blank=True,
                                       help_text=_("A running task whose lease has passed is taken over by another worker."))
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    # The screening result (SPEC §11.1): the answer as delivered, and the facts around it.
    outcome = models.CharField(_("outcome"), max_length=20, blank=True, default="")
    answer = models.TextField(_("answer"), blank=True, default="")
    hints = models.JSONField(_("hints"), default=list, blank=True)
    refusal = models.JSONField(_("refusal"), null=True, blank=True,
                               help_text=_("The block without its passage (SPEC §9)."))
    verification = models.JSONField(default=dict, blank=True)
    checks = models.JSONField(default=list, blank=True)
    completion = models.JSONField(null=True, blank=True)
    policy_version = models.PositiveBigIntegerField(null=True, blank=True)
    correlation_id = models.CharField(max_length=64, blank=True, default="")
    failure = models.JSONField(_("failure"), null=True, blank=True, help_text=_("Code and message when failed."))

    # Review (SPEC §10): who, when, what, and the edited text when there was one.
    review_decision = models.CharField(_("review"), max_length=16, choices=Review.choices, blank=True, default="")
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+", verbose_name=_("reviewed by"))
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    edited_text = models.TextField(_("edited text"), blank=True, default="")
    edited = models.BooleanField(_("edited"), default=False)

    # Callback delivery (SPEC §10): visible on the task, never blocking a screening.
    callback_attempts = models.PositiveIntegerField(default=0)
    callback_status = models.CharField(max_length=16, blank=True, default="")
    callback_error = models.CharField(max_length=500, blank=True, default="")

    purged_at = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    updated = models.DateTimeField(_("updated"), auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = _("task")
        verbose_name_plural = _("tasks")
        indexes = [models.Index(fields=["consumer", "-created"]), models.Index(fields=["status", "-created"])]

    def __str__(self):
        return f"{self.get_kind_display()} {self.id}"
