"""The governance log and usage: events that hold policy facts only, and daily usage per configuration."""
from decimal import Decimal

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.models.policy import Configuration


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
        UNDONE = "undone", _("Review undone")
        DRAFT_CREATED = "draft_created", _("Policy draft opened")
        DRAFT_SUBMITTED = "draft_submitted", _("Policy draft submitted")
        DRAFT_SENT_BACK = "draft_sent_back", _("Policy draft sent back")
        DRAFT_WITHDRAWN = "draft_withdrawn", _("Policy draft withdrawn")
        DRAFT_PUBLISHED = "draft_published", _("Policy draft published")
        DRAFT_REFUSED = "draft_refused", _("Policy draft publication refused")
        FORWARDED = "forwarded", _("Tool call forwarded")

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
        TOOL_CALL = "tool_call", _("tool call")  # the MCP gateway (SPEC §14)

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

