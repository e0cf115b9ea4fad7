"""Shared fixtures: users of different rights, consumers with tokens, a provider server."""
import os
from fnmatch import fnmatch

os.environ.setdefault("GAVEL_TESTING", "1")

import pytest  # noqa: E402

from tests.ordering import WAITING, path_of  # noqa: E402
from tests.provider_fixtures import *  # noqa: E402,F401,F403  (provider_server fixtures)

# Marked by file name, so a new file of the kind is marked too (`make test-fast` leaves these out).
MARKED_BY_PATH = {
    "clients": ("protocols/test_clients_*.py", "governance/test_*_dropin.py", "production/test_sse_clients.py"),
    "browser": ("browser/test_*.py",),
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config, items):
    grouped = config.pluginmanager.hasplugin("xdist")
    for item in items:
        path = path_of(item)
        if path is None:
            continue
        for marker, patterns in MARKED_BY_PATH.items():
            if any(fnmatch(path, pattern) for pattern in patterns):
                item.add_marker(marker)
        # `make test` spreads single tests over its workers (--dist loadgroup); a module with a module-scoped
        # fixture (a browser, a migrated database, `make run` in a fresh copy) stays on one worker, so that
        # fixture is set up once. The tests that mostly wait share one worker (tests/ordering.py), their modules
        # whole, so a module-scoped fixture of theirs is set up once too.
        if grouped and path in WAITING:
            item.add_marker(pytest.mark.xdist_group("waiting"))
            continue
        fixtures = getattr(item, "_fixtureinfo", None)
        if grouped and fixtures and any(definition.scope == "module" for definitions in
                                        fixtures.name2fixturedefs.values() for definition in definitions):
            item.add_marker(pytest.mark.xdist_group(path))


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing():
    """Django's advice for test runs: the first hasher is MD5, so a test's login or user costs microseconds, not
    the 0.4 s of the default's 1,000,000 PBKDF2 rounds (over 200 s of the suite's CPU). The default hashers stay
    behind it, so a password a server process made under the real settings is still checked."""
    from django.conf import settings
    from django.test.utils import override_settings

    hashers = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]
    with override_settings(PASSWORD_HASHERS=hashers):
        yield


@pytest.fixture
def provider(db, provider_server):
    from governance.models import Provider

    return Provider.objects.create(
        name="local-test", kind="chat", route="openai", api_base=provider_server.base_url,
        api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=5,
        price_per_mtok_in=1, price_per_mtok_out=2,
    )


@pytest.fixture
def configuration(db, provider):
    from governance.models import Configuration

    return Configuration.objects.create(identifier="newsroom", provider=provider, model="test-model")


@pytest.fixture
def backup(db, provider_server, configuration):
    """A second provider on the same server, and `newsroom` falling back to a configuration on it."""
    from governance.models import Configuration, Provider, set_links

    provider = Provider.objects.create(
        name="fallback-test", kind="chat", route="openai", api_base=provider_server.base_url,
        api_key_env="PROVIDER_TEST_API_KEY", trust_zone="local", timeout=5,
    )
    fallback = Configuration.objects.create(identifier="newsroom-backup", provider=provider, model="backup-model")
    set_links(configuration, "fallbacks", [fallback])
    return fallback


@pytest.fixture
def make_consumer(db):
    from governance.models import Consumer

    def make(name="consumer", configurations=(), is_admin=False, throttle_rate="", kinds=None):
        consumer = Consumer(name=name, is_admin=is_admin, throttle_rate=throttle_rate)
        if kinds is not None:
            consumer.kinds = ["completion", *kinds]
        token = consumer.issue_token()
        consumer.save()
        consumer.configurations.set(configurations)
        return consumer, token

    return make


@pytest.fixture
def api(db, configuration, make_consumer):
    """An API client authenticated as a consumer granted `newsroom`."""
    from rest_framework.test import APIClient

    consumer, token = make_consumer("newsroom-app", [configuration])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    client.consumer = consumer
    return client


@pytest.fixture
def granted_api(db, configuration, make_consumer):
    """An API client whose consumer, granted `newsroom`, may also state the kinds that need a grant
    (internal, image_description: SPEC §3)."""
    from rest_framework.test import APIClient

    consumer, token = make_consumer("labeller-app", [configuration], kinds=["internal", "image_description"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    client.consumer = consumer
    return client


def _clear_verdicts():
    """The verdict cache is a database table (not a model: a transactional test's flush keeps it)."""
    from django.core.cache import caches
    from django.db import DatabaseError

    try:
        caches["verdicts"].clear()
    except (DatabaseError, RuntimeError):
        pass  # a test without database access (pytest-django's RuntimeError), or before the table exists


@pytest.fixture(autouse=True)
def _isolated_cache_and_key(monkeypatch):
    """Throttle counts live in the cache and are keyed by consumer id, which a
    rolled-back SQLite database reuses: start every test with an empty cache.
    The test provider's key variable is set so litellm's OpenAI route sends.
    A request's LocaleMiddleware leaves its language active in the thread (a
    server's next request activates its own): every test ends in the default.
    Compiled pattern rules are kept per policy version, and a rolled-back database
    reuses version numbers: every test starts without them (and without
    the configurations kept per version)."""
    from django.core.cache import cache
    from django.utils import translation

    from governance.screening.service import forget_configurations
    from snippets.services import forget_compiled as forget_compiled_patterns
    from termlists.services import forget_compiled

    monkeypatch.setenv("PROVIDER_TEST_API_KEY", "test-key-not-secret")
    cache.clear()
    _clear_verdicts()
    # A rolled-back database starts again at policy version 1 (and SQLite reuses ids): what this
    # process cached per version must not outlive the test.
    forget_compiled_patterns()
    forget_compiled()
    forget_configurations()
    yield
    cache.clear()
    _clear_verdicts()
    forget_compiled_patterns()
    forget_compiled()
    forget_configurations()
    translation.deactivate()


@pytest.fixture(autouse=True)
def _private_data_folder(settings, tmp_path_factory):
    """seed_demo keeps the demo logins in the local data folder: each test gets its own, so no test
    reads or writes the checkout's var/."""
    settings.GAVEL_DATA_DIR = tmp_path_factory.mktemp("gavel-data")
