"""Policy versions (SPEC §12.4): each committed policy change kept as a numbered revision with its actor,
time, summary and the whole policy file, so any version can be exported, compared and restored.

The number is PolicyVersion's (what screenings report). A revision is written when the change commits
(`note_edit`, called by every version bump): one per transaction, holding the document as committed.
"""
from __future__ import annotations

import difflib
import logging
import zlib
from contextlib import contextmanager
from contextvars import ContextVar

import yaml
from django.db import IntegrityError, transaction

from governance.models import PolicyRevision, PolicyVersion
from governance.models.policy import version_bumped
from governance.policy import export_policy
from governance.policy.dump import to_yaml
from governance.policy.format import NAME_KEYS

logger = logging.getLogger("gavel.policy")

# (actor, source) of the change being made, set by the paths that know it (import, API, restore).
_acting: ContextVar[tuple[str, str] | None] = ContextVar("policy_actor", default=None)
# What a release from a draft adds to its version (SPEC §12.5): author, approver, regressions accepted.
_release_facts: ContextVar[dict | None] = ContextVar("policy_release_facts", default=None)


@contextmanager
def acting(actor: str, source: str):
    """Name who makes the policy changes inside the block, and through which path."""
    token = _acting.set((actor, source))
    try:
        yield
    finally:
        _acting.reset(token)


@contextmanager
def releasing(*, author: str = "", approver: str = "", regressions_accepted: int = 0):
    """The version written inside the block records who proposed it, who approved it, what was accepted."""
    token = _release_facts.set({"author": author[:200], "approver": approver[:200],
                                "regressions_accepted": regressions_accepted})
    try:
        yield
    finally:
        _release_facts.reset(token)


def _current_actor() -> tuple[str, str]:
    held = _acting.get()
    if held is not None:
        return held
    # An admin save: django-simple-history's middleware holds the request of this thread.
    try:
        from simple_history.models import HistoricalRecords

        request = getattr(HistoricalRecords.context, "request", None)
    except Exception:
        request = None
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False):
        return "", ""
    if hasattr(user, "get_username"):
        return f"user:{user.get_username()}", "admin"
    # The REST API's request.user is a consumer (governance.api.auth), as the governance log names it.
    return f"consumer:{getattr(user, 'name', '')}", "api"


def keep_revision(sender, **kwargs) -> None:
    """The policy version was bumped (`governance.models.policy.version_bumped`): keep it as a revision."""
    note_edit()


# Every version is kept as a revision once its change commits (SPEC §12.4). The record announces the bump;
# this module, above the records, listens (connected when the app is ready: governance.apps).
version_bumped.connect(keep_revision, dispatch_uid="policy-version-revision")


def note_edit() -> None:
    """A policy edit happened: write its revision once the transaction commits (never for a rolled-back draft)."""
    actor, source = _current_actor()
    facts = dict(_release_facts.get() or {})
    transaction.on_commit(lambda: _record_after_commit(actor, source, facts))


def _record_after_commit(actor: str, source: str, facts: dict) -> None:
    # The change itself is committed: a revision that cannot be written is logged, never the caller's error.
    try:
        record(actor=actor, source=source, **facts)
    except Exception:
        logger.exception("policy version %s could not be kept as a revision", PolicyVersion.current())


def record(*, actor: str = "", source: str = "", author: str = "", approver: str = "",
           regressions_accepted: int = 0) -> PolicyRevision | None:
    """Keep the policy as it stands now under the current version number (once per number)."""
    number = PolicyVersion.current()
    if PolicyRevision.objects.filter(number=number).exists():
        return None
    document = export_policy()
    previous = PolicyRevision.objects.filter(number__lt=number).order_by("-number").first()
    summary = summarize(yaml.safe_load(previous.document_yaml()) if previous else {}, document)
    try:
        with transaction.atomic():
            return PolicyRevision.objects.create(
                number=number, actor=actor[:150], source=source, summary=summary, author=author,
                approver=approver, regressions_accepted=regressions_accepted,
                document=zlib.compress(to_yaml(document).encode("utf-8")))
    except IntegrityError:
        return None  # another process kept this number first


def _by_name(document: dict) -> dict[str, dict]:
    records = {}
    for section, key in NAME_KEYS.items():
        for record in (document or {}).get(section) or ():
            records[f"{section}:{record.get(key)}"] = record
    return records


def summarize(old: dict, new: dict) -> dict:
    """The records created, changed and removed from one document to the next, as `section:name`."""
    before, after = _by_name(old), _by_name(new)
    return {
        "created": sorted(k for k in after if k not in before),
        "changed": sorted(k for k in after if k in before and after[k] != before[k]),
        "removed": sorted(k for k in before if k not in after),
    }


def document_of(number: int) -> str | None:
    revision = PolicyRevision.objects.filter(number=number).first()
    return revision.document_yaml() if revision else None


def history(limit: int | None = None) -> list[PolicyRevision]:
    queryset = PolicyRevision.objects.defer("document").order_by("-number")
    return list(queryset[:limit] if limit else queryset)


def diff(a: int, b: int) -> str | None:
    """The difference between two versions' policy files, as a unified diff (None when one is not kept)."""
    first, second = document_of(a), document_of(b)
    if first is None or second is None:
        return None
    return "".join(difflib.unified_diff(first.splitlines(keepends=True), second.splitlines(keepends=True),
                                        fromfile=f"version {a}", tofile=f"version {b}"))
