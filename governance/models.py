"""Gavel's core records: providers, configurations, consumers, governance events.

Field meanings follow SPEC §2; the admin-only ones are named in
`governance.records.permissions.ADMIN_ONLY_FIELDS`, never here.
"""
import copy
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
    # Held across every web process and worker through Redis (governance/runs/limits.py); 0 = no limit.
    max_concurrency = models.PositiveIntegerField(
        _("most calls at once"), default=0,
        help_text=_("How many calls this provider is asked at the same time, across every process; 0 means no "
                    "limit."))
    requests_per_minute = models.PositiveIntegerField(
        _("requests per minute"), default=0,
        help_text=_("How many calls this provider is asked per minute, across every process; 0 means no limit."))
    tokens_per_minute = models.PositiveIntegerField(
        _("tokens per minute"), default=0,
        help_text=_("How many tokens (prompt and answer) this provider is sent per minute, across every process; "
                    "0 means no limit."))
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
        from governance.runs.provider_keys import key_env_problem

        if problem := key_env_problem(self.api_key_env):
            raise ValidationError({"api_key_env": problem})
        if self.pk and Provider.objects.filter(pk=self.pk).exclude(kind=self.kind).exists():
            # Changing the kind must not turn this provider's configurations into mixed ones (SPEC §6.4).
            from governance.records.families import configuration_faults

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
    judge_cache_seconds = models.PositiveIntegerField(
        _("judge cache"), default=0,
        help_text=_("seconds: how long a judge's verdict on the same text, under the same rules and judge, may be "
                    "reused by live screenings instead of asking the judge again. 0 asks every time; policy tests "
                    "and replays always reuse verdicts."))
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
        from governance.records.families import configuration_faults

        for fault in configuration_faults(self):  # chat and decision never mix (SPEC §6.4)
            errors.setdefault(fault.field, fault.message)
        if errors:
            raise ValidationError(errors)

    # --- The ordered relations (SPEC §2.2 fallbacks, §6.2 rule_judges) ---
    # Judge chains and fallbacks are rows of JudgeLink / FallbackLink that point at the
    # configuration itself, so a rename cannot orphan them and a delete is refused
    # (PROTECT). Writes go through governance.records.writes.save_record or set_links.

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
        # store: model validation (governance.records.families) judges the record as it will stand.
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
        version = getattr(self, "policy_version", None)
        if version is None:  # not read on a screening's hot path (the admin, commands): read now
            return list(getattr(self, name).select_related(f"{target}__provider"))
        # Read under a policy version (governance.screening.service.resolve_configurations): links are policy,
        # every edit of them bumps the version, so this process reads them once per version. The
        # linked configurations carry the version on, for their own links (a judge's fallbacks).
        key = (self.pk, name)
        held_version, by_key = _links_cache["entry"]
        if held_version != version:  # a new dict, so a thread on another version never mixes with this one
            by_key = {}
            _links_cache["entry"] = (version, by_key)
        held = by_key.get(key)
        if held is None:
            held = by_key[key] = list(getattr(self, name).select_related(f"{target}__provider"))
        links = []
        for link in held:
            linked = copy.copy(getattr(link, target))
            linked.policy_version = version
            link = copy.copy(link)
            setattr(link, target, linked)
            links.append(link)
        return links


# (policy version, {(configuration id, relation): its links}), in this process.
_links_cache: dict = {"entry": (None, {})}


def forget_links() -> None:
    """Drop this process's links (tests: a rolled-back database reuses version numbers)."""
    _links_cache["entry"] = (None, {})


# Which relation each policy field is, for the code that reads or writes them by name.
LINK_FIELDS = ("fallbacks", "rule_judges")


class JudgeLink(models.Model):
    """One judge in a configuration's ordered chain (SPEC §6.2)."""

    configuration = models.ForeignKey(
        Configuration, on_delete=models.CASCADE, related_name="judge_links", verbose_name=_("configuration"),
        help_text=_("The configuration whose rule set this judge checks."),
    )
    # PROTECT: deleting a judge must never switch judging off behind an administrator's back (SPEC §2.3).
    judge = models.ForeignKey(
        Configuration, on_delete=models.PROTECT, related_name="judge_for_links", verbose_name=_("judge"),
        help_text=_("A judging configuration. The judges are asked in order until one allows or denies; a judge "
                    "a chain names cannot be deleted."),
    )
    position = models.PositiveSmallIntegerField(
        _("position"), default=0, help_text=_("The judge's place in the chain, from 0: lower is asked first."))

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
        Configuration, on_delete=models.CASCADE, related_name="fallback_links", verbose_name=_("configuration"),
        help_text=_("The configuration whose calls fall back to this one."),
    )
    fallback = models.ForeignKey(
        Configuration, on_delete=models.PROTECT, related_name="fallback_for_links", verbose_name=_("fallback"),
        help_text=_("Tried when the configuration's provider has a connection error, a timeout, HTTP 429 or 5xx, "
                    "never after a stream sent its first chunk. One hop: a fallback's own fallbacks are never "
                    "tried."),
    )
    position = models.PositiveSmallIntegerField(
        _("position"), default=0, help_text=_("The fallback's place in the order, from 0: lower is tried first."))

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
    order). No validation: people's writes go through governance.records.writes.save_record, which checks first.

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
    from governance.records.signals import one_bump, policy_edited

    # One edit, one version bump (SPEC §11.1): the deleted rows' signals and the bulk insert, which
    # sends none, are counted together at the end.
    with one_bump():
        model.objects.filter(configuration=configuration).delete()
        model.objects.bulk_create(
            [model(configuration=configuration, position=index, **{f"{target}_id": pk})
             for index, pk in enumerate(wanted)]
        )
        policy_edited(model)
    return True


class PolicyVersion(models.Model):
    """One row whose number changes with every policy edit (SPEC §11.1)."""

    value = models.PositiveBigIntegerField(
        _("version number"), default=1,
        help_text=_("Grows by one with every policy edit (providers, configurations, snippets, term lists, pattern "
                    "rules); screenings report it as policy_version."))

    class Meta:
        verbose_name = _("policy version")
        verbose_name_plural = _("policy versions")

    @classmethod
    def current(cls) -> int:
        row = cls.objects.filter(pk=1).values_list("value", flat=True).first()
        return row or 1

    @classmethod
    def bump(cls) -> None:
        from governance.policy.versions import note_edit

        cls._bump()
        # Every version is kept as a revision once its change commits (SPEC §12.4); after the UPDATE,
        # since outside a transaction the revision is written at once.
        note_edit()

    @classmethod
    def _bump(cls) -> None:
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


# Call kinds a consumer states freely; the others only when its record grants them (SPEC §3).
FREE_KINDS = ("completion", "queued_task", "field_fill")
GRANTABLE_KINDS = ("internal", "image_description")


def default_consumer_kinds() -> list:
    return ["completion"]


class Consumer(models.Model):
    """A system that calls the REST API with a token. Only the token's hash is stored."""

    TOKEN_PREFIX = "gvl_"

    name = models.SlugField(
        _("name"), max_length=100, unique=True,
        help_text=_("How the commands and the governance log name this consumer (the log says consumer:newsroom "
                    "for the consumer newsroom): letters, digits, hyphens, underscores."))
    token_hash = models.CharField(
        _("token hash"), max_length=64, unique=True, editable=False,
        help_text=_("The SHA-256 hash of the token. The token itself is never stored: create_consumer shows it "
                    "once."))
    token_prefix = models.CharField(
        _("token prefix"), max_length=12, editable=False,
        help_text=_("The token's first characters, to tell which token a system uses; not enough to use it."))
    is_admin = models.BooleanField(
        _("administrator consumer"), default=False,
        help_text=_("An administrator consumer may also read the governance log and read and replace the policy "
                    "(/api/v1/events, /api/v1/policy)."),
    )
    configurations = models.ManyToManyField(
        Configuration, blank=True, related_name="consumers", verbose_name=_("configurations"),
        help_text=_("The configurations this consumer may name in a call; naming any other is refused (403)."))
    throttle_rate = models.CharField(
        _("throttle rate"), max_length=32, blank=True, default="",
        help_text=_("How many requests this consumer may send per second, minute, hour or day, e.g. 120/min or "
                    "5000/day; more are refused (429). Blank uses GAVEL_THROTTLE_RATE."),
        validators=[RegexValidator(THROTTLE_RATE_RE, _("Give a rate such as 120/min or 5000/day."))],
    )
    kinds = models.JSONField(
        _("kinds"), default=default_consumer_kinds, blank=True,
        help_text=_("The call kinds this consumer may state. completion, queued_task and field_fill are always "
                    "allowed; internal (searched for forbidden terms only, never judged) and image_description "
                    "(never asked for required terms) must be granted here, else a call stating them is refused "
                    "(403 kind_not_granted)."))
    # Signs the callbacks sent for this consumer's tasks, so the secret itself must be kept: a hash
    # could not sign. Stored as is and never shown again after create_consumer (docs/decisions.md).
    callback_secret = models.CharField(
        _("callback secret"), max_length=64, blank=True, default="", editable=False,
        help_text=_("Signs this consumer's callbacks (X-Gavel-Signature). Shown once by create_consumer; "
                    "create_consumer --rotate-secret replaces it."))
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False,
                                      help_text=_("When the consumer was created."))
    revoked_at = models.DateTimeField(
        _("revoked at"), null=True, blank=True,
        help_text=_("When the token was revoked (revoke_consumer or the admin's action); a revoked token is "
                    "refused. Blank: the token is valid."))

    objects = ConsumerQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("consumer")
        verbose_name_plural = _("consumers")

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

    CALLBACK_SECRET_PREFIX = "gvs_"

    def save(self, *args, **kwargs):
        if not self.callback_secret:
            self.issue_callback_secret()  # every callback is signed (create_consumer --rotate-secret shows it)
        super().save(*args, **kwargs)

    def issue_callback_secret(self) -> str:
        """Give the consumer a new callback secret; return it (shown once, by create_consumer)."""
        self.callback_secret = self.CALLBACK_SECRET_PREFIX + secrets.token_urlsafe(32)
        return self.callback_secret

    def set_token(self, token: str) -> None:
        """Make `token` the consumer's token: keep its hash and the prefix shown after creation."""
        self.token_hash = self.hash_token(token)
        self.token_prefix = token[:10]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def may_state(self, kind: str) -> bool:
        """Whether a call of this consumer may state `kind` (SPEC §3): the free kinds always, the others
        only when granted."""
        return kind in FREE_KINDS or kind in (self.kinds or ())


class GovernanceEvent(models.Model):
    """Append-only audit row holding policy facts, never generated text (SPEC §2.7, §9)."""

    # The labels are what the admin's columns and filters show, and what the log's sentence says
    # (governance.screening.event_text): a decision starts the sentence, a check sits inside it.
    class Decision(models.TextChoices):
        BLOCKED = "blocked", _("Stopped")
        REPORTED = "reported", _("Delivered with hints")
        NOT_CHECKED = "not_checked", _("Not checked")
        REDACTED = "redacted", _("Secrets masked")
        ESCALATED = "escalated", _("Escalated")
        UNVERIFIED = "unverified", _("Not verified")
        BUDGET_REFUSED = "budget_refused", _("Refused over budget")
        ACCEPTED = "accepted", _("Accepted in review")
        REJECTED = "rejected", _("Rejected in review")
        RELEASED = "released", _("Policy released")
        PROVIDER_FAILED = "provider_failed", _("Provider failed")
        RETRIED = "retried", _("Retried in review")
        FEEDBACK = "feedback", _("Feedback in review")

    class Check(models.TextChoices):
        SECRET_REDACTION = "secret_redaction", _("secret redaction")
        TERM_LIST = "term_list", _("term list")
        PATTERN_RULES = "pattern_rules", _("pattern rules")
        CITATIONS = "citations", _("citations")
        RULES_JUDGE = "rules_judge", _("rules judge")
        BUDGET = "budget", _("budget")
        FIELD = "field", _("field fill")
        REVIEW = "review", _("review")
        POLICY = "policy", _("policy release")
        PROVIDER = "provider", _("provider")

    at = models.DateTimeField(_("time"), default=timezone.now, db_index=True,
                              help_text=_("When the event was recorded."))
    correlation_id = models.CharField(
        _("correlation id"), max_length=64, db_index=True,
        help_text=_("One per screening: every event of the same screening carries it, and the screening's "
                    "response returns it as its id."))
    decision = models.CharField(
        _("decision"), max_length=20, choices=Decision.choices, db_index=True,
        help_text=_("What happened to the text: stopped, delivered with hints, secrets masked, refused over "
                    "budget, accepted or rejected in review, and so on."))
    # `check` would shadow Model.check(); the column and the API still say "check".
    check_name = models.CharField(
        _("check"), max_length=20, choices=Check.choices, db_column="check",
        help_text=_("Which check decided: secret redaction, term lists, pattern rules, citations, the rules judge, "
                    "the budget, a field fill's length, or an editor's review."))
    # Identifiers, not foreign keys: the log outlives the records it names.
    configuration = models.CharField(
        _("configuration"), max_length=100, blank=True, default="", db_index=True,
        help_text=_("The configuration's identifier, kept as text: the log outlives the records it names."))
    provider = models.CharField(
        _("provider"), max_length=100, blank=True, default="",
        help_text=_("The name of the provider that answered, else of the configuration's provider; kept as text."))
    model = models.CharField(_("model"), max_length=200, blank=True, default="",
                             help_text=_("The model name, kept as text."))
    actor = models.CharField(
        _("actor"), max_length=150, blank=True, default="",
        help_text=_("Who caused the event: consumer:newsroom for the API token of the consumer newsroom, user:anna "
                    "for the person signed in as anna."))
    mode = models.CharField(
        _("mode"), max_length=8, blank=True, default="", choices=Configuration.RuleMode.choices,
        help_text=_("The mode a finding was handled in: block or report. Blank where no mode applies (secret "
                    "redaction, budget, review)."))
    detail = models.JSONField(
        _("facts"), default=dict, blank=True,
        help_text=_("The policy facts as JSON: list name and terms, rule numbers and lines, judges' answers, the "
                    "reason. Never text a model wrote, never a passage."))

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["configuration", "at"])]
        verbose_name = _("governance event")
        verbose_name_plural = _("governance events")

    def __str__(self):
        # The admin's page title and breadcrumb: in the reader's words, like the columns.
        return (f"{self.at:%Y-%m-%d %H:%M:%S} {self.get_decision_display()}, {self.get_check_name_display()} "
                f"{self.configuration}")


class UsageDay(models.Model):
    """Requests, tokens and cost one configuration used on one calendar day (budget caps)."""

    configuration = models.ForeignKey(
        Configuration, on_delete=models.CASCADE, related_name="usage_days", verbose_name=_("configuration"),
        help_text=_("The configuration whose calls are counted. Each configuration a call tries counts on its own "
                    "row: a fallback's on the fallback's, a judge's on the judging configuration's."))
    day = models.DateField(_("day"), help_text=_("The calendar day in the server's time zone (TIME_ZONE, UTC by "
                                                 "default); the daily caps start again with each day."))
    requests = models.PositiveIntegerField(
        _("requests"), default=0,
        help_text=_("Calls counted against the daily request cap, before the provider is asked; failed ones "
                    "included."))
    tokens = models.PositiveBigIntegerField(_("tokens"), default=0,
                                            help_text=_("Input and output tokens of the calls that answered."))
    cost = models.DecimalField(
        _("cost"), max_digits=14, decimal_places=6, default=Decimal("0"),
        help_text=_("Cost of the calls that answered, at the provider's prices (litellm's price map where the "
                    "provider sets none)."))
    # For the dashboard (SPEC §10: judge failure rate and latency): calls whose provider failed
    # (errors, timeouts), and the summed latency of the calls that answered.
    failures = models.PositiveIntegerField(
        _("failures"), default=0,
        help_text=_("Counted calls whose provider failed (an error or a timeout): the dashboard's failure rate."))
    latency_ms = models.PositiveBigIntegerField(
        _("latency (ms)"), default=0,
        help_text=_("The response times of the calls that answered, added up in milliseconds: the dashboard's "
                    "mean latency."))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["configuration", "day"], name="usage_day_unique")]
        verbose_name = _("usage day")
        verbose_name_plural = _("usage days")


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
    kind = models.CharField(
        _("kind"), max_length=16, choices=Kind.choices, default=Kind.QUEUED_TASK,
        help_text=_("Queued task: a text the consumer does not wait for. Field fill: a proposed value for one field "
                    "of a record outside Gavel."))
    status = models.CharField(
        _("status"), max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True,
        help_text=_("Where the task stands: queued, running, ready (delivered, possibly with hints), blocked, failed "
                    "or cancelled; after review accepted or rejected."))
    consumer = models.ForeignKey(Consumer, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
                                 verbose_name=_("consumer"),
                                 help_text=_("The consumer that submitted the task; the API shows a task only to it."))
    # Identifiers, not foreign keys: a task outlives a renamed or deleted configuration,
    # and the worker resolves them when it runs (a missing one fails the task with a reason).
    configuration = models.CharField(
        _("configuration"), max_length=100, db_index=True,
        help_text=_("The identifier of the configuration the text is written through, kept as text: if it is gone "
                    "when the task runs, the task fails with that reason."))
    also = models.JSONField(_("further configurations"), default=list, blank=True,
                            help_text=_("Identifiers of further configurations whose term lists and rules apply "
                                        "too."))
    messages = models.JSONField(_("input messages"), default=list, blank=True,
                                help_text=_("OpenAI-shaped messages; an instruction is stored as one user message."))
    field = models.JSONField(_("field"), null=True, blank=True,
                             help_text=_("Field fills only: record, name, label, max_length."))
    site = models.CharField(_("site"), max_length=100, blank=True, default="",
                            help_text=_("The site the text is for, as the consumer stated it; term lists for this "
                                        "site ask for their required terms."))
    language = models.CharField(_("language"), max_length=35, blank=True, default="",
                                help_text=_("The language code the text is for, as the consumer stated it; term lists "
                                            "for this language ask for their required terms."))
    callback_url = models.URLField(
        _("callback URL"), max_length=1000, blank=True, default="",
        help_text=_("Gavel posts the task as JSON here when it is ready, blocked, failed, accepted or rejected. "
                    "Its host must be on GAVEL_CALLBACK_HOSTS."))
    batch = models.ForeignKey("Batch", null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks",
                              verbose_name=_("batch"), help_text=_("The batch the task was submitted in, if any."))

    attempts = models.PositiveIntegerField(_("attempts"), default=0,
                                           help_text=_("How many times a worker claimed this task."))
    lease_until = models.DateTimeField(_("claimed until"), null=True, blank=True,
                                       help_text=_("A running task whose lease has passed is taken over by another worker."))
    next_attempt_at = models.DateTimeField(
        _("next attempt at"), null=True, blank=True,
        help_text=_("After a provider failure (HTTP 429, 5xx, a timeout): when the task is tried again. Blank "
                    "otherwise."))

    # The screening result (SPEC §11.1): the answer as delivered, and the facts around it.
    outcome = models.CharField(_("outcome"), max_length=20, blank=True, default="",
                               help_text=_("The screening's outcome: allowed, allowed_with_hints or blocked. Blank "
                                           "until a screening finished."))
    answer = models.TextField(_("answer"), blank=True, default="",
                              help_text=_("The text as delivered, secrets masked. Empty when blocked, and after the "
                                          "purge."))
    hints = models.JSONField(_("hints"), default=list, blank=True,
                             help_text=_("The findings the text was delivered with: check, rule or list, passage, "
                                         "message. The purge empties the passages."))
    refusal = models.JSONField(_("refusal"), null=True, blank=True,
                               help_text=_("The block without its passage: what a record may keep."))
    verification = models.JSONField(
        _("verification"), default=dict, blank=True,
        help_text=_("What pattern rules and citations found: verified, unverified or not_applicable, with one "
                    "entry per rule. Verified never means correct."))
    checks = models.JSONField(_("checks"), default=list, blank=True,
                              help_text=_("Each check of the screening with its result, in the order they ran."))
    completion = models.JSONField(_("completion"), null=True, blank=True,
                                  help_text=_("The provider and model that answered, the tokens used and the cost."))
    policy_version = models.PositiveBigIntegerField(_("policy version"), null=True, blank=True,
                                                    help_text=_("The policy version the text was screened under."))
    correlation_id = models.CharField(
        _("correlation id"), max_length=64, blank=True, default="",
        help_text=_("The screening's id: the governance log's events of this run carry it."))
    failure = models.JSONField(_("failure"), null=True, blank=True, help_text=_("Code and message when failed."))

    # Review (SPEC §10): who, when, what, and the edited text when there was one.
    review_decision = models.CharField(_("review"), max_length=16, choices=Review.choices, blank=True, default="",
                                       help_text=_("The editor's decision: accepted or rejected."))
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+", verbose_name=_("reviewed by"),
                                    help_text=_("The editor who accepted or rejected the task."))
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True,
                                       help_text=_("When the task was accepted or rejected."))
    edited_text = models.TextField(_("edited text"), blank=True, default="",
                                   help_text=_("The editor's version, screened again before it was accepted; "
                                               "delivered instead of the answer. Emptied by the purge."))
    edited = models.BooleanField(_("edited"), default=False,
                                 help_text=_("Whether the editor changed the text before accepting it."))

    # Callback delivery (SPEC §10): visible on the task, never blocking a screening.
    callback_attempts = models.PositiveIntegerField(_("callback attempts"), default=0,
                                                    help_text=_("How many times Gavel tried to post the callback."))
    callback_status = models.CharField(
        _("callback status"), max_length=16, blank=True, default="",
        help_text=_("delivered; failing (another try follows); failed (Gavel gave up); refused (the host is no "
                    "longer allowed). Blank until the first try."))
    callback_error = models.CharField(
        _("callback error"), max_length=500, blank=True, default="",
        help_text=_("Why the last try failed: the HTTP status or the connection error. Never the task's text."))

    purged_at = models.DateTimeField(
        _("purged at"), null=True, blank=True,
        help_text=_("When the purge emptied the input, the answer, the edited text and the passages; status, "
                    "facts and times stay."))
    created = models.DateTimeField(_("created"), default=timezone.now, db_index=True,
                                   help_text=_("When the task was submitted."))
    updated = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the task last changed."))
    finished_at = models.DateTimeField(
        _("finished at"), null=True, blank=True,
        help_text=_("When the worker's part ended: ready, blocked, failed or cancelled."))

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
                                verbose_name=_("user"), help_text=_("The person these settings belong to."))
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


class PolicyExample(models.Model):
    """A text with the outcome the team expects under the policy (SPEC §12.1): what a policy test screens.

    Examples change what is tested, never what is enforced, so policy editors write them. A kept
    example is an explicit choice to keep its text: the task purge does not touch it.
    """

    class Outcome(models.TextChoices):
        ALLOWED = "allowed", _("allowed")
        ALLOWED_WITH_HINTS = "allowed_with_hints", _("allowed with hints")
        BLOCKED = "blocked", _("blocked")

    class Format(models.TextChoices):
        TEXT = "text", _("text")
        JSON = "json", _("JSON, judged by its strings")

    name = models.CharField(_("name"), max_length=200, unique=True,
                            help_text=_("How the policy file and test reports name this example."))
    # An identifier, not a foreign key: an example outlives a renamed or removed configuration, and a
    # test run then reports it as an error instead of the configuration being impossible to remove.
    configuration = models.CharField(_("configuration"), max_length=100,
                                     help_text=_("The identifier of the configuration the text is screened for."))
    also = models.JSONField(_("further configurations"), default=list, blank=True,
                            help_text=_("Identifiers of further configurations whose term lists and rules apply too."))
    kind = models.CharField(_("kind"), max_length=20, default="completion",
                            help_text=_("What the text is: completion, queued_task, field_fill, image_description "
                                        "or internal."))
    site = models.CharField(_("site"), max_length=100, blank=True, default="",
                            help_text=_("The site the text is for; term lists for this site ask for their required "
                                        "terms."))
    language = models.CharField(_("language"), max_length=35, blank=True, default="",
                                help_text=_("The language code the text is for."))
    format = models.CharField(_("format"), max_length=8, choices=Format.choices, default=Format.TEXT,
                              help_text=_("text, or json (judged by its strings)."))
    text = models.TextField(_("text"), blank=True, default="", help_text=_("The text as a model would write it."))
    tool_calls = models.JSONField(_("tool calls"), default=list, blank=True,
                                  help_text=_("Proposed tool calls instead of, or besides, the text: name and "
                                              "arguments."))
    expect_outcome = models.CharField(_("expected outcome"), max_length=20, choices=Outcome.choices,
                                      help_text=_("allowed, allowed with hints or blocked."))
    expect_findings = models.JSONField(
        _("expected findings"), default=list, blank=True,
        help_text=_("Findings that must be present, e.g. {\"check\": \"term_list\", \"list\": \"Brand words\", "
                    "\"term\": \"Rabatt*\"}."))
    expect_absent = models.JSONField(_("findings that must be absent"), default=list, blank=True,
                                     help_text=_("Findings that must not be present (a false positive fixed)."))
    note = models.TextField(_("note"), blank=True, default="", help_text=_("Why the team expects this outcome."))
    # Kept from review (SPEC §10.2): who kept it, when, from which task (the task may be purged since).
    kept_by = models.CharField(_("kept by"), max_length=150, blank=True, default="",
                               help_text=_("The user name of the editor who kept this example from a reviewed task."))
    kept_at = models.DateTimeField(_("kept at"), null=True, blank=True,
                                   help_text=_("When it was kept from review."))
    from_task = models.UUIDField(_("from task"), null=True, blank=True,
                                 help_text=_("The reviewed task it was kept from."))
    created = models.DateTimeField(_("created"), default=timezone.now, help_text=_("When the example was written."))
    updated = models.DateTimeField(_("updated"), auto_now=True, help_text=_("When the example last changed."))

    class Meta:
        ordering = ["name"]
        verbose_name = _("policy example")
        verbose_name_plural = _("policy examples")

    def __str__(self):
        return self.name


class PolicyRevision(models.Model):
    """One numbered version of the policy (SPEC §12.4): who, when, what changed, and the whole document.

    `number` is the value `PolicyVersion` held after the change, the policy_version screenings report.
    The document is the policy file (YAML) compressed with zlib; examples are part of it.
    """

    number = models.PositiveBigIntegerField(_("version"), unique=True,
                                            help_text=_("The policy version screenings report after this change."))
    at = models.DateTimeField(_("time"), default=timezone.now, help_text=_("When the change was committed."))
    actor = models.CharField(_("actor"), max_length=150, blank=True, default="",
                             help_text=_("Who made the change: a user name, a consumer, or the command line."))
    source = models.CharField(_("source"), max_length=20, blank=True, default="",
                              help_text=_("admin, import, api or restore."))
    summary = models.JSONField(_("summary"), default=dict, blank=True,
                               help_text=_("The records created, changed and removed."))
    document = models.BinaryField(_("document"), help_text=_("The policy file of this version, compressed."))

    class Meta:
        ordering = ["-number"]
        verbose_name = _("policy revision")
        verbose_name_plural = _("policy revisions")

    def __str__(self):
        return str(self.number)

    def document_yaml(self) -> str:
        import zlib

        return zlib.decompress(bytes(self.document)).decode("utf-8")
class Batch(models.Model):
    """Up to 10,000 tasks submitted at once (SPEC 10.1): their progress, one callback at the end."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("name"), max_length=200, blank=True, default="",
                            help_text=_("What the batch is, as its consumer named it."))
    consumer = models.ForeignKey(Consumer, null=True, blank=True, on_delete=models.SET_NULL, related_name="batches",
                                 verbose_name=_("consumer"), help_text=_("The consumer that submitted the batch."))
    created = models.DateTimeField(_("created"), auto_now_add=True, db_index=True,
                                   help_text=_("When the batch was submitted."))
    total = models.PositiveIntegerField(_("total"), default=0, help_text=_("How many tasks the batch holds."))
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True,
                                       help_text=_("When the last of its tasks finished. Blank while any still runs."))
    callback_url = models.URLField(
        _("callback URL"), max_length=1000, blank=True, default="",
        help_text=_("Gavel posts the batch as JSON here once, when it has finished."))
    callback_status = models.CharField(
        _("callback status"), max_length=16, blank=True, default="",
        help_text=_("What became of the batch's callback: delivered, failing, failed or refused; blank until sent."))
    callback_attempts = models.PositiveIntegerField(_("callback attempts"), default=0,
                                                    help_text=_("How often the callback was sent."))
    callback_error = models.CharField(_("callback error"), max_length=500, blank=True, default="",
                                      help_text=_("Why the last delivery failed, as the consumer may read it."))

    class Meta:
        verbose_name = _("batch")
        verbose_name_plural = _("batches")
        ordering = ["-created"]

    def __str__(self):
        return self.name or str(self.pk)


class HintFeedback(models.Model):
    """An editor's verdict on what the policy found in one task (SPEC §10.2): a hint right or wrong, or a
    rule or term the policy missed. Facts only — which check, list and term, snippet and rule number, or
    pattern identifier — never a passage or any other text, so it outlives the task purge.

    One row per task and finding: changing one's mind updates it, until the task's review is final.
    """

    class Verdict(models.TextChoices):
        RIGHT = "right", _("right")
        WRONG = "wrong", _("wrong")
        MISSED = "missed", _("missed")

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="feedback", verbose_name=_("task"),
                             help_text=_("The reviewed task the feedback is about."))
    check_name = models.CharField(_("check"), max_length=20, db_column="check",
                                  help_text=_("term_list, rules_judge, pattern_rules, citations or field."))
    list_name = models.CharField(_("list"), max_length=200, blank=True, default="",
                                 help_text=_("The term list, for a term."))
    term = models.CharField(_("term"), max_length=500, blank=True, default="",
                            help_text=_("The term as the list writes it."))
    snippet = models.CharField(_("snippet"), max_length=100, blank=True, default="",
                               help_text=_("The snippet of a judged rule."))
    rule = models.CharField(_("rule"), max_length=200, blank=True, default="",
                            help_text=_("A judged rule's line number in its snippet, or a pattern rule's identifier."))
    verdict = models.CharField(_("verdict"), max_length=8, choices=Verdict.choices,
                               help_text=_("right or wrong for a hint; missed for what the policy did not find."))
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+", verbose_name=_("editor"), help_text=_("The editor who gave it."))
    at = models.DateTimeField(_("time"), default=timezone.now, db_index=True, help_text=_("When it was given."))

    class Meta:
        ordering = ["-at"]
        verbose_name = _("hint feedback")
        verbose_name_plural = _("hint feedback")
        constraints = [
            models.UniqueConstraint(fields=["task", "check_name", "list_name", "term", "snippet", "rule"],
                                    name="one_feedback_per_task_finding"),
        ]

    def __str__(self):
        return f"{self.get_verdict_display()}: {self.check_name} {self.list_name or self.snippet} {self.term or self.rule}"

    def finding(self) -> dict:
        """The finding in the policy file's terms (an example's `findings` / `absent` entry)."""
        return finding_of(self.check_name, list_name=self.list_name, term=self.term, snippet=self.snippet,
                          rule=self.rule)


def finding_of(check: str, *, list_name: str = "", term: str = "", snippet: str = "", rule: str = "") -> dict:
    """One finding as the policy file writes it: `{check: term_list, list, term}`, `{check: rules_judge,
    snippet, rule}` (rule: the line number), `{check: pattern_rules, rule}`, `{check: citations, rule}`."""
    if check == "term_list":
        return {"check": check, "list": list_name, "term": term}
    if check == "rules_judge":
        return {"check": check, "snippet": snippet, "rule": int(rule) if str(rule).isdigit() else rule}
    if check in ("pattern_rules", "citations"):
        return {"check": check, "rule": rule}
    return {"check": check}
