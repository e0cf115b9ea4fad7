"""Writes of policy records (providers, configurations) from plain data.

`save_record` is the service layer of SPEC §2.3: the admin saves through it, and
any future write path by a person must too, so the admin-only fields are refused
to a non-administrator in one place. A policy import is an administrator's act by
definition (only `manage.py import_policy` and administrator consumers reach it)
and writes its records directly (governance/policy.py).
"""
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models, transaction
from django.utils.translation import gettext as _

from governance.models import Configuration
from governance.permissions import admin_only_fields, require_admin_for
from termlists.models import TermList

# How plain data names a related record: by its slug, as the policy file does.
NATURAL_KEYS = {
    "governance.provider": "name",
    "governance.configuration": "identifier",
}


def save_record(actor, instance_or_model, changes: dict):
    """Create (given a model) or update (given an instance) a record from plain data; return it.

    Runs full_clean before saving. Raises PermissionDenied when `actor` is not an
    administrator and the write would change an admin-only field, ValidationError
    when the data is invalid; nothing is written in either case.
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

        errors = _apply(instance, changes)
        try:
            # After full_clean the values are normalised (tags lower-cased,
            # numbers parsed), so re-sending a stored value is not a change.
            instance.full_clean()
        except ValidationError as exc:
            errors = exc.update_error_dict(errors)

        changed = set(changed_admin_only_fields(baseline, instance))
        # A value that could not even be applied counts as an attempted change.
        changed |= set(errors) & set(admin_only_fields(model))
        # The permission is decided before validity: a refused write says so,
        # whatever else is wrong with it.
        require_admin_for(actor, model, changed)
        if errors:
            raise ValidationError(errors)
        instance.save()
    return instance


def changed_admin_only_fields(before, after) -> list[str]:
    """The admin-only fields whose value differs between two instances of one model."""
    names = []
    for name in admin_only_fields(type(after)):
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
    References among the set go with it. The table is read once, however many configurations are named.
    """
    targets = sorted(configurations, key=lambda configuration: configuration.identifier)
    pks = {target.pk for target in targets}
    blockers = []
    others = Configuration.objects.exclude(pk__in=pks).order_by("identifier")
    for other, fallbacks, judges, escalation_id in others.values_list("identifier", "fallbacks", "rule_judges",
                                                                        "escalation_id"):
        for target in targets:
            names = {"other": other, "target": target.identifier}
            if target.identifier in fallbacks:
                blockers.append(_("Configuration “%(other)s” names “%(target)s” as a fallback.") % names)
            if target.identifier in judges:
                blockers.append(_("Configuration “%(other)s” names “%(target)s” as a rule judge.") % names)
            if escalation_id == target.pk:
                blockers.append(_("Configuration “%(other)s” escalates to “%(target)s”.") % names)
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
