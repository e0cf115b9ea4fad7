"""Issue 25, callers and administrators (findings 6-10) and the contract (finding 16): what a caller or a
draft may not do, each test failing on the code before the fix."""
import pytest

from governance.models import Configuration
from governance.policy import configurations as configuration_section
from governance.policy.importing import import_policy
from governance.policy.messages import PolicyInvalid
from termlists.models import TermList

SAVE = {"name": "save_page", "arguments": {"body": "Der Kunde"}}


@pytest.fixture
def brand(db, configuration):
    term_list = TermList.objects.create(name="Brand", forbidden="Kunde", mode="block")
    term_list.configurations.set([configuration])
    return term_list


def screen(api, **body):
    body = {"text": "Saving.", "configuration": "newsroom", "offers_tools": True, **body}
    response = api.post("/api/v1/screenings", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def declare(configuration, *names):
    configuration.read_tools = list(names)
    configuration.save()


# --- finding 6: reads are declared by the configuration, never by the caller ---
def test_a_caller_naming_a_writing_tool_a_read_gets_it_screened_and_checks_say_so(api, brand):
    body = screen(api, tool_calls=[SAVE], read_tools=["save_page"])
    assert body["outcome"] == "blocked"
    assert body["block"]["check"] == "term_list"
    assert {"check": "read_tools", "result": "screened", "reason": "not_declared", "tools": ["save_page"]} \
        in body["checks"]


def test_a_read_the_configuration_declares_is_exempt_without_the_caller_naming_it(api, brand, configuration):
    declare(configuration, "search")
    body = screen(api, tool_calls=[{"name": "search", "arguments": {"q": "Kunde"}}])
    assert body["outcome"] == "allowed"
    assert not [c for c in body["checks"] if c["check"] == "read_tools"]


def test_the_caller_narrows_the_declared_reads_never_widens_them(api, brand, configuration):
    declare(configuration, "search")
    calls = [{"name": "search", "arguments": {"q": "Kunde"}}]
    # Naming another tool narrows the declared list to nothing declared: search is screened too.
    body = screen(api, tool_calls=calls, read_tools=["lookup"])
    assert body["outcome"] == "blocked"
    assert [c["tools"] for c in body["checks"] if c["check"] == "read_tools"] == [["lookup"]]


def test_every_configuration_of_the_call_must_declare_the_read(api, brand, configuration, provider, make_consumer):
    from rest_framework.test import APIClient

    declare(configuration, "search")
    other = Configuration.objects.create(identifier="desk", provider=provider, model="m")
    _consumer, token = make_consumer("both", [configuration, other])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = screen(client, tool_calls=[{"name": "search", "arguments": {"q": "Kunde"}}], also=["desk"])
    assert body["outcome"] == "blocked"


def test_read_tools_round_trip_through_the_policy_file(configuration):
    declare(configuration, "search_archive", "read_page")
    (exported,) = configuration_section.export()
    assert exported["read_tools"] == ["search_archive", "read_page"]
    exported["read_tools"] = ["lookup", " lookup "]
    import_policy({"configurations": [exported]})
    configuration.refresh_from_db()
    assert configuration.read_tools == ["lookup"]


def test_read_tools_must_be_a_list_of_names_in_the_policy_file(configuration):
    (exported,) = configuration_section.export()
    exported["read_tools"] = "search"
    with pytest.raises(PolicyInvalid) as refused:
        import_policy({"configurations": [exported]}, dry_run=True)
    assert any(path.endswith("read_tools") for path in refused.value.errors), refused.value.errors


def test_a_consumer_that_is_no_administrator_cannot_declare_reads_over_the_api(api, configuration):
    (exported,) = configuration_section.export()
    exported["read_tools"] = ["save_page"]
    response = api.put("/api/v1/policy", {"configurations": [exported]}, format="json")
    assert response.status_code == 403
    configuration.refresh_from_db()
    assert configuration.read_tools == []


# --- finding 16: a block by a term with a suggestion carries `suggestion`, as the hint does ---
def test_a_block_by_a_term_with_a_suggestion_carries_it_as_a_member(api, configuration):
    term_list = TermList.objects.create(name="Anrede", forbidden="Kunde => Kundin oder Kunde", mode="block")
    term_list.configurations.set([configuration])
    body = screen(api, text="Der Kunde zahlt.", offers_tools=False)
    assert body["outcome"] == "blocked"
    assert body["block"]["suggestion"] == {"Kunde": "Kundin oder Kunde"}
    report = TermList.objects.get(pk=term_list.pk)
    report.mode = "report"
    report.save()
    hinted = screen(api, text="Der Kunde zahlt.", offers_tools=False)
    assert hinted["hints"][0]["suggestion"] == body["block"]["suggestion"]


def test_a_block_without_a_suggestion_has_no_suggestion_member(api, brand):
    body = screen(api, text="Der Kunde zahlt.", offers_tools=False)
    assert body["outcome"] == "blocked" and "suggestion" not in body["block"]
