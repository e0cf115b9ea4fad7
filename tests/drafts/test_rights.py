"""Issue 41: approvers publish only what the admin lets them write (SPEC §12.5, amended).

Repro: a non-administrator approver (a user with *publish policy*) published an API draft moving a judge
configuration to another provider, and a restore draft that removed 2 providers, 6 configurations and
every consumer's grant to them. A change to an admin-only field (§2.3, and the changes docs/permissions.md
names an administrator's) or a removal of records is published only by an administrator.
"""
import copy

import pytest
from django.utils import timezone

from governance import policy
from governance.models import Configuration, Consumer, Provider
from governance.policy import proposals, release
from tests.drafts.helpers import person

pytestmark = pytest.mark.django_db


def judged_policy(provider) -> dict:
    """newsroom asks the judge `checker`; a second provider `elsewhere` exists."""
    from tests.governance.test_policy_examples import small_policy

    document = small_policy(provider)
    policy.import_policy(document)
    exported_provider = copy.deepcopy(policy.export_policy()["providers"][0])
    document["providers"] = [exported_provider, dict(exported_provider, name="elsewhere")]
    document["configurations"].append({"identifier": "checker", "provider": provider.name, "model": "judge-model"})
    document["configurations"][0]["rules"] = {"mode": "report", "tags": ["legal"], "judges": ["checker"]}
    document["configurations"].append({"identifier": "spare", "provider": "elsewhere", "model": "m"})
    document["term_lists"].append({"name": "Extra words", "configurations": ["spare"], "forbidden": ["Gratis"]})
    release.apply_release(document, actor="user:root")
    return policy.export_policy()


def test_moving_a_judge_to_another_provider_is_an_administrators_to_publish(provider):
    live = judged_policy(provider)
    checker = copy.deepcopy(next(c for c in live["configurations"] if c["identifier"] == "checker"))
    checker["provider"] = "elsewhere"
    draft = proposals.open_draft_for(person("anna"))
    proposals.record_change(draft, "configurations", "checker", checker)
    with pytest.raises(proposals.AdminOnlyChanges) as refused:
        proposals.publish(draft, person("ben", publisher=True))
    assert "configurations:checker provider" in str(refused.value)
    assert Configuration.objects.get(identifier="checker").provider.name == provider.name
    proposals.publish(draft, person("root", superuser=True))
    assert Configuration.objects.get(identifier="checker").provider.name == "elsewhere"


def test_a_draft_that_removes_records_is_an_administrators_to_publish(provider, make_consumer):
    judged_policy(provider)
    consumer, _token = make_consumer("shop")
    consumer.configurations.add(Configuration.objects.get(identifier="spare"))
    draft = proposals.open_draft_for(person("anna"))
    proposals.record_change(draft, "configurations", "spare", None)
    proposals.record_change(draft, "term_lists", "Extra words", None)
    with pytest.raises(proposals.AdminOnlyChanges) as refused:
        proposals.publish(draft, person("ben", publisher=True))
    assert "configurations:spare removed" in str(refused.value)
    with pytest.raises(proposals.AdminOnlyChanges):
        proposals.schedule_publish(draft, person("carl", publisher=True), timezone.now())
    assert Configuration.objects.filter(identifier="spare").exists()
    assert Consumer.objects.get(name="shop").configurations.filter(identifier="spare").exists()


def test_removing_a_provider_and_what_uses_it_is_refused_to_a_publisher_naming_each(provider):
    judged_policy(provider)
    publisher = person("ben", publisher=True)
    draft = proposals.open_draft_for(person("anna"))
    proposals.record_change(draft, "providers", "elsewhere", None)
    proposals.record_change(draft, "configurations", "spare", None)
    proposals.record_change(draft, "term_lists", "Extra words", None)
    with pytest.raises(proposals.AdminOnlyChanges) as refused:
        proposals.publish(draft, publisher)
    assert refused.value.fields["changes"] == [
        "providers:elsewhere removed", "configurations:spare removed", "term_lists:Extra words removed"]
    assert Provider.objects.filter(name="elsewhere").exists()
