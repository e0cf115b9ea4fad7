"""Writing an imported document: compare each record with the stored one, save only what differs.

`import_policy` is the one entry point; a dry run goes through the same code and rolls back.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.db import transaction

from governance.models import LINK_FIELDS, Configuration, FallbackLink, JudgeLink, one_bump, set_links
from governance.policy.document import MODELS, read_document
from governance.policy.format import CHANGE_REASON, LINK_KEYS, NAME_KEYS
from governance.policy.messages import PolicyInvalid
from governance.policy.reading import Document, Errors, Record


@dataclass
class ImportReport:
    """What an import did (or, in a dry run, would do): entries read "section:identifier"."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # "section:identifier" -> the document paths (within the record) whose values change.
    changed_keys: dict[str, list[str]] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def has_changes(self) -> bool:
        return bool(self.created or self.changed or self.removed)

    def as_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "created": self.created,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "changed_keys": self.changed_keys,
        }


def _differences(record: Record, current: dict) -> list[str]:
    """Document paths (within the record) whose wanted value differs from the stored one."""
    changed = []
    for field_name, wanted in record.values.items():
        if current.get(field_name) != wanted:
            changed.append(record.paths.get(field_name, field_name))
    for ref, wanted in record.refs.items():
        if ref == "configurations":
            if set(current.get(ref, ())) != set(wanted):
                changed.append(ref)
        elif (current.get(ref) or "") != (wanted or ""):
            changed.append(record.paths.get(ref, ref))
    return changed


def _stored(obj, section: str) -> dict:
    values = {f: getattr(obj, f) for f in READ_FIELDS[section]}
    if section == "configurations":
        values["provider"] = obj.provider.name
        values["escalation"] = obj.escalation.identifier if obj.escalation_id else None
        values["fallbacks"] = obj.fallback_identifiers()
        values["rule_judges"] = obj.judge_identifiers()
    elif section == "term_lists":
        values["configurations"] = [c.identifier for c in obj.configurations.all()]
    return values


READ_FIELDS = {
    "providers": ("name", "kind", "route", "api_base", "api_key_env", "trust_zone", "timeout",
                  "max_concurrency", "requests_per_minute", "tokens_per_minute",
                  "price_per_mtok_in", "price_per_mtok_out"),
    "configurations": ("identifier", "model", "system_prompt", "temperature", "max_tokens", "timeout",
                       "budget_daily_requests", "budget_daily_tokens", "budget_daily_cost", "context_tags",
                       "read_tools", "rule_mode", "rule_tags", "rule_default", "min_confidence",
                       "mcp_servers", "approve_tools", "deny_tools", "mcp_results"),
    "mcp_servers": ("name", "url", "headers_env", "trust_zone", "timeout"),
    "snippets": ("identifier", "name", "tags", "sort", "data_class", "is_active", "hidden", "body"),
    "term_lists": ("name", "forbidden", "required", "site", "language", "mode", "message", "is_active"),
    "pattern_rules": ("identifier", "statement", "tags", "severity", "violation_pattern", "satisfied_pattern",
                      "no_verdict_reason", "wrong_samples", "correct_samples", "source", "is_active"),
    "examples": ("name", "configuration", "also", "kind", "site", "language", "format", "text", "tool_calls",
                 "expect_outcome", "expect_findings", "expect_absent", "note", "kept_by", "kept_at", "from_task"),
}


# The person an import's history rows name, when a person makes it (an approver publishing a draft in the admin).
_history_person: ContextVar = ContextVar("policy_import_history_user", default=None)


@contextmanager
def history_names(user):
    """The history rows the imports inside the block write name `user` (a User, never a consumer)."""
    token = _history_person.set(user)
    try:
        yield
    finally:
        _history_person.reset(token)


def _mark_history(obj) -> None:
    """History rows say why, and name no user unless `history_names` gives one: an API import's request.user
    is a consumer, not a User."""
    obj._change_reason = CHANGE_REASON
    obj._history_user = _history_person.get()


def _save(obj) -> None:
    _mark_history(obj)
    obj.save()


def _existing(section: str) -> dict:
    queryset = MODELS[section].objects.all()
    if section == "configurations":
        queryset = queryset.select_related("provider", "escalation").prefetch_related(
            "judge_links__judge", "fallback_links__fallback")
    elif section == "term_lists":
        queryset = queryset.prefetch_related("configurations")
    return {getattr(obj, NAME_KEYS[section]): obj for obj in queryset}


def _apply(doc: Document, report: ImportReport, *, prune: bool, write: bool) -> None:
    stored = {section: _existing(section) for section in MODELS}
    providers = stored["providers"]
    configurations = stored["configurations"]
    pending_escalations: list[tuple[Configuration, str | None]] = []
    # Judges and fallbacks may name configurations later in the document: linked once every one exists.
    pending_links: list[tuple[Configuration, Record]] = []

    for section in ("providers", "mcp_servers", "configurations", "snippets", "term_lists", "pattern_rules",
                    "examples"):
        for record in doc.records(section):
            obj = stored[section].get(record.name)
            changed: list[str] = []
            if obj is None:
                report.created.append(record.label)
            else:
                changed = _differences(record, _stored(obj, section))
                if not changed:
                    report.unchanged.append(record.label)
                    continue
                report.changed.append(record.label)
                report.changed_keys[record.label] = changed
            if not write:
                continue
            if obj is None:
                obj = MODELS[section]()
                stored[section][record.name] = obj
            for field_name, value in record.values.items():
                setattr(obj, field_name, value)
            save_now = True
            if section == "configurations":
                obj.provider = providers[record.refs["provider"]]
                # The escalation target may come later in the document: set it once every record exists.
                wanted = record.refs["escalation"] or None
                current = obj.escalation.identifier if obj.escalation_id else None
                if wanted != current:
                    target = configurations.get(wanted) if wanted else None
                    if wanted is None or (target is not None and target.pk):
                        obj.escalation = target
                    else:
                        pending_escalations.append((obj, wanted))
                        # Only the escalation changes: one save, in the second pass, is enough.
                        save_now = obj.pk is None or any(key not in LINK_KEYS | {"escalation"} for key in changed)
                if obj.pk is not None and changed and all(key in LINK_KEYS for key in changed):
                    save_now = False  # only links change: they are rows of their own, written below
                pending_links.append((obj, record))
            if save_now:
                _save(obj)
            if section == "term_lists":
                wanted_scope = {configurations[name].pk for name in record.refs["configurations"]}
                if set(obj.configurations.values_list("pk", flat=True)) != wanted_scope:
                    obj.configurations.set(wanted_scope)
        if section == "configurations" and write:
            for obj, wanted in pending_escalations:
                obj.escalation = configurations[wanted]
                _save(obj)
            for obj, record in pending_links:
                for name in LINK_FIELDS:
                    set_links(obj, name, [configurations[n] for n in record.refs[name] if n])

    if not prune:
        return
    # PROTECT foreign keys point from configurations to providers (and term lists name configurations):
    # remove the records that refer before the records they refer to.
    for section in ("examples", "pattern_rules", "term_lists", "snippets", "configurations", "providers",
                    "mcp_servers"):
        if not doc.present(section):
            continue
        named = {r.name for r in doc.records(section)}
        if write and section == "configurations":
            # Escalation is PROTECT and a removed configuration may escalate to another removed one
            # (kept ones cannot: the references were checked), so unlink them before deleting.
            removed = [obj.pk for name, obj in stored[section].items() if name not in named]
            Configuration.objects.filter(pk__in=removed).update(escalation=None)
            # Judge and fallback links are PROTECT on their target, and may join two removed configurations.
            JudgeLink.objects.filter(configuration__in=removed).delete()
            FallbackLink.objects.filter(configuration__in=removed).delete()
        for name, obj in sorted(stored[section].items()):
            if name in named:
                continue
            report.removed.append(f"{section}:{name}")
            if write:
                _mark_history(obj)
                obj.delete()


def import_policy(document, *, prune: bool = False, dry_run: bool = False) -> ImportReport:
    """Upsert the document's records by identifier/name, atomically; with `prune`, remove the rest.

    Import is an administrator's act (SPEC §2.3): it writes every field, the admin-only ones
    included, so only an administrator's path may call it -- `manage.py import_policy` (shell access
    to the server) and `PUT /api/v1/policy` (administrator consumers only). It does not check the
    actor itself.

    Every error is collected before anything is written; `PolicyInvalid.errors` maps each path
    (`term_lists[2].forbidden[5]`) to its messages. A record is saved only when a value differs,
    so a second import of the same document changes nothing (no history row, no policy version).
    With `prune`, records of a section the document holds but does not name are deleted; a section
    the document leaves out is kept as stored. `dry_run` validates and reports, writing nothing.
    """
    report = ImportReport(dry_run=dry_run)
    with transaction.atomic():
        errors = Errors()
        doc = read_document(document, errors, prune=prune)
        if errors:
            raise PolicyInvalid(errors.by_path, structural=errors.structural)
        # One import is one policy edit: one version bump, however many records it writes.
        with one_bump():
            _apply(doc, report, prune=prune, write=not dry_run)
        if dry_run:
            transaction.set_rollback(True)
    return report
