"""Refusals that explain themselves (issue 11, Must show 3): each names fields by their label, says what to do,
and a 403 inside the admin is a page in the admin's layout with a way back."""
import re
from html import unescape

import pytest
from django.template.defaultfilters import filesizeformat
from django.urls import reverse

from governance.models import Configuration, Provider
from tests.governance.test_admin import (  # noqa: F401  (fixtures)
    change_url, configuration_form, desk, editor_client, gateway, judges, policy_editor, superuser, superuser_client,
)
from tests.governance.test_admin_only import as_the_page_sends_it, forged_configuration_post
from tests.governance.drafted import draft_record


def admin_layout(html: str) -> bool:
    """The page is drawn by the admin's base template: its header, site name and breadcrumbs."""
    return all(marker in html for marker in ('id="header"', 'id="site-name"', "Gavel administration",
                                             'class="breadcrumbs"'))


def test_a_forged_admin_only_field_is_a_403_in_the_admin_layout_naming_the_label(editor_client, desk, judges):
    response = editor_client.post(change_url(desk), {
        **as_the_page_sends_it(Configuration, configuration_form(desk, model="new-model")),
        "rule_mode": forged_configuration_post(judges[0].pk)["rule_mode"],
    }, HTTP_REFERER=f"http://testserver{change_url(desk)}")
    assert response.status_code == 403
    html = response.content.decode()
    assert admin_layout(html)
    assert "Only an administrator may change: Rule mode. Ask an administrator to make this change" in html
    assert "rule_mode" not in html.split('id="content"')[1]  # the label, never the field name
    assert f'href="http://testserver{change_url(desk)}"' in html  # back to the page they came from
    assert "Nothing was saved." in html


def test_a_page_without_the_permission_is_a_403_in_the_admin_layout(editor_client, db):
    response = editor_client.get(reverse("admin:governance_provider_add"))
    assert response.status_code == 403
    html = response.content.decode()
    assert admin_layout(html)
    assert "Your account lacks the permission this page needs" in html
    assert "ask an administrator" in html
    assert f'href="{reverse("admin:index")}"' in html


def test_a_refused_read_only_field_is_named_by_its_label_with_what_to_do(editor_client, gateway):
    # A stored decision configuration that carries a chat-only admin-only setting (made in the shell).
    decisions = Provider.objects.create(name="jev", kind="decision", route="typesafe")
    decider = Configuration.objects.create(identifier="decider", provider=decisions, model="jev-1")
    Configuration.objects.filter(pk=decider.pk).update(context_tags=["house-style"])
    decider.refresh_from_db()
    response = editor_client.post(change_url(decider), as_the_page_sends_it(
        Configuration, configuration_form(decider, model="jev-2")))
    assert response.status_code == 200
    (message,) = response.context["adminform"].form.non_field_errors()
    assert message.startswith("Context tags: A decision configuration only judges")
    assert message.endswith("Only an administrator can change this field: ask one to fix it.")
    assert not message.startswith("context_tags")


def test_a_revert_with_admin_only_differences_keeps_them_and_restores_the_rest(editor_client, policy_editor, superuser,
                                                                               desk):
    first = desk.history.earliest()
    desk.model, desk.rule_mode = "second-model", "block"
    desk._history_user = superuser
    desk.save()
    url = reverse("admin:governance_configuration_simple_history", args=[desk.pk, first.history_id])

    page = editor_client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert ("This version differs in fields only an administrator can restore: Rule mode. Those keep their current "
            "values (shown here)") in html
    assert admin_layout(html)

    response = editor_client.post(url, as_the_page_sends_it(Configuration, configuration_form(
        Configuration(**{**{f.attname: getattr(first, f.attname) for f in Configuration._meta.concrete_fields}}),
    )), follow=True)
    assert response.status_code == 200
    # Restored into the editor's draft (issue 27); the admin-only field kept as stored.
    record = draft_record(policy_editor, "configurations", "desk")
    assert (record["model"], record["rules"]["mode"]) == ("writer-model", "block")  # restored; kept
    desk.refresh_from_db()
    assert (desk.model, desk.rule_mode) == ("second-model", "block")  # live until the draft is published
    assert ("Restored every field you may change; kept as they are (only an administrator can restore them): "
            "Rule mode.") in response.content.decode()


@pytest.mark.parametrize("field", ["forbidden", "required"])
def test_an_oversized_term_list_is_a_field_error_stating_the_limit(superuser_client, desk, settings, field):
    from termlists.models import TermList

    settings.GAVEL_TERM_LIST_MAX_BYTES = 2000
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde")
    term_list.configurations.set([desk])
    huge = "\n".join(f"term{i}" for i in range(400))  # about 3.5 kB
    data = {"name": "Brand words", "forbidden": "Kunde", "required": "", "configurations": [desk.pk], "site": "",
            "language": "", "message": "", "mode": "block", "is_active": "on", "_save": "Save", field: huge}
    response = superuser_client.post(change_url(term_list), data)
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors[field]
    size = filesizeformat(len(huge.encode()))
    assert errors == [f"This list is {size}; a term list holds at most {filesizeformat(2000)} per field "
                      f"(GAVEL_TERM_LIST_MAX_BYTES). Split it into two lists."]
    assert huge in response.content.decode()  # the input is shown again, not lost


def test_an_oversized_admin_submission_comes_back_to_the_page_with_the_limit(superuser_client, desk, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 4096
    response = superuser_client.post(change_url(desk), {
        **configuration_form(desk), "system_prompt": "x" * 10_000}, follow=True)
    assert response.status_code == 200
    html = unescape(response.content.decode())
    assert admin_layout(html)
    assert re.search(r"The form sent 1\d\.\d\xa0KB; one save may send at most 4\.0\xa0KB \(DATA_UPLOAD_MAX_MEMORY_SIZE\)\. "
                     r"Nothing was saved: shorten the longest field, or ask an administrator to raise the limit\.", html)
    assert Configuration.objects.get(pk=desk.pk).system_prompt == "Write plainly."
