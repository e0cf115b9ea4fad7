"""The verdict cache is seen by every process of an installation (issue 25, finding 15; SPEC §12.4).

The embedded default keeps its Django cache in process memory; verdicts kept there were gone for the
next `test_policy --judges cached`, a new process. They live in the database (or Redis when CACHE_URL
names it): a second run, after this process's memory caches are emptied as a new process starts
without them, asks no judge again.
"""
from io import StringIO

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.management import call_command

from governance.models import PolicyExample
from governance.settings import cache_from_url, verdict_cache_from
from tests.judging.conftest import TEXT, judge_requests, verdict

pytestmark = pytest.mark.django_db


def run_test_policy(*args) -> str:
    out = StringIO()
    call_command("test_policy", "--judges", "cached", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_second_test_policy_run_in_a_new_process_asks_no_judge_again(ruled, provider_server):
    PolicyExample.objects.create(name="promise-reported", configuration="newsroom", text=TEXT,
                                 expect_outcome="allowed_with_hints",
                                 expect_findings=[{"check": "rules_judge", "snippet": "tone", "rule": 3}])
    provider_server.set_default(verdict((2, "we ship your order tomorrow")))
    run_test_policy()
    assert len(judge_requests(provider_server)) == 1
    for alias in settings.CACHES:  # what a new process has of this one's memory: nothing
        if isinstance(caches[alias], LocMemCache):
            caches[alias].clear()
    run_test_policy()
    assert len(judge_requests(provider_server)) == 1, "the second run asked a judge again"


def test_verdicts_are_kept_where_every_process_sees_them():
    assert caches["verdicts"].__class__.__name__ in ("DatabaseCache", "RedisCache")
    assert verdict_cache_from(cache_from_url(""))["BACKEND"].endswith("db.DatabaseCache")
    redis = verdict_cache_from(cache_from_url("redis://127.0.0.1:6379/3"))
    assert redis["BACKEND"].endswith("RedisCache") and redis["LOCATION"] == "redis://127.0.0.1:6379/3"


def test_verdicts_a_draft_run_found_outlive_the_drafts_rolled_back_transaction(ruled, provider_server):
    """A draft is tested inside a transaction that is rolled back; the verdict table is in the same
    database, so its verdicts are written after that transaction, and the next dry run reuses them."""
    from governance import policy
    from governance.policy import release

    PolicyExample.objects.create(name="promise-reported", configuration="newsroom", text=TEXT,
                                 expect_outcome="allowed_with_hints",
                                 expect_findings=[{"check": "rules_judge", "snippet": "tone", "rule": 3}])
    provider_server.set_default(verdict((2, "we ship your order tomorrow")))
    draft = policy.export_policy()
    first = release.test_policy(draft=draft)
    second = release.test_policy(draft=draft)
    assert first.ok and second.ok, (first.as_dict(), second.as_dict())
    assert (first.judges["calls"], second.judges["calls"], second.judges["cache_hits"]) == (1, 0, 1)
    assert len(judge_requests(provider_server)) == 1
