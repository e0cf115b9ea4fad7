"""Editors teach the policy (SPEC §10.2): right, wrong and missed on hints."""
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.models.work import Task


class HintFeedback(models.Model):
    """An editor's verdict on what the policy found in one task (SPEC §10.2): a hint right or wrong, or a
    rule or term the policy missed. Facts only — which check, list and term, snippet and rule number, or
    pattern identifier — never a passage or any other text, so it outlives the task purge.

    One row per task and finding: changing one's mind updates it, until the task's review is final.
    """

    class Verdict(models.TextChoices):
        RIGHT = "right", _("right")
        WRONG = "wrong", _("wrong")
        MISSED = "missed", _("missed")

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="feedback", verbose_name=_("task"),
                             help_text=_("The reviewed task the feedback is about."))
    check_name = models.CharField(_("check"), max_length=20, db_column="check",
                                  help_text=_("term_list, rules_judge, pattern_rules, citations or field."))
    list_name = models.CharField(_("list"), max_length=200, blank=True, default="",
                                 help_text=_("The term list, for a term."))
    term = models.CharField(_("term"), max_length=500, blank=True, default="",
                            help_text=_("The term as the list writes it."))
    snippet = models.CharField(_("snippet"), max_length=100, blank=True, default="",
                               help_text=_("The snippet of a judged rule."))
    rule = models.CharField(_("rule"), max_length=200, blank=True, default="",
                            help_text=_("A judged rule's line number in its snippet, or a pattern rule's identifier."))
    verdict = models.CharField(_("verdict"), max_length=8, choices=Verdict.choices,
                               help_text=_("right or wrong for a hint; missed for what the policy did not find."))
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+", verbose_name=_("editor"), help_text=_("The editor who gave it."))
    at = models.DateTimeField(_("time"), default=timezone.now, db_index=True, help_text=_("When it was given."))

    class Meta:
        ordering = ["-at"]
        verbose_name = _("hint feedback")
        verbose_name_plural = _("hint feedback")
        constraints = [
            models.UniqueConstraint(fields=["task", "check_name", "list_name", "term", "snippet", "rule"],
                                    name="one_feedback_per_task_finding"),
        ]

    def __str__(self):
        return (f"{self.get_verdict_display()}: {self.check_name} {self.list_name or self.snippet} "
                f"{self.term or self.rule}")

    def finding(self) -> dict:
        """The finding in the policy file's terms (an example's `findings` / `absent` entry)."""
        return finding_of(self.check_name, list_name=self.list_name, term=self.term, snippet=self.snippet,
                          rule=self.rule)


def finding_of(check: str, *, list_name: str = "", term: str = "", snippet: str = "", rule: str = "") -> dict:
    """One finding as the policy file writes it: `{check: term_list, list, term}`, `{check: rules_judge,
    snippet, rule}` (rule: the line number), `{check: pattern_rules, rule}`, `{check: citations, rule}`."""
    if check == "term_list":
        return {"check": check, "list": list_name, "term": term}
    if check == "rules_judge":
        return {"check": check, "snippet": snippet, "rule": int(rule) if str(rule).isdigit() else rule}
    if check in ("pattern_rules", "citations"):
        return {"check": check, "rule": rule}
    return {"check": check}

