"""Shared set-up of the draft tests: a small policy live, people who write and approve drafts."""
import copy

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from governance import policy
from tests.governance.test_policy_examples import small_policy


def live_policy(provider) -> dict:
    document = small_policy(provider)
    policy.import_policy(document)
    return document


def person(name: str, *, superuser: bool = False, publisher: bool = False):
    user = get_user_model().objects.create_user(name, password="pw-" + name, is_staff=True,
                                                is_superuser=superuser)
    if publisher:
        user.user_permissions.add(Permission.objects.get(codename="publish_policy"))
        user = get_user_model().objects.get(pk=user.pk)  # permissions are cached per instance
    return user


def term_list(document: dict, **changes) -> dict:
    record = copy.deepcopy(policy.export_policy()["term_lists"][0])
    record.update(changes)
    return record
