"""The hot path of issue 10: a warm screening (caches filled by the call before) runs at most 3 queries.

What is keyed by the policy version (the configurations, the term lists in scope and their
compiled matchers) is read once per version and process; per request only the token, the
configurations with their grants and the policy version (one query), and what changes per call
are read.
"""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from termlists.models import TermList

pytestmark = pytest.mark.django_db

TERMS = "\n".join(f"term{i}" for i in range(1000))
TEXT = ("The harbour woke early and the gulls followed the boats out past the breakwater. " * 25)[:2000]


@pytest.fixture
def listed(configuration):
    term_list = TermList.objects.create(name="Brand", forbidden=TERMS + "\nKunde", required="")
    term_list.configurations.set([configuration])
    return term_list


def screen(api, text=TEXT):
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": text}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_warm_screening_runs_at_most_three_queries(api, listed, django_assert_max_num_queries):
    screen(api)  # fills the caches
    with CaptureQueriesContext(connection) as warm:
        assert screen(api)["outcome"] == "allowed"
    with django_assert_max_num_queries(3):
        screen(api)
    print("\nwarm screening queries:", len(warm), *[q["sql"][:120] for q in warm.captured_queries], sep="\n  ")


def test_a_policy_edit_is_seen_by_the_next_screening(api, listed):
    screen(api)
    listed.forbidden = TERMS + "\nharbour"
    listed.save()  # bumps the policy version
    assert screen(api)["outcome"] == "blocked"


def test_a_grant_withdrawn_is_seen_by_the_next_screening(api, listed, configuration):
    screen(api)
    api.consumer.configurations.remove(configuration)
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "text": TEXT}, format="json")
    assert response.status_code == 403
