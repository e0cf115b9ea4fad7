"""Policy records: providers, configurations with their judge and fallback links, policy versions."""
import copy
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import IntegrityError, models, transaction
from django.db.models import F
from django.dispatch import Signal
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from governance.models.families import configuration_faults
from governance.models.provider_keys import key_env_problem
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


def validate_tool_names(value):
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise ValidationError(_("Enter a list of tool names."))


def normalise_tool_names(values) -> list[str]:
    """Tool names as a call names them: trimmed, case kept (a provider tells `Search` from `search`), once each."""
    seen: list[str] = []
    for raw in values or []:
        name = str(raw).strip()
        if name and name not in seen:
            seen.append(name)
    return seen


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
        if problem := key_env_problem(self.api_key_env):
            raise ValidationError({"api_key_env": problem})
        if self.pk and Provider.objects.filter(pk=self.pk).exclude(kind=self.kind).exists():
            # Changing the kind must not turn this provider's configurations into mixed ones (SPEC §6.4).
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
    timeout = models.PositiveIntegerField(_("timeout"), default=0,
                                          help_text=_("seconds; 0 uses the provider's timeout"))
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
    read_tools = models.JSONField(
        _("read tools"), default=list, blank=True, validators=[validate_tool_names],
        help_text=_("Names of the tools whose calls only read (a search, a page lookup): their arguments are not "
                    "screened. A caller may narrow this list, never widen it; any other tool's arguments are "
                    "screened."))
    # The MCP gateway (SPEC §14): which upstream MCP servers this configuration reaches and how their tools
    # are treated. Server names, not foreign keys, as the policy file writes them (governance/models/mcp.py).
    mcp_servers = models.JSONField(
        _("MCP servers"), default=list, blank=True, validators=[validate_tool_names],
        help_text=_("Names of the MCP servers whose approved tools this configuration offers at /mcp/ followed by its "
                    "identifier (e.g. /mcp/newsroom)."))
    approve_tools = models.JSONField(
        _("tools needing approval"), default=list, blank=True, validators=[validate_tool_names],
        help_text=_("Tools whose calls wait for an editor's decision in the review UI before they are forwarded."))
    deny_tools = models.JSONField(
        _("denied tools"), default=list, blank=True, validators=[validate_tool_names],
        help_text=_("Tools never offered and never called, even when approved."))
    mcp_results = models.CharField(
        _("tool results"), max_length=8, choices=RuleMode.choices, default=RuleMode.REPORT,
        help_text=_("How a tool's result is screened by the term lists and pattern rules once its secrets are "
                    "masked. off: not screened. report: delivered, findings recorded. block: a finding stops it."))
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
        for name in ("read_tools", "mcp_servers", "approve_tools", "deny_tools"):
            if isinstance(getattr(self, name), list):
                setattr(self, name, normalise_tool_names(getattr(self, name)))
        if self.escalation_id and self.pk and self.escalation_id == self.pk:
            errors["escalation"] = _("A configuration cannot escalate to itself.")
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
        # store: model validation (governance.models.families) judges the record as it will stand.
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


# --- one policy edit, one version bump (SPEC §5.5, §11.1) ---
# Sent after every bump; governance.policy.versions keeps each version as a revision (SPEC §12.4).
version_bumped = Signal()

# Inside one_bump(): the edits seen so far, bumped once at its end instead of once each.
_pending: ContextVar[list | None] = ContextVar("policy_edits_pending", default=None)


@contextmanager
def one_bump():
    """Many saves that are one policy edit (an import): one version bump at the end, none if nothing
    was saved or the block raised (its transaction is rolled back anyway). Nested blocks are one edit."""
    if _pending.get() is not None:  # inside another one: its end counts these edits too
        yield
        return
    pending: list = []
    token = _pending.set(pending)
    try:
        yield
    finally:
        _pending.reset(token)
    if pending:
        PolicyVersion.bump()


def count_edit(sender, **kwargs):
    """A policy record was saved or deleted (the receiver of governance.records.signals): bump, or
    count the edit towards the enclosing one_bump()."""
    if kwargs.get("raw"):
        return
    pending = _pending.get()
    if pending is not None:
        pending.append(sender)
        return
    PolicyVersion.bump()


def policy_edited(sender) -> None:
    """Count an edit that sends no model signal (a bulk write of judge or fallback links)."""
    count_edit(sender)


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
        cls._bump()
        # Every version is kept as a revision once its change commits (SPEC §12.4): the receiver,
        # governance.policy.versions, is connected when the app is ready. Sent after the UPDATE,
        # since outside a transaction the revision is written at once.
        version_bumped.send(sender=cls)

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
