"""Messages about pattern rules that a person reads, in one place, translatable (SPEC §1).

snippets/patterns.py is pure and says what is wrong with a rule in plain English; the sentences
below are the same msgids, so the admin, the policy import and `validate_rules` show them translated.
"""
from django.utils.translation import gettext_lazy as _

from snippets import patterns

FAULTS = {
    patterns.MSG_WRONG_NOT_MATCHED: _("wrong sample %(n)d is not matched"),
    patterns.MSG_CORRECT_FLAGGED: _("correct sample %(n)d is flagged"),
    patterns.MSG_SATISFIED_CLEARS_WRONG: _("the satisfied pattern clears wrong sample %(n)d"),
    patterns.MSG_WRONG_TIMEOUT: _("wrong sample %(n)d takes longer than the time bound"),
    patterns.MSG_CORRECT_TIMEOUT: _("correct sample %(n)d takes longer than the time bound"),
}
PATTERN_INVALID = _("Not a valid regular expression: %(error)s")
SATISFIED_WITHOUT_VIOLATION = _("A satisfied pattern needs a violation pattern.")
SAMPLES_REQUIRED = _("Give at least one sample: a pattern is tested against its own samples.")
REASON_REQUIRED = _("Say why no machine check exists: a rule without a violation pattern needs a reason.")
SAMPLE_EMPTY = _("sample %(n)d is empty")
SAMPLE_LINE_BREAK = _("sample %(n)d holds a line break: one line per sample")
STATEMENT_ONE_LINE = _("The statement is one line.")

# The pipeline's messages (hints, blocks). Rendered from facts in the reader's language.
PATTERN_VIOLATION = _("Pattern rule %(identifier)s (“%(statement)s”) is violated by: “%(passage)s”.")
PATTERN_VIOLATION_STORED = _("Pattern rule %(identifier)s (“%(statement)s”) is violated.")
UNKNOWN_CITATION = _("The text cites [rule:%(identifier)s], which is no active pattern rule.")
PATTERN_NOT_CHECKED = _("Pattern rule %(identifier)s (“%(statement)s”) was not checked: %(reason)s.")
PATTERN_NOT_CHECKED_BLOCK = _(
    "Pattern rule %(identifier)s (“%(statement)s”) could not be checked (%(reason)s), so the text was stopped."
)
PATTERN_REASONS = {
    "timeout": _("the pattern took longer than its time bound"),
    "error": _("the pattern could not be evaluated"),
}


def fault_message(fault) -> str:
    """A Fault of snippets.patterns in the active language."""
    return str(FAULTS.get(fault.template, fault.template)) % {"n": fault.sample}
