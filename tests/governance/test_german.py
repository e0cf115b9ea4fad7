"""German throughout (issue 11): the catalogue is complete, and a walk over every admin page in German finds no
English string of Gavel's catalogue. A failure names the page and the string: translate it in
locale/de/LC_MESSAGES/django.po (run `manage.py makemessages -l de`, then compile with msgfmt)."""
import os
import re
from html import unescape
from pathlib import Path

import pytest
from django.contrib import admin
from django.urls import NoReverseMatch, reverse

from governance.models import Configuration, GovernanceEvent, set_links
from snippets.models import Snippet
from termlists.models import TermList
from tests.governance.test_admin import desk, gateway, judges, superuser, superuser_client  # noqa: F401

CATALOGUE = Path(__file__).resolve().parents[2] / "locale" / "de" / "LC_MESSAGES" / "django.po"
GAVEL_APPS = {"governance", "snippets", "termlists", "judging"}


def catalogue() -> list[tuple[str, str | None, list[str], bool]]:
    """(msgid, msgid_plural, msgstrs, fuzzy) for every entry of the German catalogue."""
    import json

    entries = []
    for block in CATALOGUE.read_text(encoding="utf-8").split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line.startswith("#"):
                key = None
                continue
            match = re.match(r"^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d\])?) (\".*\")$", line)
            if match:
                key = match.group(1)
                fields[key] = json.loads(match.group(2))
            elif line.startswith('"') and key:
                fields[key] += json.loads(line)
        if fields.get("msgid"):
            strs = [value for name, value in fields.items() if name.startswith("msgstr")]
            entries.append((fields["msgid"], fields.get("msgid_plural"), strs, "fuzzy" in block.split("msgid")[0]))
    return entries


def test_every_catalogue_string_is_translated():
    untranslated = [msgid for msgid, _plural, strs, fuzzy in catalogue() if fuzzy or not all(strs)]
    assert untranslated == [], "translate these in locale/de/LC_MESSAGES/django.po"


def test_every_string_the_code_marks_is_in_the_catalogue(tmp_path):
    """makemessages over a copy of Gavel's sources: a string marked for translation in the code or a
    template but missing from the catalogue would come out untranslated (or fuzzy, guessed from another)."""
    import shutil
    import subprocess
    import sys

    root = CATALOGUE.parents[3]
    for name in ("manage.py", "governance", "judging", "snippets", "termlists", "templates", "locale"):
        source = root / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    subprocess.run([sys.executable, "manage.py", "makemessages", "-l", "de", "--no-obsolete"], cwd=tmp_path,
                   env={**os.environ, "GAVEL_TESTING": "1"}, check=True, capture_output=True)
    made = tmp_path / "locale" / "de" / "LC_MESSAGES" / "django.po"
    missing = subprocess.run(["msgattrib", "--untranslated", "--no-location", str(made)], check=True,
                             capture_output=True, text=True).stdout
    guessed = subprocess.run(["msgattrib", "--only-fuzzy", "--no-location", str(made)], check=True,
                             capture_output=True, text=True).stdout
    # Every entry but the header (the one whose msgstr holds Project-Id-Version) is a string to translate.
    strings = [block for block in (missing + guessed).split("\n\n")
               if "msgid " in block and "Project-Id-Version" not in block]
    assert strings == [], "add these to locale/de/LC_MESSAGES/django.po"


def english_probes() -> list[str]:
    """Catalogue strings that read as English on a page: two words or more, different in German. A string
    with placeholders is probed by its longest literal part."""
    probes = set()
    for msgid, _plural, strs, _fuzzy in catalogue():
        if msgid in strs:
            continue
        parts = re.split(r"%\(\w+\)[sd]|%[sd]", msgid)
        literal = max(parts, key=len).strip(" .,:;")
        if len(literal.split()) >= 2 and len(literal) >= 12:
            probes.add(literal)
    return sorted(probes)


@pytest.fixture
def everything(desk, judges):
    newsroom = Configuration.objects.create(identifier="newsroom", provider=desk.provider, model="m",
                                            rule_mode="report", rule_tags=["style"])
    set_links(newsroom, "rule_judges", [judges[0]])
    Snippet.objects.create(identifier="house", name="House style", tags=["style"], body="Be brief.")
    term_list = TermList.objects.create(name="Brand words", forbidden="Kunde")
    term_list.configurations.set([desk])
    GovernanceEvent.objects.create(correlation_id="c1", decision="blocked", check_name="term_list",
                                   configuration="desk", mode="block", detail={"list": "Brand words",
                                                                               "terms": ["Kunde"]})
    return term_list


def admin_pages() -> list[str]:
    """Every changelist, add page and one change page of each Gavel model, the index, and Gavel's own pages."""
    pages = [reverse("admin:index"), reverse("gavel_policy_import"), reverse("gavel_evidence_verify"),
             reverse("gavel_evidence_export")]
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        if opts.app_label not in GAVEL_APPS:
            continue
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        try:
            pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_add"))
        except NoReverseMatch:
            pass
        first = model.objects.order_by("pk").first()
        if first is not None:
            pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[first.pk]))
    return pages


def visible_text(html: str) -> str:
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_a_walk_over_every_admin_page_in_german_finds_no_english_gavel_string(superuser_client, everything):
    probes = english_probes()
    assert len(probes) > 100  # the probe list is the catalogue, not a handful
    pages = admin_pages()
    pages.append(reverse("admin:termlists_termlist_try", args=[everything.pk]))
    found = []
    for url in pages:
        response = superuser_client.get(url, HTTP_ACCEPT_LANGUAGE="de")
        assert response.status_code in (200, 403), (url, response.status_code)
        text = visible_text(response.content.decode())
        found += [(url, probe) for probe in probes if probe in text]
    assert found == []
    assert len(pages) >= 20


def test_the_walk_would_see_an_english_page():
    # The probes catch what they are for: the English admin shows them.
    probes = english_probes()
    assert "Confirm a change that affects other configurations" in probes
