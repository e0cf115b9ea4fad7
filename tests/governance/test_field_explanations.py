"""Every field explained, German throughout (issue 11): each field of each Gavel model has a translated label
and a translated help text, each model a translated name, each choice a translated label. A failure names the
field: give it `verbose_name=_("…")` and `help_text=_("…")`, then translate both in
locale/de/LC_MESSAGES/django.po and compile it with msgfmt."""
import pytest
from django.apps import apps
from django.utils import translation
from django.utils.functional import Promise

GAVEL_APPS = ("governance", "snippets", "termlists", "judging")

# English texts that are the same word in German: translated, yet identical.
SAME_IN_GERMAN = frozenset({"normal", "URL"})

# Choices that name a language in that language (as Django's own language menu does), on purpose untranslated.
OWN_NAME_CHOICES = {("governance.UserProfile", "language")}


def gavel_models():
    # The simple-history Historical* models copy their fields from the models checked here.
    return [model for app in GAVEL_APPS for model in apps.get_app_config(app).get_models()
            if not model.__name__.startswith("Historical")]


def gavel_fields():
    return [(model, field) for model in gavel_models()
            for field in [*model._meta.fields, *model._meta.many_to_many] if field.name != "id"]


def german_problems(text) -> list[str]:
    """What is wrong with a text a German reader sees: not lazy (fixed at import, in one language), or not
    translated."""
    if not isinstance(text, Promise):
        return [f"{str(text)!r} is not a lazy translation (use gettext_lazy)"]
    english = str(text)
    with translation.override("de"):
        german = str(text)
    if german == english and english not in SAME_IN_GERMAN:
        return [f"{english!r} has no German translation"]
    return []


def test_the_check_covers_every_model():
    labels = {model._meta.label for model in gavel_models()}
    assert {"governance.Task", "governance.GovernanceEvent", "snippets.PatternRule", "termlists.TermList"} <= labels
    assert not any(label.split(".")[1].startswith("Historical") for label in labels)
    assert len(gavel_fields()) > 100


@pytest.mark.parametrize("model", gavel_models(), ids=lambda model: model._meta.label)
def test_every_model_has_a_translated_name(model):
    problems = german_problems(model._meta.verbose_name) + german_problems(model._meta.verbose_name_plural)
    assert problems == [], model._meta.label


@pytest.mark.parametrize("model, field", gavel_fields(),
                         ids=[f"{model._meta.label}.{field.name}" for model, field in gavel_fields()])
def test_every_field_has_a_translated_label_and_help_text(model, field):
    assert str(field.help_text).strip(), f"{model._meta.label}.{field.name} has no help text"
    # The admin renders a help text as HTML: "consumer:<name>" would show as "consumer:".
    assert "<" not in str(field.help_text), f"{model._meta.label}.{field.name}: write an example, not <placeholder>"
    problems = german_problems(field.verbose_name) + german_problems(field.help_text)
    assert problems == [], f"{model._meta.label}.{field.name}"


def test_every_choice_has_a_translated_label():
    problems = []
    for model, field in gavel_fields():
        if not field.choices or (model._meta.label, field.name) in OWN_NAME_CHOICES:
            continue
        for value, label in field.flatchoices:
            problems += [f"{model._meta.label}.{field.name}={value}: {p}" for p in german_problems(label)]
    assert problems == []


def test_an_untranslated_text_is_caught():
    from django.utils.translation import gettext_lazy

    assert german_problems("plain text") != []
    assert german_problems(gettext_lazy("a text no catalogue has")) != []
    assert german_problems(gettext_lazy("configuration")) == []
