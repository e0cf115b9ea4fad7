"""What a person reads when a policy document is refused (tests assert on these), and the error itself."""
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy

from governance.screening.text import MAX_JSON_DEPTH

MSG_DOCUMENT = gettext_lazy("A policy document is a mapping with the sections: %(sections)s.")
MSG_NOT_MAPPING = gettext_lazy("Give a mapping of keys to values.")
MSG_NOT_LIST = gettext_lazy("Give a list.")
MSG_UNKNOWN_KEY = gettext_lazy("Unknown key.")
MSG_REQUIRED = gettext_lazy("This key is required.")
MSG_NOT_STRING = gettext_lazy("Give a string (quote it if YAML read it as a number, date or boolean).")
MSG_EMPTY = gettext_lazy("This may not be empty.")
MSG_NOT_INTEGER = gettext_lazy("Give a whole number.")
MSG_NOT_NUMBER = gettext_lazy("Give a number.")
MSG_NOT_BOOLEAN = gettext_lazy("Give true or false.")
MSG_AT_LEAST = gettext_lazy("Give at least %(minimum)s.")
MSG_RANGE = gettext_lazy("Give a number from %(minimum)s to %(maximum)s.")
MSG_CHOICE = gettext_lazy("Choose one of: %(choices)s.")
MSG_ENV_NAME = gettext_lazy("Give the name of an environment variable, not a key.")
MSG_SURROUNDING_SPACE = gettext_lazy("A name has no white space at its start or end.")
MSG_LANGUAGE = gettext_lazy("Give a language code such as de or de-AT.")
MSG_DUPLICATE = gettext_lazy("Named twice in this document (first at %(path)s).")
MSG_LISTED_TWICE = gettext_lazy("Listed twice.")
MSG_UNKNOWN_PROVIDER = gettext_lazy("Unknown provider: %(name)s.")
MSG_UNKNOWN_CONFIGURATION = gettext_lazy("Unknown configuration: %(name)s.")
MSG_SELF_REFERENCE = gettext_lazy("A configuration cannot name itself.")
MSG_NO_CONFIGURATION = gettext_lazy("A term list needs at least one configuration.")
MSG_TERM_LINE_BREAK = gettext_lazy("One term per item: a term holds no line break.")
MSG_PRUNE_PROVIDER_IN_USE = gettext_lazy(
    "Pruning would remove provider %(provider)s, which configuration %(configuration)s still uses "
    "(this document has no configurations section, so configurations are kept)."
)
MSG_PRUNE_ORPHAN_LIST = gettext_lazy(
    "Pruning would leave term list “%(list)s” without a configuration "
    "(this document has no term_lists section, so term lists are kept)."
)
# The screening API's own words and bound for tool arguments (an example is screened as a call would be).
MSG_JSON_TOO_DEEP = format_lazy(gettext_lazy("The JSON is nested more than {} levels deep."), MAX_JSON_DEPTH)
MSG_TEXT_OR_TOOL_CALLS = gettext_lazy("An example needs a text or tool calls.")
MSG_NOT_DATETIME = gettext_lazy("Give a date and time such as 2026-05-04T09:30:00+00:00.")
MSG_NOT_UUID = gettext_lazy("Give a task id (a UUID).")
MSG_UNKNOWN_LIST = gettext_lazy("Unknown term list: %(name)s.")
MSG_UNKNOWN_TERM = gettext_lazy("Term list %(list)s has no term %(term)s.")
MSG_UNKNOWN_SNIPPET = gettext_lazy("Unknown snippet: %(name)s.")
MSG_UNKNOWN_SNIPPET_LINE = gettext_lazy("Snippet %(snippet)s has no rule on line %(line)s.")
MSG_UNKNOWN_PATTERN_RULE = gettext_lazy("Unknown pattern rule: %(name)s.")


class PolicyInvalid(Exception):
    """The document has errors; `errors` maps each path in the document to its messages."""

    def __init__(self, errors: dict, *, structural: bool = True):
        super().__init__("policy document has errors: " + "; ".join(f"{p}: {' '.join(m)}" for p, m in errors.items()))
        self.errors = errors
        # False when the document keeps the policy schema and only what it says cannot be done (issue 41).
        self.structural = structural


# The policy schema's own words (governance/policy/schema.py), for a structure the readers above do not name.
MSG_SCHEMA = gettext_lazy("Does not fit the policy schema: %(problem)s")
