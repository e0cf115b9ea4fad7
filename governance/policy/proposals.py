"""Drafts (SPEC §12.5): every change is a release. A draft holds changes in policy-file terms, record by
record, and is published through the release gate of `release.apply_release`.

A change is `{"section", "name", "action": add|change|remove, "record": {...} | None, "base": {...} | None}`:
`base` is the live record when the change was first made. The draft's document is the live policy of the
moment with each change applied; a record that changed live since `base` (and not to what the draft says)
is a conflict, kept as live until it is resolved. The admin, the API and `import_policy --draft` all use
these functions; the report is `proposals_report.draft_report`.
"""
from __future__ import annotations

import copy
import hashlib
import json
import logging
from dataclasses import asdict, dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance.errors import Conflict as ConflictError
from governance.errors import NotGranted, UnknownRecord
from governance.models import GovernanceEvent, PolicyDraft, PolicyDraftComment, PolicyVersion
from governance.policy import export_policy, format, schedule_failures
from governance.policy.drafts import draft_policy
from governance.policy.draft_refusals import (MSG_DRAFT_CHANGED, MSG_DRAFT_CONFLICTS, MSG_DRAFT_INVALID, DraftInvalid,
                                              named_paths)
from governance.policy.format import NAME_KEYS, SECTIONS
from governance.policy.proposal_rights import admin_only_changes
from governance.policy.release import ExamplesRegressed, apply_release
from governance.policy.versions import document_of
from governance.records.permissions import is_administrator

ACTIONS = ("add", "change", "remove")
LIVE_STATUSES = (PolicyDraft.Status.OPEN, PolicyDraft.Status.SUBMITTED)
# The governance log's decision for each draft event (the event's own name is in its detail).
DECISIONS = {"created": "draft_created", "submitted": "draft_submitted", "sent_back": "draft_sent_back",
             "withdrawn": "draft_withdrawn", "published": "draft_published", "publish_refused": "draft_refused",
             # A change after an approval sends the draft back to open (SPEC §12.5, issue 41).
             "approval_withdrawn": "draft_sent_back"}
PUBLISH_PERMISSION = "governance.publish_policy"
logger = logging.getLogger("gavel.policy")
COMMAND_PREFIX = "command:"


@dataclass
class Conflict:
    """A record changed both live (since the draft's base) and in the draft, differently."""

    section: str
    name: str
    base: dict | None
    live: dict | None
    draft: dict | None

    def as_dict(self) -> dict:
        return asdict(self)


class NotPublishable(ConflictError):
    """The draft's status does not allow the act (a published draft is not published again)."""

    default_code = "draft_status"


class DraftConflicts(ConflictError):
    """The draft changes a record that also changed live since it began: resolve it first."""

    default_code = "draft_conflicts"

    def __init__(self, conflicts: list[Conflict]):
        names = [f"{c.section}:{c.name}" for c in conflicts]
        super().__init__(str(MSG_DRAFT_CONFLICTS) % {"count": len(names), "names": ", ".join(names)},
                         fields={"conflicts": names})
        self.conflicts = conflicts


class DraftChanged(ConflictError):
    """The draft is not what the approver read: it changed after they read or approved it."""

    default_code = "draft_changed"


MSG_APPROVAL_WITHDRAWN = gettext_lazy("The draft changed after it was approved (by %(who)s): its submission and its "
                                      "schedule (set by %(approver)s) were withdrawn. Submit or schedule it again.")
MSG_SUBMISSION_WITHDRAWN = gettext_lazy("The draft changed after it was approved (by %(who)s): its submission was "
                                        "withdrawn. Submit it again.")


class AdminOnlyChanges(NotGranted):
    """The draft writes fields only an administrator writes, and the approver is not one."""

    default_code = "admin_only_fields"


class FourEyesRefused(NotGranted):
    """GAVEL_POLICY_FOUR_EYES is on and the approver is the draft's author."""

    default_code = "four_eyes"


# --- who --------------------------------------------------------------------------------------


def actor_label(actor) -> str:
    """Who, as the governance log names actors: user:anna, consumer:ci; a string is taken as it is."""
    if actor is None:
        return ""
    if isinstance(actor, str):
        return actor
    if hasattr(actor, "get_username"):
        return f"user:{actor.get_username()}"
    return f"consumer:{getattr(actor, 'name', '')}"


def may_approve(actor) -> bool:
    """Approvers (SPEC §12.5): administrators (superusers), users with *publish policy*, administrator
    consumers of the API, and the operator's command line (`command:…`)."""
    if isinstance(actor, str):
        # The command line is the operator's, who may import a policy directly anyway — unless four eyes are
        # on: a shell cannot tell two people apart, so a person in the admin or a consumer approves.
        return actor.startswith(COMMAND_PREFIX) and not settings.GAVEL_POLICY_FOUR_EYES
    if actor is None:
        return False
    if hasattr(actor, "get_username"):
        return bool(getattr(actor, "is_active", False)) and (
            is_administrator(actor) or actor.has_perm(PUBLISH_PERMISSION))
    return bool(getattr(actor, "is_admin", False)) and bool(getattr(actor, "is_active", True))


def is_author(actor, draft: PolicyDraft) -> bool:
    if draft.author_id is not None and getattr(actor, "pk", None) == draft.author_id and hasattr(
            actor, "get_username"):
        return True
    return bool(draft.author_label) and actor_label(actor) == draft.author_label


def can_publish(actor, draft: PolicyDraft) -> bool:
    """Whether `actor` (a user or an API consumer) may publish `draft`: an approver, and with four eyes
    never the draft's author."""
    if not may_approve(actor):
        return False
    return not (settings.GAVEL_POLICY_FOUR_EYES and is_author(actor, draft))


def _require_approver(actor, draft: PolicyDraft) -> None:
    if not may_approve(actor):
        raise NotGranted(_("Only administrators and users allowed to publish policy may do this."),
                         code="not_an_approver")
    if not can_publish(actor, draft):
        raise FourEyesRefused(_("Four eyes: the author of a draft never publishes it; another approver must."))
    if hasattr(actor, "get_username") and not is_administrator(actor):
        # A person who may publish but is no administrator never writes an administrator's fields.
        live = export_policy()
        found = admin_only_changes(draft.changes, live, draft_document(draft, live)[0])
        if found:
            raise AdminOnlyChanges(
                _("Only an administrator may publish this draft: it changes admin-only fields or removes records "
                  "(%(fields)s).") % {"fields": ", ".join(found)},
                fields={"changes": found})


def _event(draft: PolicyDraft, kind: str, actor: str, **facts) -> GovernanceEvent:
    """A draft's governance event: who, when, which draft and version, counts; never a text or a title."""
    return GovernanceEvent.objects.create(
        correlation_id=f"draft-{draft.pk}", decision=DECISIONS[kind], check_name="policy", actor=actor[:150],
        detail={"event": f"draft.{kind}", "draft": draft.pk, "base_version": draft.base_version,
                "live_version": PolicyVersion.current(), "changes": len(draft.changes or ()), **facts})


def revision_of(draft: PolicyDraft) -> str:
    """The draft's content hash (SHA-256 of its changes as canonical JSON): what an approval pins and what
    publishing over the API names (`revision`)."""
    payload = json.dumps(draft.changes or [], sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _after_change(draft: PolicyDraft, actor) -> None:
    """Any change to the draft after its approval withdraws the submission and the schedule (SPEC §12.5):
    the draft goes back to open, the approver's time is cleared, the page and the governance log say so."""
    approved = draft.status == PolicyDraft.Status.SUBMITTED or draft.publish_at is not None
    if not approved or revision_of(draft) == draft.approved_revision:
        return
    who = actor_label(actor) or draft.author_label
    approver = draft.scheduled_by
    note = (MSG_APPROVAL_WITHDRAWN if approver else MSG_SUBMISSION_WITHDRAWN) % {"who": who, "approver": approver}
    was = draft.status
    draft.status = PolicyDraft.Status.OPEN
    draft.publish_at = None
    draft.scheduled_by = ""
    draft.approved_revision = ""
    draft.approval_withdrawn = str(note)[:500]
    draft.save(update_fields=["status", "publish_at", "scheduled_by", "approved_revision", "approval_withdrawn",
                              "updated_at"])
    _event(draft, "approval_withdrawn", who, approver=approver, was=was)


def _pin(draft: PolicyDraft) -> None:
    draft.approved_revision = revision_of(draft)
    draft.approval_withdrawn = ""


# --- records in a document --------------------------------------------------------------------


def _check_section(section: str) -> None:
    if section not in NAME_KEYS:
        raise UnknownRecord(_("Unknown policy section %(section)s; known: %(known)s.")
                            % {"section": section, "known": ", ".join(SECTIONS)}, code="unknown_section",
                            fields={"section": [section]})


def find_record(document: dict, section: str, name: str) -> dict | None:
    key = NAME_KEYS[section]
    return next((r for r in (document.get(section) or ()) if r.get(key) == name), None)


# The keys of each section's records, and of their nested mappings, in the policy file's order.
RECORD_KEYS = {"providers": format.PROVIDER_KEYS, "configurations": format.CONFIGURATION_KEYS,
               "snippets": format.SNIPPET_KEYS, "term_lists": format.TERM_LIST_KEYS,
               "pattern_rules": format.PATTERN_RULE_KEYS, "examples": format.EXAMPLE_KEYS}
NESTED_KEYS = {"budget": format.BUDGET_KEYS, "rules": format.RULES_KEYS, "expect": format.EXPECT_KEYS}


def _in_order(mapping: dict, keys: tuple) -> dict:
    return {**{k: mapping[k] for k in keys if k in mapping}, **{k: v for k, v in mapping.items() if k not in keys}}


def in_file_order(section: str, record: dict) -> dict:
    """The record with its keys in the policy file's order (a database's JSON may keep them sorted)."""
    ordered = _in_order(record, RECORD_KEYS[section])
    for key, keys in NESTED_KEYS.items():
        if isinstance(ordered.get(key), dict):
            ordered[key] = _in_order(ordered[key], keys)
    expect = ordered.get("expect") if section == "examples" else None
    if isinstance(expect, dict):
        for member in ("findings", "absent"):
            if isinstance(expect.get(member), list):
                expect[member] = [_in_order(f, format.FINDING_KEYS) if isinstance(f, dict) else f
                                  for f in expect[member]]
    return ordered


def _put_record(document: dict, section: str, name: str, record: dict | None) -> None:
    key = NAME_KEYS[section]
    records = list(document.get(section) or ())
    index = next((i for i, r in enumerate(records) if r.get(key) == name), None)
    if record is None:
        if index is not None:
            del records[index]
    elif index is None:
        records.append(in_file_order(section, copy.deepcopy(record)))
    else:
        records[index] = in_file_order(section, copy.deepcopy(record))
    document[section] = records


def changes_between(live: dict, target: dict) -> list[dict]:
    """The changes that turn `live` into `target`, record by record, in the file's section order."""
    changes = []
    for section in SECTIONS:
        key = NAME_KEYS[section]
        before = {r.get(key): r for r in live.get(section) or ()}
        after = {r.get(key): r for r in target.get(section) or ()}
        for name in [*before, *(n for n in after if n not in before)]:
            old, new = before.get(name), after.get(name)
            if old == new:
                continue
            action = "add" if old is None else ("remove" if new is None else "change")
            changes.append({"section": section, "name": name, "action": action, "record": new, "base": old})
    return changes


def normalized(document, *, prune: bool = False) -> dict:
    """The whole policy as it would stand after importing `document`: read and written by the import
    itself (rolled back), so each record is in the form an export gives. Raises PolicyInvalid."""
    with draft_policy(document, prune=prune):
        return export_policy()


# --- drafts -----------------------------------------------------------------------------------


def _new_draft(actor, *, title: str, changes: list | None = None, **facts) -> PolicyDraft:
    user = actor if hasattr(actor, "get_username") else None
    draft = PolicyDraft.objects.create(title=title[:200], author=user, author_label=actor_label(actor)[:200],
                                       base_version=PolicyVersion.current(), changes=changes or [])
    _event(draft, "created", draft.author_label, **facts)
    return draft


def open_draft_for(user, *, title: str = "") -> PolicyDraft:
    """The user's newest open draft, or a new one at the live version."""
    label = actor_label(user)
    drafts = PolicyDraft.objects.filter(status=PolicyDraft.Status.OPEN)
    drafts = drafts.filter(author=user) if hasattr(user, "get_username") else drafts.filter(author_label=label)
    draft = drafts.order_by("-updated_at", "-id").first()
    return draft or _new_draft(user, title=title)


def _require_status(draft: PolicyDraft, *statuses) -> None:
    if draft.status not in statuses:
        raise NotPublishable(_("This cannot be done with a draft that is %(status)s.") % {
            "status": draft.get_status_display()}, fields={"status": [draft.status]})


def record_change(draft: PolicyDraft, section: str, name: str, record: dict | None, *, actor=None) -> None:
    """Put one record into the draft (None removes it). The first change of a record keeps the live
    record as its base; a change that brings the record back to its base drops out of the draft. A change
    after an approval withdraws it (`_after_change`)."""
    _check_section(section)
    _require_status(draft, PolicyDraft.Status.OPEN)
    changes = [c for c in draft.changes or () if (c["section"], c["name"]) != (section, name)]
    earlier = next((c for c in draft.changes or () if (c["section"], c["name"]) == (section, name)), None)
    base = earlier["base"] if earlier else find_record(export_policy(), section, name)
    if record != base:
        action = "add" if base is None else ("remove" if record is None else "change")
        changes.append({"section": section, "name": name, "action": action,
                        "record": copy.deepcopy(record), "base": base})
    draft.changes = changes
    draft.save(update_fields=["changes", "updated_at"])
    _after_change(draft, actor)


def draft_document(draft: PolicyDraft, live: dict | None = None) -> tuple[dict, list[Conflict]]:
    """The live policy with the draft's changes applied record by record, and the conflicts (kept as live)."""
    live = export_policy() if live is None else live
    document = copy.deepcopy(live)
    conflicts = []
    for change in draft.changes or ():
        section, name = change["section"], change["name"]
        current = find_record(live, section, name)
        if current == change.get("base"):
            _put_record(document, section, name, change.get("record"))
        elif current != change.get("record"):  # the same edit made live too is no conflict
            conflicts.append(Conflict(section, name, change.get("base"), current, change.get("record")))
    return document, conflicts


def resolve_conflict(draft: PolicyDraft, section: str, name: str, take: str, *, actor=None) -> None:
    """Settle a conflict: `draft` keeps the draft's record over today's live one; `live` drops the change."""
    if take not in ("draft", "live"):
        raise ValueError("take must be 'draft' or 'live'")
    _require_status(draft, *LIVE_STATUSES)
    change = next((c for c in draft.changes or () if (c["section"], c["name"]) == (section, name)), None)
    if change is None:
        raise UnknownRecord(_("The draft does not change %(section)s:%(name)s.") % {"section": section,
                                                                                   "name": name})
    if take == "live":
        draft.changes = [c for c in draft.changes if c is not change]
    else:
        change["base"] = find_record(export_policy(), section, name)
        if change["record"] == change["base"]:
            draft.changes = [c for c in draft.changes if c is not change]
    draft.save(update_fields=["changes", "updated_at"])
    _after_change(draft, actor)


def changes_touching(section: str, name: str) -> list[PolicyDraft]:
    """Open and submitted drafts that change this record (the admin's indicators)."""
    return touched_records(section).get((section, name), [])


def touched_records(section: str | None = None) -> dict[tuple[str, str], list[PolicyDraft]]:
    """Every record open and submitted drafts change, (section, name) -> those drafts, newest first: one
    query for a whole admin list."""
    touched: dict[tuple[str, str], list[PolicyDraft]] = {}
    for draft in PolicyDraft.objects.filter(status__in=LIVE_STATUSES).order_by("-updated_at", "-id"):
        for change in draft.changes or ():
            if section is None or change["section"] == section:
                touched.setdefault((change["section"], change["name"]), []).append(draft)
    return touched


def draft_from_document(document, actor, *, title: str, prune: bool = False) -> tuple[PolicyDraft, bool]:
    """A draft holding what importing `document` would change (`import_policy --draft`, POST drafts).
    An open draft of the same title by the same actor is updated: its changes are those of this document
    against the live policy now. Returns (draft, created). Raises PolicyInvalid."""
    live = export_policy()
    changes = changes_between(live, normalized(document, prune=prune))
    label = actor_label(actor)
    draft = (PolicyDraft.objects.filter(status=PolicyDraft.Status.OPEN, author_label=label, title=title[:200])
             .order_by("-updated_at", "-id").first())
    if draft is None:
        return _new_draft(actor, title=title, changes=changes), True
    draft.changes = changes
    draft.base_version = PolicyVersion.current()
    draft.save(update_fields=["changes", "base_version", "updated_at"])
    _after_change(draft, actor)
    return draft, False


def draft_from_version(number: int, user) -> PolicyDraft:
    """Restore (SPEC §12.4, §12.5): a new draft whose changes turn the live policy into version `number`,
    removals of examples and records included, previewed before anyone publishes it."""
    import yaml

    text = document_of(number)
    if text is None:
        raise UnknownRecord(_("Policy version %(number)s is not kept.") % {"number": number},
                            code="unknown_version")
    changes = changes_between(export_policy(), normalized(yaml.safe_load(text), prune=True))
    return _new_draft(user, title=_("Restore version %(number)s") % {"number": number}, changes=changes,
                      restores=number)


# --- approval ---------------------------------------------------------------------------------


def require_publishable(draft: PolicyDraft) -> None:
    """A draft that could not be published is not handed to the approvers: DraftConflicts (409) while a
    record changed live and in the draft, DraftInvalid (422) when its changes make no valid policy. A
    regression is not checked here: the approver weighs it when publishing (the report counts it)."""
    from governance.policy import PolicyInvalid

    document, conflicts = draft_document(draft)
    if conflicts:
        raise DraftConflicts(conflicts)
    try:
        normalized(document, prune=True)
    except PolicyInvalid as exc:
        raise invalid_draft(draft, exc, document) from exc


def invalid_draft(draft: PolicyDraft, exc, document: dict | None = None) -> DraftInvalid:
    """PolicyInvalid of the draft's document as the draft's refusal: every path, records by name."""
    fields = named_paths(exc.errors, document if document is not None else draft_document(draft)[0])
    listed = "; ".join(f"{path}: {' '.join(messages)}" for path, messages in fields.items())
    return DraftInvalid(str(MSG_DRAFT_INVALID) % {"errors": listed}, fields=fields)


def submit(draft: PolicyDraft, user) -> None:
    """The author hands the draft to the approvers: open → submitted, if it could be published as it stands
    (`require_publishable`)."""
    _require_status(draft, PolicyDraft.Status.OPEN)
    require_publishable(draft)
    draft.status = PolicyDraft.Status.SUBMITTED
    _pin(draft)  # submitted as it stands: a later change sends it back (`_after_change`)
    draft.save(update_fields=["status", "approved_revision", "approval_withdrawn", "updated_at"])
    _event(draft, "submitted", actor_label(user), revision=draft.approved_revision)


def send_back(draft: PolicyDraft, user, comment: str) -> None:
    """An approver returns a submitted draft to its author with a comment: submitted → open."""
    _require_status(draft, PolicyDraft.Status.SUBMITTED)
    if not may_approve(user):
        raise NotGranted(_("Only administrators and users allowed to publish policy may do this."),
                         code="not_an_approver")
    with transaction.atomic():
        draft.status = PolicyDraft.Status.OPEN
        draft.save(update_fields=["status", "updated_at"])
        if comment.strip():
            PolicyDraftComment.objects.create(draft=draft, author_label=actor_label(user)[:200], text=comment)
        _event(draft, "sent_back", actor_label(user))


def withdraw(draft: PolicyDraft, user) -> None:
    """The draft is dropped: nothing of it is published."""
    _require_status(draft, *LIVE_STATUSES)
    draft.status = PolicyDraft.Status.WITHDRAWN
    draft.publish_at = None
    draft.save(update_fields=["status", "publish_at", "updated_at"])
    _event(draft, "withdrawn", actor_label(user))


def schedule_publish(draft: PolicyDraft, user, at, *, revision: str | None = None) -> None:
    """An approver sets (or, with None, clears) the time the worker publishes the draft (`publish_due`).
    The schedule pins the draft as it stands (or as `revision` names it): the worker publishes that
    content only, and any change before then withdraws the schedule."""
    _require_status(draft, *LIVE_STATUSES)
    if at is not None:
        _require_approver(user, draft)
        _require_revision(draft, revision)
        _pin(draft)
    draft.publish_at = at
    draft.scheduled_by = actor_label(user)[:200] if at is not None else ""
    fields = ["publish_at", "scheduled_by", "approved_revision", "approval_withdrawn", "updated_at"]
    if at is not None:  # scheduled again: the last failure is history (its event stays in the log)
        draft.schedule_failure, draft.schedule_failed_at = "", None
        fields += ["schedule_failure", "schedule_failed_at"]
    draft.save(update_fields=fields)


def _require_revision(draft: PolicyDraft, revision: str | None) -> None:
    if revision is not None and revision != revision_of(draft):
        raise DraftChanged(str(MSG_DRAFT_CHANGED), fields={"revision": [str(MSG_DRAFT_CHANGED)]})


def publish(draft: PolicyDraft, user, *, allow_regressions: bool = False, revision: str | None = None):
    """Publish the draft through the release gate (SPEC §12.3): the live policy of this moment with the
    draft's changes. Returns the new policy version number (the live one when nothing changed).

    Raises NotGranted / FourEyesRefused (403), NotPublishable, DraftConflicts and ExamplesRegressed (409),
    PolicyInvalid (the changes no longer make a valid policy). With `revision` (the API's and the admin's
    publish name the revision the approver read), a draft that changed since is DraftChanged (409)."""
    _require_status(draft, *LIVE_STATUSES)
    _require_approver(user, draft)
    _require_revision(draft, revision)
    return _publish(draft, actor_label(user), allow_regressions=allow_regressions)


def _publish(draft: PolicyDraft, approver: str, *, allow_regressions: bool, scheduled: bool = False) -> int:
    from governance.policy import PolicyInvalid

    facts = {"scheduled": True} if scheduled else {}
    if scheduled and draft.approved_revision != revision_of(draft):
        # The worker publishes only what the approver scheduled (a change should have withdrawn the schedule).
        _event(draft, "publish_refused", approver, reason="draft_changed", **facts)
        raise DraftChanged(str(MSG_DRAFT_CHANGED))
    document, conflicts = draft_document(draft)
    if conflicts:
        _event(draft, "publish_refused", approver, reason="conflicts", conflicts=len(conflicts), **facts)
        raise DraftConflicts(conflicts)
    try:
        report, plan = apply_release(document, prune=True, allow_regressions=allow_regressions, actor=approver,
                                     source="draft", author=draft.author_label,
                                     extra={"draft": draft.pk, "author": draft.author_label[:150]})
    except ExamplesRegressed as exc:
        _event(draft, "publish_refused", approver, reason="examples_regressed",
               regressions=len(exc.plan.regressions), examples=exc.plan.regressions, **facts)
        raise
    except PolicyInvalid as exc:
        _event(draft, "publish_refused", approver, reason="invalid_policy", errors=len(exc.errors), **facts)
        raise
    accepted = len(plan.regressions) if plan else 0
    version = PolicyVersion.current()
    # Claimed by its status: of two approvers publishing at once, the second finds it published (its
    # import changed nothing) and gets NotPublishable, with no second event.
    claimed = PolicyDraft.objects.filter(pk=draft.pk, status__in=LIVE_STATUSES).update(
        status=PolicyDraft.Status.PUBLISHED, published_version=version, approver_label=approver[:200],
        regressions_accepted=accepted, updated_at=timezone.now())
    if not claimed:
        draft.refresh_from_db()
        _require_status(draft, *LIVE_STATUSES)
    draft.refresh_from_db()
    _event(draft, "published", approver, version=draft.published_version, created=len(report.created),
           changed=len(report.changed), removed=len(report.removed), regressions_accepted=accepted, **facts)
    return draft.published_version


def publish_due(now=None) -> list[dict]:
    """Publish the drafts whose `publish_at` has come (the worker, every sweep interval; on the embedded
    default `manage.py publish_due_drafts`). Open or submitted drafts that an approver scheduled
    (`schedule_publish`) go through the gate against the policy of this moment; a refused one stays as
    it is with its time cleared, so it is not tried again each minute, and keeps why and when in
    `schedule_failure` and `schedule_failed_at` (the draft's page and the API show them, the approver who
    scheduled it is told on their next admin page; its `publish_refused` event says it too).
    The worker never accepts a regression: an approver does that in person. Any failure, expected or not,
    is kept on its draft and the next due draft is tried."""
    now = now or timezone.now()
    results = []
    due = PolicyDraft.objects.filter(status__in=LIVE_STATUSES, publish_at__lte=now).exclude(scheduled_by="")
    for draft in due.order_by("publish_at", "id"):
        # Claimed by clearing its time: a second runner at the same moment (beat and the command) skips it.
        if not PolicyDraft.objects.filter(pk=draft.pk, publish_at=draft.publish_at).update(publish_at=None):
            continue
        draft.publish_at = None
        try:
            version = _publish(draft, draft.scheduled_by, allow_regressions=False, scheduled=True)
            results.append({"draft": draft.pk, "published": version})
        except Exception as exc:  # noqa: BLE001 -- one draft's failure is kept on it and never stops the others
            results.append({"draft": draft.pk, "refused": _keep_failure(draft, exc, now)})
    return results


def _keep_failure(draft: PolicyDraft, exc, now) -> str:
    """Why the worker did not publish the draft at its time, kept on the draft (as a code and its facts, read
    in each reader's language) until it is scheduled again; returns the code. A refusal the gate did not
    record (the draft's status, an unexpected error) gets its `publish_refused` event here; an unexpected
    error's text goes to the server's log only."""
    from governance.policy import PolicyInvalid

    known = (DraftConflicts, DraftChanged, ExamplesRegressed, PolicyInvalid, NotPublishable)
    code = ("invalid_policy" if isinstance(exc, PolicyInvalid) else getattr(exc, "code", "")) if isinstance(
        exc, known) else schedule_failures.UNEXPECTED
    if code == schedule_failures.UNEXPECTED:
        logger.error("scheduled publish of draft %s failed", draft.pk, exc_info=exc)
    else:
        logger.info("scheduled publish of draft %s refused: %s", draft.pk, code)
    try:
        fields = invalid_draft(draft, exc).fields if isinstance(exc, PolicyInvalid) else None
        reason = schedule_failures.stored(schedule_failures.failure_facts(code, exc, fields))
        PolicyDraft.objects.filter(pk=draft.pk).update(schedule_failure=reason, schedule_failed_at=now)
        draft.schedule_failure, draft.schedule_failed_at = reason, now
        if code in (schedule_failures.UNEXPECTED, NotPublishable.default_code):
            _event(draft, "publish_refused", draft.scheduled_by, reason=code, scheduled=True)
    except Exception:  # noqa: BLE001 -- the database itself may be what failed: logged, the next draft is tried
        logger.exception("the failure of draft %s's scheduled publish could not be kept", draft.pk)
    return code
