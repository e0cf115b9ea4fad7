"""Django settings for Gavel, read from the environment.

Every variable is documented in the README with its default; the defaults run
Gavel on SQLite with eager Celery and no other service (the embedded default).
"""
import os
from datetime import timedelta
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from governance import env_file

BASE_DIR = Path(__file__).resolve().parent.parent
# The test runner gets the embedded defaults without having to export anything.
TESTING = bool(os.environ.get("GAVEL_TESTING")) or "pytest" in (sys.argv[0] if sys.argv else "")
# One settings file for every process (governance/env_file.py): read before any variable below; the real
# environment wins over it.
try:
    GAVEL_ENV_FILE, _env_file_values = env_file.load(BASE_DIR, TESTING)
except env_file.MissingEnvFile as exc:
    raise ImproperlyConfigured(str(exc)) from None


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {value!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def cache_from_url(url: str) -> dict:
    """Turn CACHE_URL into a Django CACHES entry: locmem:// (default), redis://…, dummy://."""
    if not url or url.startswith("locmem://"):
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "gavel"}
    if url.startswith(("redis://", "rediss://", "unix://")):
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "TIMEOUT": 300,
            # A cache that hangs must not hang a screening: explicit socket timeouts.
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    if url.startswith("dummy://"):
        return {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
    raise ImproperlyConfigured(f"CACHE_URL scheme not supported: {url!r}")


VERDICT_CACHE_TABLE = "gavel_verdict_cache"


def verdict_cache_from(default: dict) -> dict:
    """The verdict cache's entry: the default cache when it is Redis (shared already), else the database."""
    if default["BACKEND"].endswith("RedisCache"):
        return {**default, "KEY_PREFIX": "verdicts"}
    return {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": VERDICT_CACHE_TABLE,
            "TIMEOUT": None, "OPTIONS": {"MAX_ENTRIES": 200_000, "CULL_FREQUENCY": 10}}


DEBUG = env_bool("DEBUG", False)
# The embedded default (SQLite, eager Celery, the demo) applies wherever no DATABASE_URL says
# otherwise, so every manage.py command in a checkout works with no variable set.
EMBEDDED = env_bool("GAVEL_EMBEDDED", False) or not os.environ.get("DATABASE_URL")
# The local data folder of a checkout (git-ignored): the generated secret key, the demo logins.
GAVEL_DATA_DIR = Path(os.environ.get("GAVEL_DATA_DIR") or BASE_DIR / "var")


def local_secret_key(folder: Path) -> str:
    """The embedded default's secret key: generated once per checkout and kept in the data folder,
    so sessions and signed values survive a restart and no two installs share a key."""
    path = folder / "secret_key"
    try:
        key = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    import secrets

    folder.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    # Written to a private temporary file, then moved into place: two processes starting at once
    # both end up reading one key.
    temporary = folder / f".secret_key.{os.getpid()}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(key + "\n")
    try:
        os.link(temporary, path)  # fails when another process was first: keep its key
    except FileExistsError:
        pass
    finally:
        temporary.unlink()
    return path.read_text(encoding="ascii").strip()


SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if TESTING:
        SECRET_KEY = "gavel-test-key-not-for-production"
    elif EMBEDDED or DEBUG:
        SECRET_KEY = local_secret_key(GAVEL_DATA_DIR)
    else:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DATABASE_URL is set (a production database) and DEBUG is off.")

# /metrics sums every web and worker process of an installation through files in one directory
# (governance/evidence/metrics.py): outside the embedded default and the tests, the installation's own,
# in its data folder, unless PROMETHEUS_MULTIPROC_DIR (in the environment file) names another.
# `manage.py prune_metrics` removes the files of ended processes, nothing else.
if not EMBEDDED and not TESTING:
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(GAVEL_DATA_DIR / "metrics"))
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    try:
        Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImproperlyConfigured(f"PROMETHEUS_MULTIPROC_DIR cannot be made: {exc}") from exc

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "axes",
    "csp",
    "governance",
    "snippets",
    "termlists",
    "judging",
]

MIDDLEWARE = [
    "governance.middleware.RequestIDMiddleware",
    "governance.evidence.tracing.RequestIdMiddleware",  # the request id on trace spans (SPEC §13.2)
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response (SPEC §11.4): settings below.
    "csp.middleware.CSPMiddleware",
    # /healthz answers a load balancer's probe by IP: before CommonMiddleware's Host check (the HTTPS
    # redirect exempts it: SECURE_REDIRECT_EXEMPT), after the security headers are added.
    "governance.health.HealthProbeMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "governance.middleware.UserLanguageMiddleware",
    # After the messages, the user and their language: a person's draft news, once, on their next admin page
    # (decision 0053).
    "governance.admin.notices.DraftNoticesMiddleware",
    # Before anything reads the body: an admin form over the upload limit returns to its page, saying the limit.
    "governance.middleware.AdminBodyLimitMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "governance.middleware.JSONErrorMiddleware",
    # Last, as django-axes asks: it turns a lock-out signalled during authentication into the lock-out page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "governance.urls"
WSGI_APPLICATION = "governance.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "governance.middleware.limits",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'gavel.sqlite3'}",
        # Persistent connections (a new PostgreSQL connection per request halves throughput), each
        # checked before a request reuses it, so a restarted server costs one failed check, not an error.
        # Behind PgBouncer in transaction mode, 0 lets PgBouncer do the pooling (docs/operations.md).
        conn_max_age=env_int("GAVEL_DB_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A test database in a file (not in memory), so a real Celery worker
    # started by the integration tests can open the same database.
    # One file per test process, so concurrent runs never share it.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / f"test-gavel-{os.getpid()}.sqlite3")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend with a health check that skips the SELECT 1 while the socket of an idle
    # connection has nothing to read (governance/postgresql/base.py; docs/operations.md).
    DATABASES["default"]["ENGINE"] = "governance.postgresql"
    # Every external call has a timeout, the database included.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = 5
    # `.iterator()` (exports, the dashboard, the sweeps) reads through a server-side cursor, which lives in
    # one connection's session: behind PgBouncer in transaction mode set 0 (docs/guide/operator.md).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = not env_bool("GAVEL_DB_SERVER_SIDE_CURSORS", True)

env_file.warn_sqlite_fallback(GAVEL_ENV_FILE, _env_file_values, DATABASES["default"]["ENGINE"])

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": cache_from_url(os.environ.get("CACHE_URL", ""))}
# The verdict cache (SPEC §12.4) is seen by every process of an installation: the configured Redis,
# else a table in the database (migration 0019 creates it), never one process's memory.
CACHES["verdicts"] = verdict_cache_from(CACHES["default"])

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

# The editors' login (SPEC §10): Django's LoginView, which non-staff editors can use. The admin
# keeps its own login page for /admin/.
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/review/"

# --- Logins that resist guessing (issue 11): django-axes on every Django login ---
# The axes backend comes first, so every authenticate(request, ...) -- the admin's login, /accounts/login/
# and any other Django auth login -- is counted and refused while locked, before a password is checked.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
# Failures counted per user name and address together, and per address alone: 10 lock that user name
# from that address, 50 lock the address; a success clears only its own user name's count from that
# address (governance/logins.py, axes' database handler with the two limits).
AXES_HANDLER = "governance.logins.GavelAxesHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_FAILURE_LIMIT = env_int("GAVEL_LOGIN_FAILURE_LIMIT", 10)
GAVEL_LOGIN_ADDRESS_FAILURE_LIMIT = env_int("GAVEL_LOGIN_ADDRESS_FAILURE_LIMIT", 50)
# A lock lifts by itself after this many minutes; an administrator lifts it at once (docs/permissions.md).
AXES_COOLOFF_TIME = timedelta(minutes=env_int("GAVEL_LOGIN_LOCK_MINUTES", 60))
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "governance.pages.locked_out"
# The admin's login form names its field "username", as Django's LoginView does.
AXES_USERNAME_FORM_FIELD = "username"

# --- What a browser may run (SPEC §11.4) ---
# Scripts only from Gavel's own files (no inline script, no eval, no other host); styles may be inline
# because the admin and Swagger UI set style attributes. Django's SecurityMiddleware adds the other two.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# --- Celery (SPEC §10, §11.4): eager when no broker is configured. ---
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Each worker process reserves twice its threads' worth of messages. With exactly as many as threads,
# kombu's Redis transport stops reading when the window is full and resumes only on its next poll (up
# to a second later): the threads then ran in waves, half of each 2 s cycle idle (docs/decisions.md).
CELERY_WORKER_PREFETCH_MULTIPLIER = env_int("GAVEL_WORKER_PREFETCH_MULTIPLIER", 2)
# A model call is waiting, not computing (SPEC 10.1): the README's `celery -A governance worker`
# runs GAVEL_WORKER_CONCURRENCY generations at once in threads of one process (docs/decisions.md).
CELERY_WORKER_POOL = os.environ.get("GAVEL_WORKER_POOL", "threads")
CELERY_WORKER_CONCURRENCY = env_int("GAVEL_WORKER_CONCURRENCY", 64)
# Redis redelivers an unacked message only after the visibility timeout; a
# task's longest legitimate run (provider timeouts x fallbacks) stays well
# below it, and the claim is idempotent, so a redelivery is harmless.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("GAVEL_VISIBILITY_TIMEOUT", 900)}
CELERY_BROKER_CONNECTION_TIMEOUT = 3
# Publishing waits at most this long for a broker that is down (the sweep resends later).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("GAVEL_CELERY_QUEUE", "gavel")
# How often celery beat sweeps for tasks and callbacks whose message may be lost.
GAVEL_SWEEP_INTERVAL_SECONDS = env_int("GAVEL_SWEEP_INTERVAL_SECONDS", 60)
CELERY_BEAT_SCHEDULE = {
    "sweep-tasks": {"task": "governance.sweep_tasks", "schedule": float(GAVEL_SWEEP_INTERVAL_SECONDS)},
    "sweep-callbacks": {"task": "governance.sweep_callbacks", "schedule": float(GAVEL_SWEEP_INTERVAL_SECONDS)},
    "purge-task-contents": {"task": "governance.purge_task_contents", "schedule": 24 * 3600.0},
    "publish-due-drafts": {"task": "governance.publish_due_drafts", "schedule": float(GAVEL_SWEEP_INTERVAL_SECONDS)},
}

# --- REST framework ---
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["governance.api.auth.ConsumerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["governance.api.auth.IsConsumer"],
    "DEFAULT_THROTTLE_CLASSES": ["governance.api.auth.ConsumerRateThrottle"],
    "DEFAULT_PARSER_CLASSES": ["governance.api.parsers.BodyParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "governance.api.negotiation.AnyAccept",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "governance.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Gavel API",
    "DESCRIPTION": "Screen and generate text under a governance policy.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["governance.api.schema.without_v1_alias"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "governance.api.schema.natural_component_names",
        "governance.api.schema.complete_responses",
        "governance.api.schema.callback_allow_list",
    ],
    "ENUM_NAME_OVERRIDES": {
        "ScreeningKindEnum": "governance.screening.pipeline.KINDS",
        "TaskKindEnum": ["queued_task", "field_fill"],
    },
}

# --- Gavel's own settings ---
GAVEL_MAX_TEXT_BYTES = env_int("GAVEL_MAX_TEXT_BYTES", 1024 * 1024)
# A batch of up to 10,000 task bodies (POST /api/v1/batches) may be this large (413 past it, naming this
# setting); within it the body's JSON values are counted before it is parsed (governance/api/batch_body.py).
GAVEL_MAX_BATCH_BYTES = env_int("GAVEL_MAX_BATCH_BYTES", 64 * 1024 * 1024)
# Django refuses bodies above this itself; keep it above Gavel's own limit so
# Gavel answers the 413 with its error shape.
DATA_UPLOAD_MAX_MEMORY_SIZE = GAVEL_MAX_TEXT_BYTES + 64 * 1024
# One term list field (forbidden or required) holds at most this many bytes: well inside one admin save.
GAVEL_TERM_LIST_MAX_BYTES = env_int("GAVEL_TERM_LIST_MAX_BYTES", 512 * 1024)
GAVEL_THROTTLE_RATE = os.environ.get("GAVEL_THROTTLE_RATE", "600/min")
GAVEL_TASK_RETENTION_DAYS = env_int("GAVEL_TASK_RETENTION_DAYS", 30)
# Drafts (SPEC §12.5): with four eyes on, the author of a policy draft never publishes it.
GAVEL_POLICY_FOUR_EYES = env_bool("GAVEL_POLICY_FOUR_EYES", False)
# A report over other people's texts (a replay, evidence) never answers about fewer texts than this to anyone
# who may not read them in the review UI (SPEC §12.5, issue 41). 1 or more.
GAVEL_REPORT_MIN_TEXTS = max(1, env_int("GAVEL_REPORT_MIN_TEXTS", 5))
# The secret evidence hashes are keyed from (docs/evidence.md); SECRET_KEY unless set. Keep it when SECRET_KEY rotates.
GAVEL_EVIDENCE_SECRET = os.environ.get("GAVEL_EVIDENCE_SECRET", "")
# /metrics is open to loopback; elsewhere only with this bearer token (unset: loopback only).
GAVEL_METRICS_TOKEN = os.environ.get("GAVEL_METRICS_TOKEN", "")
# Time bound per pattern rule per text (SPEC §6.5): a pattern that would backtrack for ever is a failed check.
GAVEL_PATTERN_TIMEOUT_MS = env_int("GAVEL_PATTERN_TIMEOUT_MS", 100)
GAVEL_CALLBACK_HOSTS = env_list("GAVEL_CALLBACK_HOSTS", [])
# The MCP gateway (SPEC §14, docs/mcp.md): how long a tool call waits for an editor's approval, how many calls
# one consumer may keep waiting at once (each holds a web thread), how long an upstream's tool list is reused.
GAVEL_MCP_APPROVAL_SECONDS = env_int("GAVEL_MCP_APPROVAL_SECONDS", 300)
GAVEL_MCP_WAITING_CALLS = env_int("GAVEL_MCP_WAITING_CALLS", 2)
GAVEL_MCP_TOOLS_SECONDS = env_int("GAVEL_MCP_TOOLS_SECONDS", 5)
# The environment variables a provider may name as its key (never Gavel's own settings): models/provider_keys.py.
GAVEL_PROVIDER_KEY_ENVS = env_list("GAVEL_PROVIDER_KEY_ENVS", ["*_API_KEY", "*_TOKEN"])
GAVEL_CALLBACK_TIMEOUT = env_int("GAVEL_CALLBACK_TIMEOUT", 5)
GAVEL_CALLBACK_MAX_ATTEMPTS = env_int("GAVEL_CALLBACK_MAX_ATTEMPTS", 6)
GAVEL_CALLBACK_RETRY_BASE_SECONDS = env_int("GAVEL_CALLBACK_RETRY_BASE_SECONDS", 10)
# An open callback this long past its due time had its message lost (a broker restart, a killed
# worker): the callback sweep sends it again (governance/work/deliveries.py).
GAVEL_CALLBACK_SWEEP_GRACE_SECONDS = env_int("GAVEL_CALLBACK_SWEEP_GRACE_SECONDS", 120)
# The embedded default has no celery beat: a request starts the callback sweep in a background thread, at
# most once every GAVEL_SWEEP_INTERVAL_SECONDS (governance/work/embedded_sweep.py). Off in the test run,
# whose requests must not start threads behind a test's back (the sweep's tests switch it on).
GAVEL_SWEEP_ON_REQUESTS = env_bool("GAVEL_SWEEP_ON_REQUESTS", not TESTING)
# A worker's claim on a task lasts this long; a running task whose worker died is taken over
# after it. It must exceed the longest legitimate run (docs/tasks.md) and, with the broker's
# visibility timeout, bounds how late a dead worker's task finishes (SPEC §10: + 2 minutes).
GAVEL_TASK_LEASE_SECONDS = env_int("GAVEL_TASK_LEASE_SECONDS", 120)
GAVEL_TASK_LEASE_MARGIN_SECONDS = env_int("GAVEL_TASK_LEASE_MARGIN_SECONDS", 30)
GAVEL_TASK_MAX_ATTEMPTS = env_int("GAVEL_TASK_MAX_ATTEMPTS", 4)
GAVEL_TASK_RETRY_BASE_SECONDS = env_int("GAVEL_TASK_RETRY_BASE_SECONDS", 5)
GAVEL_TASK_SWEEP_GRACE_SECONDS = env_int("GAVEL_TASK_SWEEP_GRACE_SECONDS", 120)
# A worker process shares this many PostgreSQL connections among its threads (psycopg's pool);
# a thread gives its connection back while it waits for a model (docs/operations.md).
GAVEL_WORKER_DB_CONNECTIONS = env_int("GAVEL_WORKER_DB_CONNECTIONS", 8)
# `manage.py run_workers` (the README's worker line): this many worker processes, one per core unless
# set (governance/work/supervisor.py); a dead one is started again after GAVEL_WORKER_RESTART_SECONDS.
GAVEL_WORKER_PROCESSES = env_int("GAVEL_WORKER_PROCESSES", 0) or max(1, len(os.sched_getaffinity(0)))
GAVEL_WORKER_RESTART_SECONDS = float(os.environ.get("GAVEL_WORKER_RESTART_SECONDS", "1"))
# A queued task whose provider is at a limit waits this long in its worker thread before it is sent
# again with a countdown (SPEC 10.1); a completion waits up to its timeout, then 429 provider_busy.
GAVEL_TASK_LIMIT_WAIT_SECONDS = env_int("GAVEL_TASK_LIMIT_WAIT_SECONDS", 2)
# The window of requests_per_minute and tokens_per_minute. Only tests shorten it.
GAVEL_LIMIT_WINDOW_SECONDS = env_int("GAVEL_LIMIT_WINDOW_SECONDS", 60)

# --- Behind TLS (GAVEL_HTTPS=1): one switch for a deployment whose proxy terminates HTTPS. ---
# The proxy must set X-Forwarded-Proto (and strip it from clients); /healthz stays reachable over plain
# HTTP and by IP (governance.health.HealthProbeMiddleware) so a load balancer's probe is neither redirected
# nor refused. `manage.py check --deploy` then reports no issue.
GAVEL_HTTPS = env_bool("GAVEL_HTTPS", False)
if GAVEL_HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]  # probed and scraped by address
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("GAVEL_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("GAVEL_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("GAVEL_HSTS_PRELOAD", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # axes says every successful login at INFO; its lock-outs (WARNING) and gavel.security's stay.
    "loggers": {"LiteLLM": {"level": "WARNING"}, "httpx": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# Serve static files (admin, Swagger UI from the sidecar) from the app itself,
# so /api/v1/docs/ renders offline with no CDN and no separate web server.
# The embedded default serves them from the packages too (no collectstatic in a checkout).
WHITENOISE_USE_FINDERS = DEBUG or TESTING or EMBEDDED
WHITENOISE_AUTOREFRESH = DEBUG or TESTING or EMBEDDED
