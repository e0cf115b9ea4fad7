"""Domain errors the services and engines raise; the API layer maps them to HTTP.

Each carries a stable `code` (the error body's `code`, SPEC §11.1), a message a
person reads, and optional field errors. Nothing here knows HTTP exists:
`governance/api/errors.py` owns the status of each.
"""


class GavelError(Exception):
    """A refusal a caller can act on: a code, a message and, optionally, field errors."""

    default_code = "error"

    def __init__(self, message: str, *, code: str | None = None, fields=None):
        super().__init__(message)
        self.message = str(message)
        self.code = code or self.default_code
        self.fields = fields or {}

    def __str__(self):
        return self.message


class BadInput(GavelError):
    default_code = "invalid"


class TooLarge(GavelError):
    default_code = "too_large"


class NotGranted(GavelError):
    default_code = "forbidden"


class UnknownRecord(GavelError):
    default_code = "not_found"


class Unprocessable(GavelError):
    """The request keeps its schema, but what it says cannot be done: a policy document whose references name
    no record, say (the schema states the structure; this is the rest, issue 41)."""

    default_code = "invalid"


class Conflict(GavelError):
    """The record is not in a state that allows the act (a running task cannot be cancelled)."""

    default_code = "conflict"


class BudgetExceeded(GavelError):
    default_code = "budget_exceeded"


class ProviderFailed(GavelError):
    """Every provider of the chain failed. `retryable` is False when one refused the request
    itself (a 4xx other than 429): asking again later would not help."""

    default_code = "provider_error"

    def __init__(self, message: str, *, retryable: bool = True, **kwargs):
        super().__init__(message, **kwargs)
        self.retryable = retryable


class ProviderTimedOut(GavelError):
    default_code = "provider_timeout"


class ProviderBusy(GavelError):
    """The provider is at one of its limits (SPEC 10.1); `wait` says after how many seconds to ask again."""

    default_code = "provider_busy"

    def __init__(self, message: str, *, provider: str = "", reason: str = "", wait: float = 1.0, **kwargs):
        super().__init__(message, **kwargs)
        self.provider = provider
        self.reason = reason
        self.wait = wait
        self.retry_after = max(1, int(wait + 0.999))
