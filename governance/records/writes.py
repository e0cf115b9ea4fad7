"""Writes of policy records (providers, configurations) from plain data.

`save_record` is the service layer of SPEC §2.3: the admin saves through it, and
any future write path by a person must too, so the admin-only fields are refused
to a non-administrator in one place. A policy import is an administrator's act by
definition (only `manage.py import_policy` and administrator consumers reach it)
and writes its records directly (governance/policy/).
"""
from django.core.exceptions import NON_FIELD_ERRORS, FieldDoesNotExist, PermissionDenied, ValidationError
from django.db import models, transaction
from django.utils.translation import gettext as _

from governance.records import links
from governance.models import LINK_FIELDS, Configuration, FallbackLink, JudgeLink, Provider, set_links
from governance.records.permissions import admin_only_fields, is_administrator, require_admin_for
from termlists.models import TermList

# How plain data names a related record: by its slug, as the policy file does.
NATURAL_KEYS = {
    "governance.provider": "name",
    "governance.configuration": "identifier",
}


def save_record(actor, instance_or_model, changes: dict):
    """Create (given a model) or update (given an instance) a record from plain data; return it.

    Runs full_clean before saving. Raises PermissionDenied when `actor` is not an
    administrator and the write would change an admin-only field, or would change how
    another configuration's judges, zones or fallbacks behave (`links.configuration_effects`,
    `links.provider_effects`); ValidationError when the data is invalid (a refused judge or
    fallback link included); nothing is written in either case. A configuration's
    `fallbacks` and `rule_judges` are given as ordered lists of configurations or identifiers.
    """
    if isinstance(instance_or_model, type) and issubclass(instance_or_model, models.Model):
        instance = instance_or_model()
    else:
        instance = instance_or_model
    model = type(instance)

    with transaction.atomic():
        stored = None
        if instance.pk is not None:
            # Compare with the row as stored now, never with what the caller
            # loaded earlier; the lock keeps the comparison true until the save.
            stored = model._default_manager.select_for_update().filter(pk=instance.pk).first()
        baseline = stored if stored is not None else model()

        plain = {name: value for name, value in changes.items() if name not in LINK_FIELDS}
        errors = _apply(instance, plain)
        wanted_links, link_errors = _resolve_links(model, changes)
        errors.update(link_errors)
        if "fallbacks" in wanted_links:
            instance._pending_fallbacks = [c.identifier for c in wanted_links["fallbacks"]]
        try:
            # After full_clean the values are normalised (tags lower-cased,
            # numbers parsed), so re-sending a stored value is not a change.
            instance.full_clean()
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)

        changed = set(changed_admin_only_fields(baseline, instance))
        for name, targets in wanted_links.items():
            if [t.pk for t in targets] != [t.pk for t in _stored_links(stored, name)]:
                changed.add(name)
        # A value that could not even be applied counts as an attempted change.
        changed |= set(errors) & set(admin_only_fields(model, stored))
        # The permission is decided before validity: a refused write says so,
        # whatever else is wrong with it.
        require_admin_for(actor, model, changed, stored)
        if not is_administrator(actor):
            refuse_effects_on_others(stored, instance, wanted_links)
        if not errors:
            for field, messages in link_errors_for(stored, instance, wanted_links).items():
                errors.setdefault(field, []).extend(messages)
        if errors:
            raise ValidationError(errors)
        instance.save()
        for name, targets in wanted_links.items():
            set_links(instance, name, targets)
        instance.__dict__.pop("_pending_fallbacks", None)
    return instance


def _stored_links(stored, name: str) -> list:
    if stored is None:
        return []
    return stored.ordered_judges() if name == "rule_judges" else stored.ordered_fallbacks()


def _resolve_links(model, changes: dict) -> tuple[dict[str, list], dict[str, list]]:
    """The judge and fallback lists in `changes` as configurations, and errors naming the unknown ones."""
    wanted: dict[str, list] = {}
    errors: dict[str, list] = {}
    if model is not Configuration:
        return wanted, errors
    for name in LINK_FIELDS:
        if name not in changes:
            continue
        values = changes[name] or []
        if isinstance(values, str) or not isinstance(values, (list, tuple)):
            errors[name] = [ValidationError(_("Enter a list of configuration identifiers."), code="invalid")]
            continue
        keys = [v.identifier if isinstance(v, Configuration) else v for v in values]
        found = {c.identifier: c for c in Configuration.objects.select_related("provider").filter(
            identifier__in=[k for k in keys if isinstance(k, str)])}
        missing = [str(k) for k in keys if k not in found]
        if missing:
            errors[name] = [ValidationError(_("Unknown configuration: %(names)s") % {"names": ", ".join(missing)},
                                            code="unknown_configuration")]
            continue
        wanted[name] = [found[k] for k in keys]
    return wanted, errors


def link_errors_for(stored, instance, wanted_links: dict) -> dict[str, list]:
    """The refused links (`links.link_problems`) this save would add, by form field."""
    if isinstance(instance, Provider):
        return _provider_link_errors(stored, instance)
    if not isinstance(instance, Configuration):
        return {}
    graph = links.graph_from_database()
    current = graph.get(stored.identifier) if stored is not None else None
    node = links.Node(
        kind=instance.provider.kind if instance.provider_id else "chat",
        mode=instance.rule_mode,
        judges=[c.identifier for c in wanted_links["rule_judges"]] if "rule_judges" in wanted_links
        else list(current.judges if current else []),
        fallbacks=[c.identifier for c in wanted_links["fallbacks"]] if "fallbacks" in wanted_links
        else list(current.fallbacks if current else []),
    )
    errors: dict[str, list] = {}
    for problem in links.new_problems(stored.identifier if stored is not None else None, instance.identifier,
                                      node, graph):
        if problem.source == instance.identifier:
            if problem.code == "fallback_kind":
                continue  # the model's own check (governance.models.families) reports it at the same field
            field = problem.field
        elif problem.code in ("fallback_loop", "mutual_judges"):
            continue  # the same pair, reported on this configuration's own list
        else:
            field = "provider" if problem.code == "fallback_kind" else NON_FIELD_ERRORS
        errors.setdefault(field, []).append(ValidationError(problem.message, code=problem.code))
    return errors


def _provider_link_errors(stored, provider) -> dict[str, list]:
    """A provider's new kind must not make a fallback of another kind (SPEC §6.4: families never mix)."""
    if stored is None or stored.kind == provider.kind:
        return {}
    before = links.graph_from_database()
    after = {name: links.Node(n.kind, n.mode, n.judges, n.fallbacks) for name, n in before.items()}
    mine = set(Configuration.objects.filter(provider=stored).values_list("identifier", flat=True))
    for name in mine:
        after[name].kind = provider.kind
    old = {(p.source, p.field, p.target, p.code) for p in links.link_problems(before)}
    # A configuration on this provider with a fallback of the other kind is Provider.clean's (governance.models.families);
    # here: the configurations elsewhere whose fallbacks the new kind would mix.
    found = [p for p in links.link_problems(after, only=mine) if (p.source, p.field, p.target, p.code) not in old
             and p.source not in mine]
    return {"kind": [ValidationError(p.message, code=p.code) for p in found]} if found else {}


def effects_on_others(stored, instance, wanted_links: dict | None = None) -> list[tuple[str, str]]:
    """What saving `instance` over `stored` would change for other configurations (empty for a new record)."""
    if stored is None:
        return []
    if isinstance(instance, Configuration):
        proposed = {"identifier": instance.identifier, "provider": instance.provider if instance.provider_id else None}
        proposed.update(wanted_links or {})
        return links.configuration_effects(stored, proposed)
    if isinstance(instance, Provider):
        return links.provider_effects(stored, {name: getattr(instance, name) for name in links.PROVIDER_EFFECT_FIELDS})
    return []


def refuse_effects_on_others(stored, instance, wanted_links: dict | None = None) -> None:
    """SPEC §2.3 by consequence: a non-administrator may not change how another configuration is judged."""
    effects = effects_on_others(stored, instance, wanted_links)
    if effects:
        raise PermissionDenied(links.refusal_text(effects))


def changed_admin_only_fields(before, after) -> list[str]:
    """The admin-only fields whose value differs between two instances of one model."""
    names = []
    for name in admin_only_fields(type(after), before if before.pk is not None else None):
        if name in LINK_FIELDS:
            continue  # relations, compared by save_record from the lists it was given
        attname = after._meta.get_field(name).attname
        if getattr(before, attname) != getattr(after, attname):
            names.append(name)
    return names


def _apply(instance, changes: dict) -> dict[str, list]:
    """Set each named field from plain data; return {field: [errors]} for what could not be set."""
    errors: dict[str, list] = {}
    opts = instance._meta
    for name, value in changes.items():
        try:
            field = opts.get_field(name)
        except FieldDoesNotExist:
            errors[name] = [ValidationError(_("Unknown field."), code="unknown_field")]
            continue
        if not field.concrete or field.many_to_many or field.primary_key or not field.editable:
            errors[name] = [ValidationError(_("This field cannot be written here."), code="not_writable")]
            continue
        if field.many_to_one:
            try:
                setattr(instance, field.name, _related(field, value))
            except ValidationError as exc:
                errors[name] = exc.error_list
            continue
        setattr(instance, field.attname, value)
    return errors


def _related(field, value):
    """Resolve a foreign key given as a record, its slug, its primary key, or None."""
    target = field.related_model
    if value is None or value == "":
        return None
    if isinstance(value, target):
        return value
    key = NATURAL_KEYS.get(target._meta.label_lower, "pk")
    lookup = {"pk": value} if isinstance(value, int) and not isinstance(value, bool) else {key: value}
    try:
        return target._default_manager.get(**lookup)
    except (target.DoesNotExist, ValueError, TypeError):
        raise ValidationError(
            _("Unknown %(record)s: %(value)s") % {"record": target._meta.verbose_name, "value": value},
            code="unknown_record",
        ) from None


def configuration_delete_blockers(configurations) -> list[str]:
    """What deleting these configurations together would change behind an administrator's back; empty when
    they may go.

    A configuration outside the set naming one inside as a fallback, a rule judge or its escalation
    (admin-only, SPEC §2.3), or a term list left without scope (refused, SPEC §2.5): each is one sentence.
    References among the set go with it. Three queries, however many configurations are named.
    """
    targets = sorted(configurations, key=lambda configuration: configuration.identifier)
    pks = {target.pk for target in targets}
    blockers = []
    sentences = {
        "fallback": _("Configuration “%(other)s” names “%(target)s” as a fallback."),
        "judge": _("Configuration “%(other)s” names “%(target)s” as a rule judge."),
        "escalation": _("Configuration “%(other)s” escalates to “%(target)s”."),
    }
    found = [(other, "fallback", target) for other, target in FallbackLink.objects.filter(fallback__in=pks)
             .exclude(configuration__in=pks).values_list("configuration__identifier", "fallback__identifier")]
    found += [(other, "judge", target) for other, target in JudgeLink.objects.filter(judge__in=pks)
              .exclude(configuration__in=pks).values_list("configuration__identifier", "judge__identifier")]
    found += [(other, "escalation", target) for other, target in Configuration.objects.filter(escalation__in=pks)
              .exclude(pk__in=pks).values_list("identifier", "escalation__identifier")]
    order = {"fallback": 0, "judge": 1, "escalation": 2}
    for other, role, target in sorted(found, key=lambda f: (f[0], f[2], order[f[1]])):
        blockers.append(sentences[role] % {"other": other, "target": target})
    touched = TermList.objects.filter(configurations__in=pks).distinct().order_by("name")
    for term_list in touched.prefetch_related("configurations"):
        scope = term_list.configurations.all()
        if any(configuration.pk not in pks for configuration in scope):
            continue  # it keeps a configuration outside the set
        scope = sorted(configuration.identifier for configuration in scope)
        if len(scope) == 1:
            blockers.append(_("Term list “%(list)s” applies to “%(target)s” alone.")
                            % {"list": term_list.name, "target": scope[0]})
        else:
            blockers.append(_("Term list “%(list)s” applies only to configurations deleted here: %(targets)s.")
                            % {"list": term_list.name, "targets": ", ".join(scope)})
    return blockers
