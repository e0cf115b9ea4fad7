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

# The zones as words (SPEC §7), most trusted first; the stored value stays the code.
TRUST_ZONE_LABELS = {
    "local": _("local (this machine or network)"),
    "private_hosted": _("private hosted"),
    "external_eu": _("external, EU"),
    "external_global": _("external, worldwide"),
}
TRUST_ZONE_CHOICES = [(zone, TRUST_ZONE_LABELS[zone]) for zone in TRUST_ZONES]


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

    name = models.SlugField(_("name"), max_length=100, unique=True,
                            help_text=_("How configurations and the policy file name this provider: letters, digits, "
                                        "hyphens."))
    kind = models.CharField(_("kind"), max_length=16, choices=Kind.choices, default=Kind.CHAT,
                            help_text=_("Chat models write text; decision models answer allow / deny / pass "
                                        "questions and only judge. The two never mix."))
    route = models.CharField(
        _("route"), max_length=64,
        help_text=_("litellm provider prefix, e.g. openai, anthropic, ollama, hosted_vllm"),
    )
    api_base = models.URLField(_("API base"), max_length=500, blank=True, default="",
                               help_text=_("The address requests go to, e.g. https://eu.api.example.com/v1; blank "
                                           "uses the route's default."))
    api_key_env = models.CharField(
        _("key variable"),
        max_length=128,
        blank=True,
        default="",
        help_text=_("Name of the environment variable holding the key. Keys never enter the database."),
    )
    trust_zone = models.CharField(
        _("trust zone"), max_length=32, choices=TRUST_ZONE_CHOICES, blank=True, default="",
        help_text=_("Where text sent here goes, most trusted first. A judge never reads a text written in a more "
                    "trusted zone. Blank means the provider declares no zone (counted as external, worldwide)."),
    )
    timeout = models.PositiveIntegerField(_("timeout"), default=30, validators=[MinValueValidator(1)],
                                          help_text=_("seconds"))
    price_per_mtok_in = models.DecimalField(_("price per million input tokens"), max_digits=12, decimal_places=6,
                                            null=True, blank=True,
                                            help_text=_("For cost and the daily cost cap; blank uses litellm's "
                                                        "price map."))
    price_per_mtok_out = models.DecimalField(_("price per million output tokens"), max_digits=12, decimal_places=6,
                                             null=True, blank=True,
                                             help_text=_("For cost and the daily cost cap; blank uses litellm's "
                                                         "price map."))

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name = _("provider")
        verbose_name_plural = _("providers")

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

    identifier = models.SlugField(_("identifier"), max_length=100, unique=True,
                                  help_text=_("What a call names (configuration, also) and the policy file uses."))
    provider = models.ForeignKey(Provider, on_delete=models.PROTECT, related_name="configurations",
                                 verbose_name=_("provider"), help_text=_("Where the model is reached."))
    model = models.CharField(_("model"), max_length=200, help_text=_("The provider's model name, e.g. gpt-4o-mini."))
    system_prompt = models.TextField(_("system prompt"), blank=True, default="",
                                     help_text=_("Sent first with every call; context snippets are appended."))
    temperature = models.FloatField(_("temperature"), null=True, blank=True,
                                    validators=[MinValueValidator(0), MaxValueValidator(2)],
                                    help_text=_("0 to 2; blank uses the model's default. Judges always use 0."))
    max_tokens = models.PositiveIntegerField(_("max tokens"), null=True, blank=True,
                                             help_text=_("Longest answer in tokens; blank uses the model's limit."))
    timeout = models.PositiveIntegerField(_("timeout"), default=0, help_text=_("seconds; 0 uses the provider's timeout"))
    budget_daily_requests = models.PositiveIntegerField(_("requests per day"), default=0,
                                                        help_text=_("0 means no cap"))
    budget_daily_tokens = models.PositiveBigIntegerField(_("tokens per day"), default=0, help_text=_("0 means no cap"))
    budget_daily_cost = models.DecimalField(
        _("cost per day"), max_digits=12, decimal_places=4, default=Decimal("0"), help_text=_("0 means no cap")
    )
    context_tags = models.JSONField(
        _("context tags"), default=list, blank=True, validators=[validate_tag_list],
        help_text=_("Snippets and pattern rules with these tags are added to the system prompt, so the model "
                    "writes by them. Rule tags choose what is checked afterwards."))
    rule_mode = models.CharField(
        _("rule mode"), max_length=8, choices=RuleMode.choices, default=RuleMode.OFF,
        help_text=_("off: rules are not checked. report: the text is delivered with a hint per finding (a shadow "
                    "mode for trying rules). block: a finding, or a check that failed, stops the text."))
    rule_tags = models.JSONField(
        _("rule tags"), default=list, blank=True, validators=[validate_tag_list],
        help_text=_("Active, not hidden snippets with these tags make the rule set the judges check; pattern rules "
                    "with these tags are checked by machine."))
    rule_default = models.CharField(
        _("rule default"), max_length=8, choices=RuleDefault.choices, default=RuleDefault.BLOCK,
        help_text=_("In block mode, what happens when every judge passed (none could decide): block stops the "
                    "text (fail closed); allow delivers it with a “not checked” hint."))
    min_confidence = models.FloatField(
        _("min confidence"), default=0.9, validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text=_("Decision judges only: an answer less confident than this counts as pass for its rule."))
    # PROTECT: deleting the escalation target must not silently switch escalation off (SPEC §2.3).
    escalation = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+", verbose_name=_("escalation"),
        help_text=_("A chat configuration asked once to write the text again when verification fails."),
    )

    history = HistoricalRecords()

    class Meta:
        ordering = ["identifier"]
        verbose_name = _("configuration")
        verbose_name_plural = _("configurations")

    def __str__(self):
        return self.identifier

    def effective_timeout(self) -> int:
        return self.timeout or self.provider.timeout

    def clean(self):
        errors = {}
        self.context_tags = normalise_tags(self.context_tags)
        self.rule_tags = normalise_tags(self.rule_tags)
        if self.escalation_id and self.pk and self.escalation_id == self.pk:
            errors["escalation"] = _("A configuration cannot escalate to itself.")
        from governance.families import configuration_faults

        for fault in configuration_faults(self):  # chat and decision never mix (SPEC §6.4)
            errors.setdefault(fault.field, fault.message)
        if errors:
            raise ValidationError(errors)

    # --- The ordered relations (SPEC §2.2 fallbacks, §6.2 rule_judges) ---
    # Judge chains and fallbacks are rows of JudgeLink / FallbackLink that point at the
    # configuration itself, so a rename cannot orphan them and a delete is refused
    # (PROTECT). Writes go through governance.writes.save_record or set_links.

    def ordered_judges(self) -> list["Configuration"]:
        """The judging configurations, in chain order (each with its provider loaded)."""
        return [link.judge for link in self._links("judge_links", "judge")]

    def ordered_fallbacks(self) -> list["Configuration"]:
        """The fallback configurations, in the order they are tried."""
        return [link.fallback for link in self._links("fallback_links", "fallback")]

    def judge_identifiers(self) -> list[str]:
        return [judge.identifier for judge in self.ordered_judges()]

    def fallback_identifiers(self) -> list[str]:
        return [fallback.identifier for fallback in self.ordered_fallbacks()]

    # The old JSON fields' names, kept as read-only views so code written against them reads the
    # relations and code that assigns them fails loudly instead of setting a forgotten attribute.
    @property
    def fallbacks(self) -> list[str]:
        # While a save is being checked (writes.save_record, the admin form), the fallbacks it would
        # store: model validation (governance.families) judges the record as it will stand.
        pending = self.__dict__.get("_pending_fallbacks")
        return list(pending) if pending is not None else self.fallback_identifiers()

    @fallbacks.setter
    def fallbacks(self, value):
        raise TypeError("Configuration.fallbacks is a relation: use writes.save_record or models.set_links.")

    @property
    def rule_judges(self) -> list[str]:
        return self.judge_identifiers()

    @rule_judges.setter
    def rule_judges(self, value):
        raise TypeError("Configuration.rule_judges is a relation: use writes.save_record or models.set_links.")

    def _links(self, name: str, target: str) -> list:
        if self.pk is None:
            return []
        if name in getattr(self, "_prefetched_objects_cache", {}):
            return list(getattr(self, name).all())
        return list(getattr(self, name).select_related(f"{target}__provider"))


# Which relation each policy field is, for the code that reads or writes them by name.
LINK_FIELDS = ("fallbacks", "rule_judges")


class JudgeLink(models.Model):
    """One judge in a configuration's ordered chain (SPEC §6.2)."""

    configuration = models.ForeignKey(
        Configuration, on_delete=models.CASCADE, related_name="judge_links", verbose_name=_("configuration")
    )
    # PROTECT: deleting a judge must never switch judging off behind an administrator's back (SPEC §2.3).
    judge = models.ForeignKey(
        Configuration, on_delete=models.PROTECT, related_name="judge_for_links", verbose_name=_("judge")
    )
    position = models.PositiveSmallIntegerField(_("position"), default=0)

    class Meta:
        ordering = ["position", "pk"]
        verbose_name = _("rule judge")
        verbose_name_plural = _("rule judges")
        constraints = [
            models.UniqueConstraint(fields=["configuration", "judge"], name="judge_link_unique"),
            models.CheckConstraint(condition=~models.Q(judge=models.F("configuration")), name="judge_link_not_self"),
        ]

    def __str__(self):
        return f"{self.configuration_id} → {self.judge_id} #{self.position}"


class FallbackLink(models.Model):
    """One fallback of a configuration, tried in order, one hop deep (SPEC §2.2)."""

    configuration = models.ForeignKey(
        Configuration, on_delete=models.CASCADE, related_name="fallback_links", verbose_name=_("configuration")
    )
    fallback = models.ForeignKey(
        Configuration, on_delete=models.PROTECT, related_name="fallback_for_links", verbose_name=_("fallback")
    )
    position = models.PositiveSmallIntegerField(_("position"), default=0)

    class Meta:
        ordering = ["position", "pk"]
        verbose_name = _("fallback")
        verbose_name_plural = _("fallbacks")
        constraints = [
            models.UniqueConstraint(fields=["configuration", "fallback"], name="fallback_link_unique"),
            models.CheckConstraint(condition=~models.Q(fallback=models.F("configuration")),
                                   name="fallback_link_not_self"),
        ]

    def __str__(self):
        return f"{self.configuration_id} → {self.fallback_id} #{self.position}"


def set_links(configuration: Configuration, field: str, targets) -> bool:
    """Make `configuration`'s fallbacks or rule judges exactly `targets` (configurations or identifiers, in
    order). No validation: people's writes go through governance.writes.save_record, which checks first.

    Returns whether anything changed; an unchanged chain writes nothing (no policy version bump).
    """
    model, target = (JudgeLink, "judge") if field == "rule_judges" else (FallbackLink, "fallback")
    names = [t for t in targets if isinstance(t, str)]
    pks = dict(Configuration.objects.filter(identifier__in=names).values_list("identifier", "pk")) if names else {}
    wanted = [pks[t] if isinstance(t, str) else t.pk for t in targets]
    current = list(model.objects.filter(configuration=configuration).order_by("position", "pk")
                   .values_list(f"{target}_id", flat=True))
    if current == wanted:
        return False
    model.objects.filter(configuration=configuration).delete()
    model.objects.bulk_create(
        [model(configuration=configuration, position=index, **{f"{target}_id": pk}) for index, pk in enumerate(wanted)]
    )
    # bulk_create sends no post_save: count the edit once, as every policy edit is (SPEC §11.1).
    from governance.signals import policy_edited

    policy_edited(model)
    return True


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


class UserProfile(models.Model):
    """What a person sets for themselves: the language Gavel speaks to them in (SPEC §1)."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="gavel_profile",
                                verbose_name=_("user"))
    language = models.CharField(
        _("language"), max_length=8, blank=True, default="",
        choices=[("en", "English"), ("de", "Deutsch")],
        help_text=_("The language of the admin, the review UI and the messages you read; blank follows your "
                    "browser (Accept-Language)."),
    )

    class Meta:
        verbose_name = _("user profile")
        verbose_name_plural = _("user profiles")

    def __str__(self):
        return str(self.user)
