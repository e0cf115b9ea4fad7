"""The request serializers' building blocks: JSON-typed fields taken as sent, and StrictSerializer,
which refuses unknown keys and builds its field tree once per class and thread (issue 30)."""
import copy
import threading

from django.utils.functional import cached_property
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from governance.api.validators import ProhibitSurrogates


class JSONTyped:
    """A JSON value of the wrong type is refused, never coerced: 42 is not "42", "yes" is not true."""

    json_type: tuple = (str,)
    type_message = _("Give a string.")

    def to_internal_value(self, data):
        if not isinstance(data, self.json_type):
            raise serializers.ValidationError(self.type_message)
        return super().to_internal_value(data)


class AsGiven:
    """A string is taken as sent: never trimmed, so what the schema allows is exactly what is accepted
    (a trimmed " " would be refused as blank although the schema lets it through)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(*args, **kwargs)
        self.validators = [ProhibitSurrogates() if type(v) is ProhibitSurrogateCharactersValidator else v
                           for v in self.validators]


class String(JSONTyped, AsGiven, serializers.CharField):
    pass


class Slug(JSONTyped, AsGiven, serializers.SlugField):
    pass


class Pattern(JSONTyped, AsGiven, serializers.RegexField):
    pass


class Choice(JSONTyped, serializers.ChoiceField):
    pass


class Boolean(JSONTyped, serializers.BooleanField):
    json_type = (bool,)
    type_message = _("Give true or false.")


_field_trees = threading.local()  # a top-level StrictSerializer class → its bound fields, per thread


class StrictSerializer(serializers.Serializer):
    """Refuse keys the endpoint does not know, instead of silently dropping them."""

    @cached_property
    def fields(self):
        """The bound fields. DRF builds a request serializer's whole field tree again for each request
        (nested serializers deep-copied, their children built again): about 80 % of reading a chat
        request. A field keeps no state of the data it validates, so a top-level serializer reuses its
        class's tree, kept per thread (two requests in one process never share one); only the top
        fields' parent is set to this instance, which is all `root` and `context` read. A nested
        serializer is part of its root's tree and builds its fields once with it."""
        if getattr(self, "parent", None) is not None:
            return super().fields
        trees = _field_trees.__dict__
        tree = trees.get(type(self))
        if tree is None:
            tree = trees[type(self)] = super().fields
        else:
            for field in tree.values():
                field.parent = self
        return tree

    def get_fields(self):
        # DRF deep-copies every declared field for each instance, which builds each field again
        # (a quarter of a screening's time in the load benchmark). A field without children keeps
        # nothing per request but its binding, so a shallow copy is enough; nested serializers and
        # fields with a child (or a child relation) are still copied deeply, since their children are
        # bound to them.
        return {
            name: (copy.deepcopy(field) if isinstance(field, serializers.BaseSerializer)
                   or hasattr(field, "child") or hasattr(field, "child_relation") else copy.copy(field))
            for name, field in self._declared_fields.items()
        }

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": [_("The body must be a JSON object.")]})
        unknown = sorted(set(data) - set(self.fields))
        errors = {key: [_("Unknown field.")] for key in unknown}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            errors = {**exc.detail, **errors}
            raise serializers.ValidationError(errors) from exc
        if errors:
            raise serializers.ValidationError(errors)
        return value
