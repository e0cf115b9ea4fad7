"""The governance log read by people (issue 11): rows name what they are about; the detail page says the facts
as a sentence in the reader's language beside the JSON, and has no History button."""
from django.urls import reverse

from governance.models import GovernanceEvent
from tests.governance.test_admin import superuser, superuser_client  # noqa: F401


def make_events():
    term = GovernanceEvent.objects.create(
        correlation_id="c1", decision="blocked", check_name="term_list", configuration="newsroom", mode="block",
        detail={"list": "Brand words", "terms": ["Kunde"], "missing": []})
    judged = GovernanceEvent.objects.create(
        correlation_id="c2", decision="not_checked", check_name="rules_judge", configuration="newsroom",
        mode="report", detail={"choice": "pass", "reason": "timeout",
                               "judges": [{"judge": "style-judge", "choice": "pass", "reason": "timeout"}]})
    return term, judged


def test_rows_name_the_list_or_the_judge(superuser_client):
    make_events()
    html = superuser_client.get(reverse("admin:governance_governanceevent_changelist")).content.decode()
    assert '<td class="field-subject">Brand words</td>' in html
    assert '<td class="field-subject">style-judge</td>' in html


def test_the_detail_page_says_the_facts_in_words_without_a_history_button(superuser_client):
    term, judged = make_events()
    html = superuser_client.get(reverse("admin:governance_governanceevent_change", args=[term.pk])).content.decode()
    assert ("Stopped by the term list check for configuration newsroom; term list “Brand words” found: Kunde."
            in html.replace("&ldquo;", "“").replace("&rdquo;", "”"))
    assert 'class="gavel-json"' in html
    assert "historylink" not in html
    judged_html = superuser_client.get(reverse("admin:governance_governanceevent_change", args=[judged.pk])).content
    assert ("judges: style-judge answered pass (the judge did not answer in time); reason: the judge did not answer "
            "in time.") in judged_html.decode()
