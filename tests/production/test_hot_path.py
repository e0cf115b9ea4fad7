"""The hot path of issue 10: a warm screening (caches filled by the call before) runs at most 2 queries.

What is keyed by the policy version (the configurations, the term lists in scope and their
compiled matchers) is read once per version and process; per request the token's statement reads the
consumer, the policy version and the consumer's grants (issue 30), and the evidence record is written.
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


def test_a_warm_screening_runs_at_most_two_queries(api, listed, django_assert_max_num_queries):
    screen(api)  # fills the caches
    with CaptureQueriesContext(connection) as warm:
        assert screen(api)["outcome"] == "allowed"
    with django_assert_max_num_queries(2):
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


def test_a_configuration_not_granted_is_refused_and_an_unknown_one_is_unknown(api, listed, configuration):
    """Names outside the token's grants are read afresh, so each keeps its own error."""
    from governance.models import Configuration

    Configuration.objects.create(identifier="elsewhere", provider=configuration.provider, model="m")
    response = api.post("/api/v1/screenings", {"configuration": "elsewhere", "text": TEXT}, format="json")
    assert (response.status_code, response.json()["error"]["code"]) == (403, "not_granted")
    response = api.post("/api/v1/screenings", {"configuration": "nowhere", "text": TEXT}, format="json")
    assert (response.status_code, response.json()["error"]["code"]) == (404, "unknown_configuration")
    response = api.post("/api/v1/screenings", {"configuration": "newsroom", "also": ["elsewhere"], "text": TEXT},
                        format="json")
    assert (response.status_code, response.json()["error"]["code"]) == (403, "not_granted")


def test_the_token_statement_carries_the_version_and_the_grants(api, listed, configuration):
    from governance.api.auth import consumer_by_token_hash
    from governance.models import Consumer, PolicyVersion

    token = api._credentials["HTTP_AUTHORIZATION"].split()[1]
    consumer = consumer_by_token_hash(Consumer.hash_token(token))
    assert consumer.pk == api.consumer.pk
    assert consumer.grants_snapshot == (PolicyVersion.current(), {"newsroom": configuration.pk})
    api.consumer.configurations.clear()
    assert consumer_by_token_hash(Consumer.hash_token(token)).grants_snapshot == (PolicyVersion.current(), {})


def test_inside_a_transaction_the_grants_are_read_again(api, listed, configuration):
    """A transaction may have changed the policy since the token was read (a draft is tried in one):
    there the consumer's grants and the version are read afresh, outside it the token's are used."""
    from django.db import transaction

    from governance.api.auth import consumer_by_token_hash
    from governance.errors import NotGranted
    from governance.models import Consumer
    from governance.screening.service import resolve_configurations

    token = api._credentials["HTTP_AUTHORIZATION"].split()[1]
    consumer = consumer_by_token_hash(Consumer.hash_token(token))
    api.consumer.configurations.clear()  # after the token's statement
    assert resolve_configurations("newsroom", [], consumer)[0].identifier == "newsroom"  # the request's view
    with transaction.atomic(), pytest.raises(NotGranted):
        resolve_configurations("newsroom", [], consumer)
