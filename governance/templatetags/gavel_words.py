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


@register.filter
def replay_change_word(value):
    """A replay's kind of change ("allowed→blocked", "new_hints", …) in words."""
    words = {"allowed→blocked": _("delivered → blocked"), "blocked→allowed": _("blocked → delivered"),
             "new_hints": _("new hints"), "lost_hints": _("hints gone")}
    if value in words:
        return words[value]
    if isinstance(value, str) and "→" in value:
        return " → ".join(str(outcome_word(part)) for part in value.split("→"))
    return value


@register.filter
def example_state_word(value):
    """An example's result under a policy: passed, failed, error, absent (not in that policy)."""
    words = {"passed": _("passed"), "failed": _("failed"), "error": _("error"), "absent": _("not in this policy")}
    return words.get(value, value)
