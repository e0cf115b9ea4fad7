"""Stored values as a person reads them (issue 29): an outcome or a release's source is a code in the
database and the API, and a word in the reader's language on a page."""
from django import template
from django.utils.translation import gettext as _

register = template.Library()


@register.filter
def outcome_word(value):
    """allowed / allowed_with_hints / blocked in words; anything else as it is."""
    words = {"allowed": _("delivered"), "allowed_with_hints": _("delivered with hints"), "blocked": _("blocked")}
    return words.get(value, value)


@register.filter
def source_word(value):
    """Where a policy version came from: the admin's pages, the API, a policy file, a restored version."""
    words = {"admin": _("admin pages"), "api": _("API"), "import": _("policy file import"),
             "restore": _("restored version"), "draft": _("published draft")}
    return words.get(value, value)
