"""Who calls and who reviews: consumers with their grants and tokens, and editors' profiles."""
import hashlib
import re
import secrets

from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.models.policy import Configuration

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
    # How an agent client is shown a block and report-mode hints (SPEC §11.9): a property of the consumer,
    # not of the request, so no caller switches it per call.
    BLOCKS_AS_REFUSAL, BLOCKS_AS_MESSAGE = "refusal", "message"
    BLOCKS_AS_CHOICES = [
        (BLOCKS_AS_REFUSAL, _("refusal (the protocol's refusal: stop_reason refusal, status incomplete, "
                              "finish_reason content_filter)")),
        (BLOCKS_AS_MESSAGE, _("message (a normal finished answer whose text is Gavel's block message)")),
    ]
    blocks_as = models.CharField(
        _("blocks as"), max_length=16, choices=BLOCKS_AS_CHOICES, default=BLOCKS_AS_REFUSAL,
        help_text=_("How a blocked answer reaches this consumer on the OpenAI and Anthropic endpoints. refusal: the "
                    "protocol's own refusal, what the SDKs document. message: a normal finished answer whose text "
                    "is Gavel's message, for agent CLIs (Claude Code, Codex) that would otherwise show a block as "
                    "the model vendor's usage-policy refusal or retry it. gavel.block and X-Gavel-Outcome: "
                    "blocked are there either way."))
    HINTS_AS_MEMBER, HINTS_AS_NOTE = "member", "note"
    HINTS_AS_CHOICES = [
        (HINTS_AS_MEMBER, _("member (in the gavel member only)")),
        (HINTS_AS_NOTE, _("note (also a short note after the answer text)")),
    ]
    hints_as = models.CharField(
        _("hints as"), max_length=16, choices=HINTS_AS_CHOICES, default=HINTS_AS_MEMBER,
        help_text=_("Where report-mode hints reach this consumer on the OpenAI and Anthropic endpoints. member: in "
                    "the gavel member (and the REST API's hints) only. note: also as a short note appended to the "
                    "answer text, where an agent CLI's user reads it."))
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

