"""Budget caps are claimed atomically, and usage lands on the day its request was counted."""
import datetime
import threading

import pytest
from django.db import connection, connections
from django.utils import timezone

from governance.runs.calls import _count_usage, claim_request
from governance.models import UsageDay


@pytest.mark.django_db
def test_a_claim_is_refused_once_the_request_cap_is_reached(configuration):
    configuration.budget_daily_requests = 2
    configuration.save()
    assert claim_request(configuration) == timezone.localdate()
    assert claim_request(configuration) == timezone.localdate()
    assert claim_request(configuration) is None
    assert UsageDay.objects.get(configuration=configuration).requests == 2


@pytest.mark.django_db
def test_a_claim_is_refused_once_the_token_cap_is_reached(configuration):
    configuration.budget_daily_tokens = 100
    configuration.save()
    day = claim_request(configuration)
    _count_usage(configuration, day, 100, 0.0)
    assert claim_request(configuration) is None


@pytest.mark.django_db
def test_usage_is_added_to_the_day_the_request_was_counted_on(configuration):
    yesterday = timezone.localdate() - datetime.timedelta(days=1)
    UsageDay.objects.create(configuration=configuration, day=yesterday, requests=1)
    # The call started yesterday and its answer arrived after midnight.
    _count_usage(configuration, yesterday, 42, 0.5)
    row = UsageDay.objects.get(configuration=configuration, day=yesterday)
    assert (row.tokens, float(row.cost)) == (42, 0.5)


@pytest.mark.django_db(transaction=True)
def test_parallel_claims_never_exceed_the_request_cap(configuration):
    if connection.vendor != "postgresql":
        pytest.skip("parallel writers need PostgreSQL (SQLite serialises them with a file lock)")
    configuration.budget_daily_requests = 5
    configuration.save()
    barrier = threading.Barrier(12)
    granted = []

    def claim():
        try:
            barrier.wait(timeout=10)
            if claim_request(configuration) is not None:
                granted.append(1)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=claim) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(granted) == 5
    assert UsageDay.objects.get(configuration=configuration).requests == 5


@pytest.mark.django_db
def test_a_claim_that_misses_a_row_another_process_just_made_still_counts(configuration, monkeypatch):
    """The first UPDATE finds no row; before the check, another process makes today's row. That is
    not a reached cap (there is none): the claim counts on the other process's row."""
    from governance.runs import calls as call_service

    real = call_service._update_usage
    calls = []

    def first_misses(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            UsageDay.objects.create(configuration=configuration, day=timezone.localdate())  # "the other process"
            return 0
        return real(*args, **kwargs)

    monkeypatch.setattr(call_service, "_update_usage", first_misses)
    assert claim_request(configuration) == timezone.localdate()
    assert UsageDay.objects.get(configuration=configuration).requests == 1
