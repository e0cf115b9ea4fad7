"""Nothing a user reads refers to the team's own documents: no "SPEC", no "§", no "../shared", no
"policy-example.yaml" in a template, a message of the catalogue (English or German), a model's help
text or verbose name, or the OpenAPI schema that Swagger shows. Those words mean nothing to a user;
the policy file's format is docs/policy.md and policies/example.yaml, shipped in the repository."""
import gettext
import json
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.utils import translation

INTERNAL = ("SPEC", "§", "../shared", "policy-example.yaml")
ROOT = Path(settings.BASE_DIR)


def leaks(text: str) -> list[str]:
    return [word for word in INTERNAL if word in text]


def test_no_template_refers_to_internal_documents():
    folders = [ROOT / "templates", *(Path(app.path) / "templates" for app in apps.get_app_configs()
                                     if Path(app.path).is_relative_to(ROOT))]
    found = {}
    for folder in folders:
        for path in folder.rglob("*.html"):
            words = leaks(path.read_text(encoding="utf-8"))
            if words:
                found[str(path.relative_to(ROOT))] = words
    assert found == {}
    assert any((ROOT / "templates").rglob("*.html"))  # the walk saw the templates


def test_no_message_of_the_catalogue_refers_to_internal_documents():
    catalogue = ROOT / "locale" / "de" / "LC_MESSAGES" / "django.mo"
    with catalogue.open("rb") as handle:
        messages = gettext.GNUTranslations(handle)._catalog
    assert len(messages) > 500  # the compiled catalogue, not an empty file
    found = {str(msgid)[:80]: words for msgid, msgstr in messages.items()
             if (words := leaks(str(msgid) + " " + str(msgstr)))}
    assert found == {}


@pytest.mark.parametrize("language", ["en", "de"])
def test_no_help_text_or_verbose_name_refers_to_internal_documents(language):
    found = {}
    with translation.override(language):
        for model in apps.get_models():
            if not Path(apps.get_app_config(model._meta.app_label).path).is_relative_to(ROOT):
                continue  # Django's and the libraries' own models
            texts = [str(model._meta.verbose_name), str(model._meta.verbose_name_plural)]
            for field in model._meta.get_fields():
                texts += [str(getattr(field, "help_text", "") or ""), str(getattr(field, "verbose_name", "") or "")]
            words = leaks(" ".join(texts))
            if words:
                found[model._meta.label] = words
    assert found == {}


def test_no_openapi_description_refers_to_internal_documents():
    from drf_spectacular.generators import SchemaGenerator

    schema = json.dumps(SchemaGenerator().get_schema(request=None, public=True), ensure_ascii=False)
    assert '"/api/v1/screenings"' in schema  # the whole schema, generated here
    assert leaks(schema) == []


def test_the_readme_and_the_user_docs_refer_to_no_internal_document():
    """Every doc, docs/decisions.md too (it is shipped and read); a German law's paragraph sign
    (AGG § 11, UWG §) in the editorial corpus is the law's, not ours."""
    import re

    found = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"\b(?:AGG|UWG|BGB|StGB) §", "", path.read_text(encoding="utf-8"))
        words = leaks(text)
        if words:
            found[path.name] = words
    assert found == {}
