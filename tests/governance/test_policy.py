"""Policy as code (SPEC §11.2): round trip, idempotence, atomicity, every error with its path."""
import copy

import pytest
import yaml

from governance import policy
from governance.models import Configuration, PolicyVersion, Provider
from snippets.models import Snippet
from termlists.matcher import MSG_STAR_NOT_AT_END
from termlists.models import TermList

# A verbatim copy of the normative /work/shared/policy-example.yaml (the format's contract), plus the
# three provider limits of SPEC 2.1 on its first provider (which shows every key).
EXAMPLE_YAML = r"""
providers:
  - name: openai-eu
    kind: chat                    # chat | decision
    route: openai                 # litellm provider prefix
    api_base: https://eu.api.example.com/v1
    api_key_env: OPENAI_API_KEY   # the key itself never enters the database
    trust_zone: external_eu       # local | private_hosted | external_eu | external_global
    timeout: 30
    max_concurrency: 0            # provider limits (0 = no limit), added to the example by issue 19
    requests_per_minute: 0
    tokens_per_minute: 0
    price_per_mtok_in: 0.15
    price_per_mtok_out: 0.60
  - name: local-ollama
    kind: chat
    route: ollama
    api_base: http://127.0.0.1:11434
    trust_zone: local
    timeout: 20
  - name: jev
    kind: decision
    route: typesafe
    api_key_env: TYPESAFE_API_KEY
    trust_zone: external_global
    timeout: 10

configurations:
  - identifier: newsroom
    provider: openai-eu
    model: gpt-4o-mini
    system_prompt: You write short news items for a regional publisher.
    temperature: 0.7
    max_tokens: 800
    timeout: 60
    fallbacks: [newsroom-local]
    budget: {daily_requests: 5000, daily_tokens: 2000000, daily_cost: 25.0}
    context_tags: [house-style]
    read_tools: [search_archive]  # tools whose calls only read (admin-only, SPEC §8.2)
    escalation: null
    rules:
      mode: report                # off | report | block
      tags: [house-style, legal]
      judges: [style-judge]       # ordered chain
      default: block              # block | allow — when every judge passes
      min_confidence: 0.9
  - identifier: newsroom-local
    provider: local-ollama
    model: qwen2.5:7b
  - identifier: style-judge
    provider: local-ollama
    model: qwen2.5:7b
    timeout: 15

snippets:
  - identifier: legal_phrasing
    name: Legal phrasing
    tags: [legal]
    sort: 10
    data_class: editor_content
    is_active: true
    hidden: false
    body: |
      Address the reader formally.
      Never promise a delivery date.
  - identifier: house_style
    name: House style
    tags: [house-style]
    sort: 20
    body: |
      Headlines carry no exclamation mark.

term_lists:
  - name: Brand words
    configurations: [newsroom]
    forbidden: [Kunde, "Rabatt*", "best price"]
    required: [ACME]
    site: null
    language: de
    mode: block                   # block | report
    message: Ask the legal team before using these words.
    is_active: true

pattern_rules:
  - identifier: style.no-click-here
    statement: Link text never says "click here".
    tags: [house-style]
    severity: normal
    violation_pattern: '(?i)\bclick here\b'
    satisfied_pattern: null
    wrong_samples: ["For details, click here."]
    correct_samples: ["Read the full report on our site."]
    source: https://www.w3.org/QA/Tips/noClickHere
    is_active: true
  - identifier: legal.no-guarantee
    statement: Never call an outcome guaranteed.
    tags: [legal]
    severity: critical
    violation_pattern: '(?i)\bguarantee(d|s)?\b'
    satisfied_pattern: '(?i)\bno guarantee\b'
    wrong_samples: ["Success is guaranteed."]
    correct_samples: ["We give no guarantee of success.", "Results vary."]
    source: internal legal guideline 4.2
  - identifier: tone.formal-address
    statement: Address the reader formally.
    tags: [legal]
    severity: normal
    violation_pattern: null
    no_verdict_reason: Formality depends on context a pattern cannot see; the judge checks it.
    wrong_samples: []
    correct_samples: []
examples:                         # SPEC §12.1: texts with the outcome the team expects
  - name: discount-word-blocked
    configuration: newsroom
    also: []
    kind: completion
    site: null
    language: de
    format: text
    text: "Jetzt mit Rabattaktion für jeden Kunden der ACME."
    expect:
      outcome: blocked
      findings:
        - {check: term_list, list: Brand words, term: "Rabatt*"}
      absent: []
    note: A discount word in any form stops the text.
  - name: plain-news-allowed
    configuration: newsroom
    text: "ACME opens a new office in the harbour district on Monday."
    expect:
      outcome: allowed
      absent:
        - {check: pattern_rules, rule: legal.no-guarantee}
"""

ALL_LABELS = {
    "providers:openai-eu", "providers:local-ollama", "providers:jev",
    "configurations:newsroom", "configurations:newsroom-local", "configurations:style-judge",
    "snippets:legal_phrasing", "snippets:house_style", "term_lists:Brand words",
}


def example() -> dict:
    """The example without its pattern rules (tests/snippets/test_pattern_policy.py covers them) and its
    examples (tests/governance/test_policy_examples.py)."""
    document = yaml.safe_load(EXAMPLE_YAML)
    del document["pattern_rules"]
    del document["examples"]
    return document


def history_rows() -> int:
    return sum(m.history.count() for m in (Provider, Configuration, Snippet, TermList))


def errors_of(document, **kwargs) -> dict:
    with pytest.raises(policy.PolicyInvalid) as caught:
        policy.import_policy(document, **kwargs)
    return caught.value.errors


pytestmark = pytest.mark.django_db


# --- round trip and format -------------------------------------------------------------------


def test_example_imports_and_exports_its_values():
    report = policy.import_policy(example())
    assert set(report.created) == ALL_LABELS
    exported = policy.export_policy()
    newsroom = next(c for c in exported["configurations"] if c["identifier"] == "newsroom")
    assert newsroom["budget"] == {"daily_requests": 5000, "daily_tokens": 2000000, "daily_cost": 25.0}
    assert newsroom["rules"] == {"mode": "report", "tags": ["house-style", "legal"], "judges": ["style-judge"],
                                 "default": "block", "min_confidence": 0.9}
    assert newsroom["fallbacks"] == ["newsroom-local"]
    assert newsroom["escalation"] is None
    openai = next(p for p in exported["providers"] if p["name"] == "openai-eu")
    assert (openai["price_per_mtok_in"], openai["price_per_mtok_out"]) == (0.15, 0.6)
    jev = next(p for p in exported["providers"] if p["name"] == "jev")
    assert jev["api_base"] is None and jev["price_per_mtok_in"] is None
    (brand,) = exported["term_lists"]
    assert brand["forbidden"] == ["Kunde", "Rabatt*", "best price"]
    assert brand["configurations"] == ["newsroom"] and brand["site"] is None and brand["language"] == "de"
    legal = next(s for s in exported["snippets"] if s["identifier"] == "legal_phrasing")
    assert legal["body"] == "Address the reader formally.\nNever promise a delivery date.\n"
    assert exported["pattern_rules"] == []


def test_export_then_import_reproduces_the_same_policy():
    policy.import_policy(example())
    first = policy.export_policy()
    report = policy.import_policy(copy.deepcopy(first))
    assert not report.has_changes
    assert set(report.unchanged) == ALL_LABELS
    assert policy.export_policy() == first


def test_yaml_export_round_trips_and_writes_bodies_as_blocks():
    policy.import_policy(example())
    text = policy.export_yaml()
    assert "    body: |\n      Address the reader formally.\n      Never promise a delivery date.\n" in text
    assert "budget: {daily_requests: 5000, daily_tokens: 2000000, daily_cost: 25.0}" in text
    report = policy.import_policy(yaml.safe_load(text))
    assert not report.has_changes
    assert policy.export_yaml() == text


def test_export_has_every_key_in_the_example_order():
    policy.import_policy(example())
    exported = policy.export_policy()
    sample = yaml.safe_load(EXAMPLE_YAML)
    assert list(exported) == list(sample)
    # The first record of each section in the example shows every key of that section.
    for section in ("providers", "configurations", "snippets", "term_lists"):
        expected = list(sample[section][0])
        for record in exported[section]:
            assert list(record) == expected, section
    for record in exported["configurations"]:
        assert list(record["budget"]) == list(sample["configurations"][0]["budget"])
        assert list(record["rules"]) == list(sample["configurations"][0]["rules"])
    # Every other record of the example shows its keys in the same relative order.
    for section in ("providers", "configurations", "snippets", "term_lists", "pattern_rules", "examples"):
        order = list({"pattern_rules": policy.PATTERN_RULE_KEYS, "examples": policy.EXAMPLE_KEYS}.get(
            section, sample[section][0]))
        for record in sample[section]:
            positions = [order.index(key) for key in record]
            assert positions == sorted(positions), (section, record)


def test_missing_keys_take_the_defaults_of_spec_section_2():
    policy.import_policy({
        "providers": [{"name": "p", "route": "ollama"}],
        "configurations": [{"identifier": "c", "provider": "p", "model": "m"}],
        "snippets": [{"identifier": "s", "name": "S"}],
        "term_lists": [{"name": "L", "configurations": ["c"]}],
    })
    provider = Provider.objects.get(name="p")
    assert (provider.kind, provider.timeout, provider.trust_zone, provider.api_base) == ("chat", 30, "", "")
    config = Configuration.objects.get(identifier="c")
    assert (config.rule_mode, config.rule_default, config.min_confidence, config.timeout) == ("off", "block", 0.9, 0)
    assert config.budget_daily_requests == 0 and config.fallback_identifiers() == [] and config.escalation is None
    snippet = Snippet.objects.get(identifier="s")
    assert snippet.is_active and not snippet.hidden and snippet.body == "" and snippet.data_class == ""
    term_list = TermList.objects.get(name="L")
    assert term_list.mode == "block" and term_list.is_active and term_list.forbidden == ""


# --- idempotence, dry run, prune -------------------------------------------------------------


def test_second_import_changes_nothing():
    policy.import_policy(example())
    version, rows = PolicyVersion.current(), history_rows()
    report = policy.import_policy(example())
    assert report.created == report.changed == report.removed == []
    assert set(report.unchanged) == ALL_LABELS
    assert PolicyVersion.current() == version
    assert history_rows() == rows


def test_a_change_saves_only_the_changed_record():
    policy.import_policy(example())
    document = example()
    document["configurations"][0]["rules"]["mode"] = "block"
    document["term_lists"][0]["forbidden"].append("Schnäppchen")
    version, rows = PolicyVersion.current(), history_rows()
    report = policy.import_policy(document)
    assert report.changed == ["configurations:newsroom", "term_lists:Brand words"]
    assert report.changed_keys == {"configurations:newsroom": ["rules.mode"], "term_lists:Brand words": ["forbidden"]}
    assert Configuration.objects.get(identifier="newsroom").rule_mode == "block"
    assert history_rows() == rows + 2
    assert PolicyVersion.current() > version


def test_an_import_is_one_policy_edit_one_version_bump():
    version = PolicyVersion.current()
    report = policy.import_policy(example())
    assert len(report.created) > 3  # providers, configurations, snippets, term lists and their scopes
    assert PolicyVersion.current() == version + 1
    Provider.objects.create(name="after-import", route="openai")  # outside an import: one bump per save
    assert PolicyVersion.current() == version + 2


def test_dry_run_reports_and_writes_nothing():
    version = PolicyVersion.current()
    report = policy.import_policy(example(), dry_run=True)
    assert report.dry_run and set(report.created) == ALL_LABELS
    assert Provider.objects.count() == Configuration.objects.count() == Snippet.objects.count() == 0
    assert TermList.objects.count() == 0 and PolicyVersion.current() == version

    policy.import_policy(example())
    document = example()
    document["providers"][0]["timeout"] = 99
    del document["snippets"][1]
    rows = history_rows()
    report = policy.import_policy(document, prune=True, dry_run=True)
    assert report.changed == ["providers:openai-eu"] and report.removed == ["snippets:house_style"]
    assert Provider.objects.get(name="openai-eu").timeout == 30
    assert Snippet.objects.filter(identifier="house_style").exists()
    assert history_rows() == rows


def test_prune_removes_what_the_document_no_longer_names():
    policy.import_policy(example())
    document = example()
    # Drop the newsroom configuration, its term list and its provider: PROTECT must not trip.
    document["providers"] = [p for p in document["providers"] if p["name"] != "openai-eu"]
    document["configurations"] = [c for c in document["configurations"] if c["identifier"] != "newsroom"]
    document["term_lists"] = []
    document["snippets"] = document["snippets"][:1]

    report = policy.import_policy(document)  # without prune nothing is removed
    assert report.removed == [] and Provider.objects.filter(name="openai-eu").exists()

    report = policy.import_policy(document, prune=True)
    assert report.removed == ["term_lists:Brand words", "snippets:house_style", "configurations:newsroom",
                              "providers:openai-eu"]
    assert not Provider.objects.filter(name="openai-eu").exists()
    assert not Configuration.objects.filter(identifier="newsroom").exists()
    assert TermList.objects.count() == 0 and Snippet.objects.count() == 1


def test_prune_keeps_sections_the_document_leaves_out():
    policy.import_policy(example())
    report = policy.import_policy({"snippets": example()["snippets"][:1]}, prune=True)
    assert report.removed == ["snippets:house_style"]
    assert Provider.objects.count() == 3 and TermList.objects.count() == 1


def test_prune_refuses_to_remove_a_provider_a_kept_configuration_uses():
    policy.import_policy(example())
    document = {"providers": [p for p in example()["providers"] if p["name"] != "openai-eu"]}
    errors = errors_of(document, prune=True)
    assert "configuration newsroom" in errors["providers"][0]
    assert Provider.objects.filter(name="openai-eu").exists()


# --- errors: all at once, with paths, nothing written ----------------------------------------


def test_errors_are_collected_with_their_paths_and_nothing_is_written():
    document = example()
    document["providers"][0]["colour"] = "blue"
    document["configurations"][1]["rules"] = {"mode": "sometimes"}
    document["term_lists"][0]["forbidden"] = ["Kunde", "Rab*att", "   ", 7]
    document["snippets"].append({"identifier": "brand-new", "name": "A valid new record"})
    version = PolicyVersion.current()

    errors = errors_of(document)

    assert errors["providers[0].colour"] == [str(policy.MSG_UNKNOWN_KEY)]
    assert errors["configurations[1].rules.mode"] == ["Choose one of: off, report, block."]
    assert errors["term_lists[0].forbidden[1]"] == [MSG_STAR_NOT_AT_END]
    assert "term_lists[0].forbidden[2]" in errors
    assert errors["term_lists[0].forbidden[3]"] == [str(policy.MSG_NOT_STRING)]
    assert len(errors) == 5
    assert Snippet.objects.count() == Provider.objects.count() == 0
    assert PolicyVersion.current() == version


def test_type_choice_and_field_errors():
    document = {
        "providers": [
            {"name": "Not a slug!", "route": "openai", "api_base": "not a url", "api_key_env": "sk-abc123",
             "timeout": 0, "price_per_mtok_in": "cheap", "trust_zone": "moon", "kind": True},
            {"route": "openai"},
            "a string",
        ],
        "configurations": [
            {"identifier": "c", "provider": "nowhere", "model": "m", "temperature": 3, "fallbacks": ["c", "d", "d"],
             "budget": {"daily_requests": -1, "daily_cost": 0.123456789, "monthly": 1},
             "rules": {"judges": "style-judge", "min_confidence": 1.5, "default": "maybe"},
             "escalation": "c", "max_tokens": 1.5},
        ],
        "snippets": [{"identifier": "s", "name": "", "tags": "legal", "is_active": "yes", "sort": "1"}],
        "term_lists": [{"name": "L", "configurations": [], "site": "two words", "language": "deutsch!"}],
    }
    errors = errors_of(document)
    expected = {
        "providers[0].name", "providers[0].api_base", "providers[0].api_key_env", "providers[0].timeout",
        "providers[0].price_per_mtok_in", "providers[0].trust_zone", "providers[0].kind",
        "providers[1].name", "providers[2]",
        "configurations[0].provider", "configurations[0].temperature", "configurations[0].fallbacks[0]",
        "configurations[0].fallbacks[1]", "configurations[0].fallbacks[2]",
        "configurations[0].budget.daily_requests", "configurations[0].budget.daily_cost",
        "configurations[0].budget.monthly", "configurations[0].rules.judges",
        "configurations[0].rules.min_confidence", "configurations[0].rules.default",
        "configurations[0].escalation", "configurations[0].max_tokens",
        "snippets[0].name", "snippets[0].tags", "snippets[0].is_active", "snippets[0].sort",
        "term_lists[0].configurations", "term_lists[0].site", "term_lists[0].language",
    }
    assert set(errors) == expected, set(errors) ^ expected
    assert errors["providers[1].name"] == [str(policy.MSG_REQUIRED)]
    assert errors["configurations[0].provider"] == ["Unknown provider: nowhere."]
    assert errors["configurations[0].fallbacks[0]"] == [str(policy.MSG_SELF_REFERENCE)]
    assert errors["configurations[0].fallbacks[2]"] == [str(policy.MSG_LISTED_TWICE)]
    assert errors["term_lists[0].configurations"] == [str(policy.MSG_NO_CONFIGURATION)]


def test_document_and_section_shapes():
    assert errors_of(["providers"]) == {"document": [policy.MSG_DOCUMENT % {"sections": ", ".join(policy.SECTIONS)}]}
    errors = errors_of({"providers": {"name": "p"}, "rules": []})
    assert errors == {"providers": [str(policy.MSG_NOT_LIST)], "rules": [str(policy.MSG_UNKNOWN_KEY)]}


def test_duplicate_names_in_one_document():
    document = example()
    document["providers"].append(dict(document["providers"][0]))
    document["term_lists"].append(dict(document["term_lists"][0]))
    errors = errors_of(document)
    assert errors == {
        "providers[3].name": ["Named twice in this document (first at providers[0].name)."],
        "term_lists[1].name": ["Named twice in this document (first at term_lists[0].name)."],
    }


def test_pattern_rules_section_imports_with_the_rest():
    report = policy.import_policy(yaml.safe_load(EXAMPLE_YAML))
    assert set(report.created) == ALL_LABELS | {
        "pattern_rules:style.no-click-here", "pattern_rules:legal.no-guarantee", "pattern_rules:tone.formal-address",
        "examples:discount-word-blocked", "examples:plain-news-allowed"}
    document = example()
    document["pattern_rules"] = []
    assert policy.import_policy(document).has_changes is False


# --- references ------------------------------------------------------------------------------


def test_references_may_point_forward_within_the_document():
    document = {
        "term_lists": [{"name": "Early list", "configurations": ["writer"], "forbidden": ["Kunde"]}],
        "configurations": [
            {"identifier": "writer", "provider": "later", "model": "m", "escalation": "careful-writer",
             "fallbacks": ["careful-writer"], "rules": {"mode": "block", "judges": ["judge"]}},
            {"identifier": "careful-writer", "provider": "later", "model": "m2", "escalation": "writer"},
            {"identifier": "judge", "provider": "later", "model": "j"},
        ],
        "providers": [{"name": "later", "route": "ollama"}],
    }
    report = policy.import_policy(document)
    assert len(report.created) == 5
    writer = Configuration.objects.get(identifier="writer")
    assert writer.escalation.identifier == "careful-writer"
    assert Configuration.objects.get(identifier="careful-writer").escalation == writer
    assert writer.provider.name == "later" and writer.judge_identifiers() == ["judge"]
    assert list(TermList.objects.get().configurations.values_list("identifier", flat=True)) == ["writer"]
    # The two-pass escalation is still idempotent.
    assert not policy.import_policy(document).has_changes


def test_references_may_point_at_stored_records_unless_pruned():
    policy.import_policy(example())
    document = {"configurations": [{"identifier": "extra", "provider": "local-ollama", "model": "m",
                                    "escalation": "newsroom"}]}
    assert policy.import_policy(document).created == ["configurations:extra"]
    assert Configuration.objects.get(identifier="extra").escalation.identifier == "newsroom"
    # With prune the stored newsroom would be removed, so the reference is an error.
    errors = errors_of(document, prune=True)
    assert errors["configurations[0].escalation"] == ["Unknown configuration: newsroom."]


def test_import_can_clear_an_escalation_and_a_scope():
    policy.import_policy(example())
    document = example()
    document["configurations"][0]["escalation"] = "style-judge"
    policy.import_policy(document)
    assert Configuration.objects.get(identifier="newsroom").escalation.identifier == "style-judge"
    document["configurations"][0]["escalation"] = None
    document["term_lists"][0]["configurations"] = ["newsroom-local", "style-judge"]
    report = policy.import_policy(document)
    assert report.changed_keys == {
        "configurations:newsroom": ["escalation"], "term_lists:Brand words": ["configurations"],
    }
    assert Configuration.objects.get(identifier="newsroom").escalation is None
    scope = set(TermList.objects.get().configurations.values_list("identifier", flat=True))
    assert scope == {"newsroom-local", "style-judge"}


def test_terms_are_stored_normalised_and_compared_as_stored():
    document = example()
    document["term_lists"][0]["forbidden"] = ["  Kunde ", "kunde", "Rabatt*"]
    policy.import_policy(document)
    assert TermList.objects.get().forbidden == "Kunde\nRabatt*"
    assert not policy.import_policy(document).has_changes


def test_a_wrong_item_does_not_shift_the_paths_of_the_others():
    document = example()
    document["term_lists"][0]["configurations"] = [5, "newsroom", "ghost"]
    errors = errors_of(document)
    assert errors == {
        "term_lists[0].configurations[0]": [str(policy.MSG_NOT_STRING)],
        "term_lists[0].configurations[2]": ["Unknown configuration: ghost."],
    }


def test_an_import_through_the_api_keeps_history_without_a_user(make_consumer):
    """PUT /api/v1/policy runs with a consumer as request.user, which is no User for simple-history."""
    from rest_framework.test import APIClient

    _consumer, token = make_consumer("ops", is_admin=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.put("/api/v1/policy", yaml.safe_dump(example()), content_type="application/yaml")
    assert response.status_code == 200, response.content
    assert set(response.json()["created"]) == ALL_LABELS
    row = Provider.history.first()
    assert row.history_change_reason == "policy import" and row.history_user is None


def test_provider_limits_import_export_and_errors_name_their_path():
    """max_concurrency, requests_per_minute, tokens_per_minute (0 = no limit) in the providers section."""
    document = example()
    document["providers"][0].update({"max_concurrency": 5, "requests_per_minute": 60, "tokens_per_minute": 90000})
    policy.import_policy(document)
    provider = Provider.objects.get(name="openai-eu")
    assert (provider.max_concurrency, provider.requests_per_minute, provider.tokens_per_minute) == (5, 60, 90000)
    exported = {p["name"]: p for p in policy.export_policy()["providers"]}
    assert (exported["openai-eu"]["max_concurrency"], exported["openai-eu"]["requests_per_minute"],
            exported["openai-eu"]["tokens_per_minute"]) == (5, 60, 90000)
    assert (exported["jev"]["max_concurrency"], exported["jev"]["requests_per_minute"],
            exported["jev"]["tokens_per_minute"]) == (0, 0, 0)
    bad = example()
    bad["providers"][1].update({"max_concurrency": -1, "requests_per_minute": "many", "tokens_per_minute": 1.5})
    errors = errors_of(bad)
    assert {"providers[1].max_concurrency", "providers[1].requests_per_minute",
            "providers[1].tokens_per_minute"} <= set(errors)


def test_a_number_past_what_its_column_holds_is_an_error_at_its_path_not_a_failed_write():
    """The schema fuzz found a tokens_per_minute of 3.4e16 answered 500 on PostgreSQL (integer overflow)."""
    bad = example()
    bad["providers"][0]["tokens_per_minute"] = 34_507_604_566_626_936
    bad["snippets"][0]["sort"] = -(2**40)
    bad["configurations"][0]["budget"]["daily_tokens"] = 2**40  # a big-integer column takes it
    errors = errors_of(bad)
    assert "providers[0].tokens_per_minute" in errors and "snippets[0].sort" in errors
    assert not any(path.endswith("budget.daily_tokens") for path in errors)
    assert Provider.objects.count() == 0  # nothing written
