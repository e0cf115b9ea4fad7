"""Messages of the rule-set judges that `governance.messages` does not hold yet, translatable.

The common ones (a violated rule, "not checked") stay in `governance.messages`; these are
the judging-only additions. Render them with `governance.messages.render`.
"""
from django.utils.translation import gettext_lazy as _

# Appended to a "not checked" hint when block mode let the text through (rule_default: allow).
RULES_FAILED_OPEN = _("An administrator chose to deliver texts whose rules could not be checked.")

# Configuration admin: judges that can never run (SPEC §7).
WARN_ZONE = _(
    "Judge %(judge)s can never judge texts of %(configuration)s: its zone (%(judge_zone)s, counting its "
    "fallbacks) is less trusted than %(text_zone)s, where %(configuration)s writes."
)
WARN_DATA_CLASS = _(
    "Judge %(judge)s can never judge the rules of %(configuration)s: its zone (%(judge_zone)s, counting its "
    "fallbacks) does not admit the data class %(data_class)s of snippet %(snippet)s."
)
WARN_NO_JUDGES = _("%(configuration)s checks rules (mode %(mode)s) but names no judge, so its rules are never checked.")

