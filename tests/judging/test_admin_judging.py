"""What the admin shows about judges and rules (SPEC §6.1, §7), as a superuser sees the pages."""
import pytest
from django.urls import reverse

from governance.models import Configuration, Provider, set_links
from snippets.models import Snippet
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401  (fixtures)
from tests.judging.conftest import set_rules

pytestmark = pytest.mark.django_db


def test_the_configuration_page_warns_about_a_judge_that_can_never_run(superuser_client, configuration,
                                                                       snippets, provider_server):
    far = Provider.objects.create(name="far-away", route="openai", api_base=provider_server.base_url,
                                  trust_zone="external_global", timeout=5)
    Configuration.objects.create(identifier="judge-far", provider=far, model="judge-model")
    set_rules(configuration, "report", judges=["judge-far"])  # newsroom writes in `local`

    response = superuser_client.get(reverse("admin:governance_configuration_change", args=[configuration.pk]))

    assert response.status_code == 200
    assert ("Judge judge-far can never judge texts of newsroom: its zone (external_global, counting its "
            "fallbacks) is less trusted than local, where newsroom writes.") in response.content.decode()


def test_the_snippet_page_shows_the_numbering_of_each_configuration(superuser_client, configuration,
                                                                    judge, snippets, provider):
    tone, _legal = snippets
    set_rules(configuration, "report", judges=["judge"])  # style: tone (rules 1-2), legal (rule 3)
    # `shop` reads an intro snippet first, so it numbers tone's lines from 2.
    Snippet.objects.create(identifier="intro", name="Intro", tags=["intro"], sort=0, body="Greet the reader.")
    shop = Configuration.objects.create(identifier="shop", provider=provider, model="test-model", rule_mode="block",
                                        rule_tags=["intro", "style"])
    set_links(shop, "rule_judges", ["judge"])
    url = reverse("admin:snippets_snippet_change", args=[tone.pk])

    page = superuser_client.get(url).content.decode()
    assert "<li><strong>newsroom</strong>: rule 1 = line 1, rule 2 = line 3</li>" in page
    assert "<li><strong>shop</strong>: rule 2 = line 1, rule 3 = line 3</li>" in page

    german = superuser_client.get(url, HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "<li><strong>newsroom</strong>: Regel 1 = Zeile 1, Regel 2 = Zeile 3</li>" in german
