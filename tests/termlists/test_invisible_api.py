"""The probe of issue 41 on the REST API: a forbidden term with an invisible character inside is blocked,
and a key with one inside is masked (termlists/invisible.py; the protocols: tests/protocols/test_conformance.py)."""
import pytest

from termlists.models import TermList
from tests.termlists.test_invisible import KEY, PROBED

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("char", PROBED, ids=PROBED.values())
def test_a_screening_blocks_a_term_with_an_invisible_character_inside(api, configuration, char):
    TermList.objects.create(name="Brand words", forbidden="Kunde").configurations.set([configuration])
    body = api.post("/api/v1/screenings", {"configuration": configuration.identifier,
                                           "text": f"Dear Ku{char}nde, the key is {KEY[:10]}{char}{KEY[10:]}."},
                    format="json").json()
    assert body["outcome"] == "blocked" and body["block"]["check"] == "term_list", body
    assert "Kunde" in body["block"]["message"] and KEY[10:] not in str(body)
