"""Messages of the term-list admin that a person reads, in one place, translatable (SPEC §1).

The pipeline's own term-list messages live with the others in governance/messages.py.
"""
from django.utils.translation import gettext_lazy as _

from termlists import matcher

SCOPE_REQUIRED = _("Name at least one configuration: a term list without one would apply to no call.")
TERM_LINE_PROBLEM = _("line %(no)d: %(problem)s")

# The matcher is pure (no Django) and says why a term is refused in plain English; these are the
# same sentences as msgids, so the admin and the policy import can show them translated.
TERM_PROBLEMS = {
    matcher.MSG_ONLY_STAR_OR_SPACE: _("A term must hold more than '*' and white space."),
    matcher.MSG_STAR_NOT_AT_END: _("'*' is only allowed at the end of a term."),
    matcher.MSG_EMPTY_SUGGESTION: _("Write the suggestion after '=>', or remove '=>'."),
    matcher.MSG_SUGGESTION_NOT_HERE: _("Only forbidden terms carry a suggestion ('=>')."),
}

TRY_TITLE = _("Try “%(name)s”")
TRY_NOTHING_FOUND = _("No forbidden term occurs in this text.")
TRY_FORBIDDEN_FOUND = _("Forbidden terms found: %(terms)s.")
TRY_REQUIRED_MISSING = _("Required terms missing: %(terms)s.")
TRY_REQUIRED_PRESENT = _("Every required term occurs in this text.")
TRY_NOT_FINISHED = _(
    "This text has %(words)d words; required terms are only demanded from finished text "
    "(at least %(minimum)d words)."
)
TRY_UNSAVED = _("The box checks the saved list; save your changes first to try them.")


def term_problem(problem: str) -> str:
    """The matcher's reason for refusing a term, in the active language."""
    return str(TERM_PROBLEMS.get(problem, problem))
LIST_TOO_BIG = _(
    "This list is %(size)s; a term list holds at most %(limit)s per field (GAVEL_TERM_LIST_MAX_BYTES). Split it "
    "into two lists."
)
DUPLICATES_REMOVED = _("%(field)s: %(count)d repeated term(s) removed; each term is kept once.")
