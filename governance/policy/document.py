"""A whole document read and checked: each section by its own module, then the references between them."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from governance.models import Configuration, McpServer, PolicyExample, Provider
from governance.policy import configurations, examples, mcp_servers, pattern_rules, providers, snippets, term_lists
from governance.policy.configurations import check_families, check_links
from governance.policy.format import NAME_KEYS, SECTIONS
from governance.policy.messages import (MSG_DOCUMENT, MSG_DUPLICATE, MSG_NOT_LIST, MSG_NOT_MAPPING,
                                        MSG_PRUNE_ORPHAN_LIST, MSG_PRUNE_PROVIDER_IN_USE, MSG_UNKNOWN_CONFIGURATION,
                                        MSG_UNKNOWN_KEY, MSG_UNKNOWN_PROVIDER)
from governance.policy.reading import Document, Errors, Record
from governance.policy.schema import structure_errors
from snippets.models import PatternRule, Snippet
from termlists.models import TermList

READERS = {
    "providers": providers.read,
    "mcp_servers": mcp_servers.read,
    "configurations": configurations.read,
    "snippets": snippets.read,
    "term_lists": term_lists.read,
    "pattern_rules": pattern_rules.read,
    "examples": examples.read,
}
MODELS = {"providers": Provider, "mcp_servers": McpServer, "configurations": Configuration, "snippets": Snippet, "term_lists": TermList,
          "pattern_rules": PatternRule, "examples": PolicyExample}


def _check_fields(errors: Errors, record: Record) -> None:
    """The model's own field validators (slugs, URLs, lengths, digits), reported at document paths."""
    model = MODELS[record.section]
    instance = model(**record.values)
    exclude = {f.name for f in model._meta.concrete_fields if f.name not in record.values} | record.failed
    try:
        instance.clean_fields(exclude=exclude)
    except ValidationError as exc:
        for field_name, messages in exc.message_dict.items():
            for message in messages:
                errors.add(f"{record.path}.{record.paths.get(field_name, field_name)}", message)



def read_document(document, errors: Errors, *, prune: bool) -> Document:
    if not isinstance(document, dict):
        errors.structural = True
        errors.add("document", _(str(MSG_DOCUMENT)) % {"sections": ", ".join(SECTIONS)})
        return Document({})
    for key in document:
        if key not in SECTIONS:
            errors.add(str(key), MSG_UNKNOWN_KEY)

    sections: dict[str, list[Record]] = {}
    for section, read in READERS.items():
        if section not in document:
            continue
        items = document[section]
        records: list[Record] = []
        sections[section] = records
        if items is None:
            continue
        if not isinstance(items, list):
            errors.add(section, MSG_NOT_LIST)
            continue
        first_seen: dict[str, str] = {}
        for index, item in enumerate(items):
            path = f"{section}[{index}]"
            if not isinstance(item, dict):
                errors.add(path, MSG_NOT_MAPPING)
                continue
            record = read(errors, path, item)
            records.append(record)
            _check_fields(errors, record)
            if not record.name:
                continue
            name_path = f"{path}.{NAME_KEYS[section]}"
            if record.name in first_seen:
                errors.add(name_path, _(str(MSG_DUPLICATE)) % {"path": first_seen[record.name]})
            else:
                first_seen[record.name] = name_path

    # The schema is the structure's one statement (governance/policy/schema.py): whatever it refuses is refused
    # here too, at its path, in the readers' words where they already named that path.
    for path, message in structure_errors(document):
        errors.structural = True
        if not any(known == path or known.startswith((f"{path}.", f"{path}[")) for known in errors.by_path):
            errors.add(path, message)

    _check_references(Document(sections), errors, prune=prune)
    check_families(Document(sections), errors)
    return Document(sections)


def _known_names(doc: Document, section: str, *, prune: bool) -> set[str]:
    """Names a reference may use: the document's, and the database's unless prune will remove them."""
    names = {r.name for r in doc.records(section) if r.name}
    if not (prune and doc.present(section)):
        key = NAME_KEYS[section]
        names |= set(MODELS[section].objects.values_list(key, flat=True))
    return names


def _example_names(doc: Document, configuration_names: set[str], *, prune: bool) -> dict:
    """What an example may name: term lists with their terms, snippets with their rule lines, pattern rules,
    as the policy will stand after the import."""
    from termlists.matcher import parse_terms

    def terms_of(forbidden: str, required: str) -> set[str]:
        # A term is named as the list writes it, without a replacement suggestion (`term => suggestion`).
        return {t.split("=>")[0].strip() for t in parse_terms(forbidden) + parse_terms(required)}

    def lines_of(body: str) -> set[int]:
        return {number for number, line in enumerate((body or "").splitlines(), start=1) if line.strip()}

    lists, rules_by_snippet = {}, {}
    if not (prune and doc.present("term_lists")):
        lists = {t.name: terms_of(t.forbidden, t.required) for t in TermList.objects.only("name", "forbidden", "required")}
    if not (prune and doc.present("snippets")):
        rules_by_snippet = {s.identifier: lines_of(s.body) for s in Snippet.objects.only("identifier", "body")}
    lists.update({r.name: terms_of(r.values["forbidden"], r.values["required"]) for r in doc.records("term_lists")})
    rules_by_snippet.update({r.name: lines_of(r.values["body"]) for r in doc.records("snippets")})
    return {"configurations": configuration_names, "term_lists": lists, "snippets": rules_by_snippet,
            "pattern_rules": _known_names(doc, "pattern_rules", prune=prune)}


def _first_mentions(names: list[str]):
    """(index, name) for each name's first place in a list: a repeat is reported as such, once."""
    seen = set()
    for index, name in enumerate(names):
        if name is not None and name not in seen:
            seen.add(name)
            yield index, name


def _check_references(doc: Document, errors: Errors, *, prune: bool) -> None:
    """References may point forward in the document or at records already stored."""
    providers = _known_names(doc, "providers", prune=prune)
    configurations = _known_names(doc, "configurations", prune=prune)

    def check_configuration(path: str, name: str) -> None:
        if name not in configurations:
            errors.add(path, _(str(MSG_UNKNOWN_CONFIGURATION)) % {"name": name})

    for record in doc.records("configurations"):
        provider = record.refs.get("provider")
        if provider and provider not in providers:
            errors.add(f"{record.path}.provider", _(str(MSG_UNKNOWN_PROVIDER)) % {"name": provider})
        escalation = record.refs.get("escalation")
        if escalation and escalation != record.name:
            check_configuration(f"{record.path}.escalation", escalation)
        for key, field_name in (("fallbacks", "fallbacks"), ("rules.judges", "rule_judges")):
            for index, name in _first_mentions(record.refs[field_name]):
                if name != record.name:
                    check_configuration(f"{record.path}.{key}[{index}]", name)
    for record in doc.records("term_lists"):
        for index, name in _first_mentions(record.refs["configurations"]):
            check_configuration(f"{record.path}.configurations[{index}]", name)
    check_links(doc, errors, prune=prune)
    if doc.records("examples"):
        known = _example_names(doc, configurations, prune=prune)
        for record in doc.records("examples"):
            examples.check_references(record, errors, known)

    if not prune:
        return
    # Pruning one section must not break records of a section the document leaves out (kept as stored).
    if doc.present("providers") and not doc.present("configurations"):
        for identifier, provider in Configuration.objects.values_list("identifier", "provider__name"):
            if provider not in providers:
                errors.add("providers", _(str(MSG_PRUNE_PROVIDER_IN_USE)) % {
                    "provider": provider, "configuration": identifier})
    if doc.present("configurations") and not doc.present("term_lists"):
        for term_list in TermList.objects.prefetch_related("configurations"):
            if not any(c.identifier in configurations for c in term_list.configurations.all()):
                errors.add("configurations", _(str(MSG_PRUNE_ORPHAN_LIST)) % {"list": term_list.name})


