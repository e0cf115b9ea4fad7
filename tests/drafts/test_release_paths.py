"""Every release path × four eyes × role (SPEC §12.5 amended, issue 41): the table in docs/permissions.md,
read from the file, each row run. Repro: with GAVEL_POLICY_FOUR_EYES=1 one administrator still released
alone through `PUT /api/v1/policy` and the admin's import page, and a reviewer's *keep as example* wrote a
live example with no draft and no approver.

"release": the change is live afterwards; "draft": it is not live and an open or submitted draft holds it;
"refused": it is not live (and no new draft holds it, for the paths that would make one).
"""
import copy
import re
from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from rest_framework.test import APIClient

from governance import policy
from governance.errors import GavelError
from governance.models import PolicyDraft, PolicyExample, PolicyVersion, Task
from governance.policy import proposals, release
from termlists.models import TermList
from tests.drafts.helpers import live_policy, person, term_list
from tests.governance.test_policy_examples import NEWS

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "permissions.md"
EDITOR_MODELS = ("termlist", "patternrule", "snippet", "policyexample", "policydraft", "configuration")


def table_rows() -> list[tuple[str, str, str, str]]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- release-paths:start -->")[1].split("<!-- release-paths:end -->")[0]
    rows = []
    for line in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append(tuple(cells))
    return rows


ROWS = table_rows()


def test_the_table_is_there_and_names_every_path():
    paths = {row[0] for row in ROWS}
    assert len(ROWS) >= 25 and {"`PUT /api/v1/policy`", "`import_policy FILE`", "admin import page",
                                "*save and publish*", "restore (admin history)", "*keep as example*"} <= paths


# --- people -------------------------------------------------------------------------------------


def staff(name, *, superuser=False, publisher=False):
    user = person(name, superuser=superuser, publisher=publisher)
    user.user_permissions.add(*Permission.objects.filter(
        codename__in=[f"{a}_{m}" for m in EDITOR_MODELS for a in ("add", "change", "view")]))
    return type(user).objects.get(pk=user.pk)


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def user_for(who: str):
    return {"administrator": lambda: staff("root", superuser=True),
            "publisher": lambda: staff("ben", publisher=True),
            "policy editor": lambda: staff("pia"),
            "editor": lambda: staff("erika")}[who]()


def api_for(make_consumer, who: str) -> APIClient:
    _consumer, token = make_consumer("release-" + who.replace(" ", "-"), is_admin=who == "administrator consumer")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


# --- the change each path tries: Skonto into the brand list ------------------------------------


def with_skonto() -> dict:
    document = policy.export_policy()
    document["term_lists"][0]["forbidden"].append("Skonto")
    return document


def skonto_live() -> bool:
    return "Skonto" in TermList.objects.get(name="Brand words").forbidden


def skonto_drafted() -> bool:
    return any(c["section"] == "term_lists" and "Skonto" in ((c.get("record") or {}).get("forbidden") or ())
               for d in PolicyDraft.objects.filter(status__in=proposals.LIVE_STATUSES) for c in d.changes)


def put_policy(ctx, who):
    return ctx.api(who).put("/api/v1/policy", with_skonto(), format="json").status_code


def import_file(ctx, who, *extra):
    path = ctx.tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(with_skonto(), allow_unicode=True), encoding="utf-8")
    call_command("import_policy", str(path), *extra, stdout=ctx.out, stderr=ctx.out)


def import_page(ctx, who):
    return browser(user_for(who)).post("/admin/policy/import/", {
        "text": yaml.safe_dump(with_skonto(), allow_unicode=True), "_apply": "1"}).status_code


def term_list_form(**changes) -> dict:
    brand = TermList.objects.get(name="Brand words")
    data = {"name": brand.name, "forbidden": brand.forbidden, "required": brand.required,
            "configurations": [c.pk for c in brand.configurations.all()], "site": brand.site or "",
            "language": brand.language or "", "message": brand.message or "", "mode": brand.mode,
            "is_active": "on" if brand.is_active else ""}
    data.update(changes)
    return data


def admin_save(ctx, who, *, publish=False):
    brand = TermList.objects.get(name="Brand words")
    data = term_list_form(forbidden="Rabatt*\nSkonto")
    if publish:
        data["_gavel_publish"] = "Save and publish"
    return browser(user_for(who)).post(f"/admin/termlists/termlist/{brand.pk}/change/", data).status_code


def kept_versions(ctx):
    """A version with Skonto, then one without it again: restoring the first brings Skonto back."""
    with ctx.on_commit(execute=True):
        release.apply_release(with_skonto(), actor="user:root")
    with_it = PolicyVersion.current()
    document = policy.export_policy()
    document["term_lists"][0]["forbidden"] = ["Rabatt*"]
    with ctx.on_commit(execute=True):
        release.apply_release(document, actor="user:root")
    assert not skonto_live()
    return with_it


def restore_admin(ctx, who):
    number = kept_versions(ctx)
    return browser(user_for(who)).post("/admin/policy/history/", {"restore": str(number)}).status_code


def restore_api(ctx, who):
    number = kept_versions(ctx)
    return ctx.api(who).post(f"/api/v1/policy/versions/{number}/restore").status_code


def skonto_draft(author):
    draft = proposals.open_draft_for(author, title="Skonto")
    proposals.record_change(draft, "term_lists", "Brand words", term_list(None, forbidden=["Rabatt*", "Skonto"]))
    draft.refresh_from_db()
    return draft


def publish_draft(ctx, who):
    if who == "its author, a publisher":
        ben = user_for("publisher")
        proposals.publish(skonto_draft(ben), ben)
    elif who == "another publisher":
        proposals.publish(skonto_draft(user_for("policy editor")), user_for("publisher"))
    else:
        draft = skonto_draft(user_for("policy editor"))
        call_command("policy_draft", str(draft.pk), "--publish", stdout=ctx.out, stderr=ctx.out)


def publish_removal(ctx, who):
    extra = {"name": "extra", "configuration": "newsroom", "text": "Hallo.", "expect": {"outcome": "allowed"}}
    document = policy.export_policy()
    document["examples"].append(extra)
    release.apply_release(document, actor="user:root")
    draft = proposals.open_draft_for(user_for("policy editor"))
    proposals.record_change(draft, "examples", "extra", None)
    approver = user_for("publisher" if who == "another publisher" else who)
    proposals.publish(draft, approver, allow_regressions=True)  # a removed passing example is a regression


def publish_moved_judge(ctx, who):
    from tests.drafts.test_rights import judged_policy

    live = judged_policy(ctx.provider)
    checker = copy.deepcopy(next(c for c in live["configurations"] if c["identifier"] == "checker"))
    checker["provider"] = "elsewhere"
    draft = proposals.open_draft_for(user_for("policy editor"))
    proposals.record_change(draft, "configurations", "checker", checker)
    draft.refresh_from_db()
    if who == "administrator consumer":
        answer = ctx.api(who).post(f"/api/v1/policy/drafts/{draft.pk}/publish",
                                   {"revision": proposals.revision_of(draft)}, format="json")
        assert answer.status_code == 200, answer.content
    else:
        proposals.publish(draft, user_for("publisher"))


def reviewed_task() -> Task:
    return Task.objects.create(configuration="newsroom", status="ready", outcome="allowed", answer=NEWS,
                               review_decision="accepted")


def keep_example(ctx, who):
    ctx.task = reviewed_task()
    return browser(user_for(who)).post(f"/review/tasks/{ctx.task.pk}/keep").status_code


PATHS = {
    "`PUT /api/v1/policy`": put_policy,
    "`import_policy FILE`": import_file,
    "`import_policy FILE --draft TITLE`": lambda ctx, who: import_file(ctx, who, "--draft", "Skonto"),
    "admin import page": import_page,
    "admin save": admin_save,
    "*save and publish*": lambda ctx, who: admin_save(ctx, who, publish=True),
    "restore (admin history)": restore_admin,
    "restore (API)": restore_api,
    "*keep as example*": keep_example,
    "publish a draft": publish_draft,
    "publish a draft that removes a record": publish_removal,
    "publish a draft that moves a judge to another provider": publish_moved_judge,
}


def live_and_drafted(path: str, ctx) -> tuple[bool, bool]:
    if path == "*keep as example*":
        live = PolicyExample.objects.filter(from_task=ctx.task.pk).exists() if ctx.task else False
        drafted = any(c["section"] == "examples" for d in PolicyDraft.objects.filter(
            status__in=proposals.LIVE_STATUSES) for c in d.changes)
        return live, drafted
    if path == "publish a draft that removes a record":
        return not PolicyExample.objects.filter(name="extra").exists(), False
    if path == "publish a draft that moves a judge to another provider":
        from governance.models import Configuration

        return Configuration.objects.get(identifier="checker").provider.name == "elsewhere", False
    return skonto_live(), skonto_drafted() and not path.startswith("publish")


class Context:
    def __init__(self, provider, make_consumer, tmp_path, on_commit):
        self.provider, self.make_consumer, self.tmp_path, self.on_commit = provider, make_consumer, tmp_path, on_commit
        self.out = __import__("io").StringIO()
        self.task = None

    def api(self, who):
        return api_for(self.make_consumer, who)


@pytest.mark.parametrize("path,four_eyes,who,result", ROWS, ids=[re.sub(r"[^\w]+", "-", " ".join(r)) for r in ROWS])
def test_each_release_path(path, four_eyes, who, result, provider, make_consumer, tmp_path,
                           django_capture_on_commit_callbacks):
    live_policy(provider)
    ctx = Context(provider, make_consumer, tmp_path, django_capture_on_commit_callbacks)
    with override_settings(GAVEL_POLICY_FOUR_EYES=four_eyes == "on"):
        try:
            PATHS[path](ctx, who)
        except (GavelError, CommandError):
            if result != "refused":
                raise
    live, drafted = live_and_drafted(path, ctx)
    if result == "release":
        assert live, ctx.out.getvalue()
    elif result == "draft":
        assert not live and drafted, ctx.out.getvalue()
    else:
        assert result == "refused" and not live and not drafted
