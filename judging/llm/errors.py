"""How a model call fails: ``ProviderError`` (what the service layer reads) and the classification of
whatever litellm raised into one, with the provider's message shortened and credentials masked."""

from __future__ import annotations

import re
from collections.abc import Sequence

_DETAIL_LIMIT = 300


class UnsupportedParameters(ValueError):
    """The provider's route does not take these client parameters (litellm's list for the route):
    the caller is told, never left to a silent drop or a provider's refusal."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(", ".join(names))
        self.names = list(names)


class ProviderError(Exception):
    """A call that did not produce an answer.

    ``retryable`` says whether another provider is worth asking (connection
    errors, timeouts, HTTP 429 and 5xx); ``timeout`` marks timeouts; ``status``
    is the provider's HTTP status when one arrived; ``reason`` is short and
    holds no provider text; ``kind`` is a stable code for records;
    ``after_first_chunk`` is True when a stream had already delivered text.
    ``detail`` is the provider's message, shortened and with credentials
    masked, for logs only.
    """

    def __init__(
        self,
        reason: str,
        *,
        kind: str = "error",
        retryable: bool = False,
        timeout: bool = False,
        status: int | None = None,
        after_first_chunk: bool = False,
        detail: str = "",
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.retryable = retryable
        self.timeout = timeout
        self.status = status
        self.after_first_chunk = after_first_chunk
        self.detail = detail
        # Where the call went, for the person who can fix it (set by the call that failed): the
        # address asked, the seconds allowed, the key variable's name. Never a key.
        self.api_base: str | None = None
        self.timeout_seconds: float | None = None
        self.key_env: str | None = None
        self.refused = False  # a connection error because nothing listens at the address

    def __reduce__(self):  # keep it picklable (Celery results, multiprocessing)
        return (
            _rebuild_provider_error,
            (self.reason, self.kind, self.retryable, self.timeout, self.status, self.after_first_chunk, self.detail),
        )

    def __repr__(self) -> str:
        return (
            f"ProviderError({self.reason!r}, kind={self.kind!r}, retryable={self.retryable}, "
            f"timeout={self.timeout}, status={self.status}, after_first_chunk={self.after_first_chunk})"
        )


def _rebuild_provider_error(reason, kind, retryable, timeout, status, after_first_chunk, detail) -> ProviderError:
    return ProviderError(
        reason,
        kind=kind,
        retryable=retryable,
        timeout=timeout,
        status=status,
        after_first_chunk=after_first_chunk,
        detail=detail,
    )


_CLIENT_REASONS = {
    400: ("bad_request", "request refused by the provider"),
    401: ("unauthorized", "provider refused the credentials"),
    402: ("payment_required", "provider refused: payment required"),
    403: ("forbidden", "provider refused access"),
    404: ("not_found", "model or endpoint not found"),
    409: ("conflict", "provider reported a conflict"),
    413: ("too_large", "request too large for the provider"),
    422: ("unprocessable", "provider could not process the request"),
}


def classify_error(error: BaseException, *, api_key: str | None = None, after_first_chunk: bool = False) -> ProviderError:
    """Turn whatever a litellm call raised into a ``ProviderError``."""
    if isinstance(error, ProviderError):
        return error
    chain = _exception_chain(error)
    top = error
    original = getattr(error, "original_exception", None)
    if type(error).__name__ == "MidStreamFallbackError" and isinstance(original, BaseException):
        top = original  # litellm's wrapper for a broken stream; the cause decides
    status = _status_of(top)
    detail = _safe_detail(error, api_key)

    def build(kind: str, reason: str, *, retryable: bool, timeout: bool = False, code: int | None = None):
        if after_first_chunk:
            reason = f"stream broke after the first chunk: {reason}"
        return ProviderError(
            reason,
            kind=kind,
            retryable=retryable,
            timeout=timeout,
            status=code,
            after_first_chunk=after_first_chunk,
            detail=detail,
        )

    if any(_is_timeout(item) for item in chain):
        client_side = any(_is_transport_timeout(item) for item in chain)
        return build("timeout", "timed out", retryable=True, timeout=True, code=None if client_side else status)
    if any(type(item).__name__ == "DecisionsResponseValidationError" for item in chain):
        return build("unusable_response", "provider answer could not be parsed", retryable=False)
    if any(_is_transport_error(item) for item in chain):
        if any(_is_refused(item) for item in chain):
            refused = build("connection", "connection refused", retryable=True)
            refused.refused = True
            return refused
        return build("connection", "connection to the provider failed", retryable=True)
    if status == 429 or _is_instance_named(top, "RateLimitError"):
        return build("rate_limited", "rate limited by the provider (HTTP 429)", retryable=True, code=429)
    if _is_instance_named(top, "APIConnectionError"):
        return build("connection", "connection to the provider failed", retryable=True)
    if status is not None and status >= 500:
        return build("server_error", f"provider error (HTTP {status})", retryable=True, code=status)
    if status is not None and 400 <= status < 500:
        kind, reason = _CLIENT_REASONS.get(status, ("client_error", "request refused by the provider"))
        return build(kind, f"{reason} (HTTP {status})", retryable=False, code=status)
    return build("error", "the call failed", retryable=False, code=status)


def _exception_chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    pending: list[BaseException | None] = [error]
    while pending and len(seen) < 20:
        item = pending.pop(0)
        if item is None or any(item is known for known in seen):
            continue
        seen.append(item)
        original = getattr(item, "original_exception", None)
        pending.extend([item.__cause__, item.__context__, original if isinstance(original, BaseException) else None])
    return seen


def answer_broke_off(error: BaseException) -> bool:
    """True when the provider had begun its answer (status and headers arrived) and the body then
    stopped short of its declared end: the plain call's counterpart of a stream that broke after its
    first chunk. h11 (under httpx, under the openai and anthropic clients) says so in these words for
    a short Content-Length body and for an unfinished chunked one alike."""
    return any("complete message body" in str(item) for item in _exception_chain(error))


def _is_refused(error: BaseException) -> bool:
    """Nothing listens at the address (errno ECONNREFUSED), however deep httpx wrapped it."""
    return isinstance(error, ConnectionRefusedError) or "connection refused" in str(error).lower() \
        or "errno 111" in str(error).lower()


def _is_instance_named(error: BaseException, name: str) -> bool:
    return any(klass.__name__ == name for klass in type(error).__mro__)


def _is_transport_timeout(error: BaseException) -> bool:
    try:
        import httpx

        if isinstance(error, httpx.TimeoutException):
            return True
    except ImportError:  # pragma: no cover - httpx comes with litellm
        pass
    return isinstance(error, TimeoutError)


def _is_timeout(error: BaseException) -> bool:
    # litellm.Timeout and openai.APITimeoutError (also what a provider's 408 becomes)
    return _is_transport_timeout(error) or _is_instance_named(error, "APITimeoutError") or (
        _is_instance_named(error, "Timeout") and type(error).__module__.startswith("litellm")
    )


def _is_transport_error(error: BaseException) -> bool:
    try:
        import httpx

        if isinstance(error, httpx.TransportError):
            return True
    except ImportError:  # pragma: no cover
        pass
    if isinstance(error, ConnectionError):
        return True
    # openai's APIConnectionError (not litellm's catch-all of the same name)
    return type(error).__module__.startswith("openai") and _is_instance_named(error, "APIConnectionError")


def _status_of(error: BaseException) -> int | None:
    for candidate in (getattr(error, "status_code", None), getattr(getattr(error, "response", None), "status_code", None)):
        try:
            if candidate is not None:
                return int(candidate)
        except (TypeError, ValueError):
            continue
    return None


_SECRET_SHAPES = re.compile(
    r"(?i)(bearer\s+)[^\s'\"]+|(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[^\s'\",&]+"
    r"|\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}|\bAIza[0-9A-Za-z_\-]{10,}|\bgh[pousr]_[A-Za-z0-9]{10,}"
    r"|//[^/\s:@]+:[^/\s@]+@"
)


def _mask(match: re.Match[str]) -> str:
    if match.group(1):
        return match.group(1) + "***"
    if match.group(2):
        return match.group(2) + "***"
    if match.group(0).startswith("//"):
        return "//***@"
    return "***"


def _safe_detail(error: BaseException, api_key: str | None) -> str:
    try:
        text = str(getattr(error, "message", None) or error)
    except Exception:
        text = type(error).__name__
    if api_key:
        text = text.replace(api_key, "***")
    text = _SECRET_SHAPES.sub(_mask, text)
    text = " ".join(text.split())
    return text[:_DETAIL_LIMIT]
