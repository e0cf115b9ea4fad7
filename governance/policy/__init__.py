"""Policy as code (SPEC §11.2): the whole policy as one document, exported and imported.

The format is `policy-example.yaml` (normative): its sections, its keys, in its order.
Import is an upsert by identifier/name that is atomic, idempotent and reports every error
with its path in the document (`term_lists[2].forbidden[5]`); decisions are in docs/policy.md.

One module per section (providers, configurations, snippets, term_lists, pattern_rules, examples) reads
and exports its records; `document` checks a whole document, `importing` writes it, `dump`
writes YAML. Everything callers use is importable from here, as before the package existed.
"""
from __future__ import annotations

from governance.policy import configurations, examples, mcp_servers, pattern_rules, providers, snippets, term_lists
from governance.policy.dump import to_yaml
from governance.policy.format import (BUDGET_KEYS, CHANGE_REASON, CONFIGURATION_KEYS, CONFIGURATION_PATHS,
                                      ENV_NAME_RE, EXAMPLE_KEYS, EXPECT_KEYS, LANGUAGE_RE, LINK_KEYS, NAME_KEYS, PATTERN_RULE_KEYS,
                                      PROVIDER_KEYS, RULES_KEYS, SECTIONS, SNIPPET_KEYS, TERM_LIST_KEYS)
from governance.policy.importing import ImportReport, import_policy
from governance.policy.messages import (  # noqa: F401 -- the messages tests assert on
    MSG_DOCUMENT, MSG_NOT_MAPPING, MSG_NOT_LIST, MSG_UNKNOWN_KEY, MSG_REQUIRED, MSG_NOT_STRING, MSG_EMPTY,
    MSG_NOT_INTEGER, MSG_NOT_NUMBER, MSG_NOT_BOOLEAN, MSG_AT_LEAST, MSG_RANGE, MSG_CHOICE, MSG_ENV_NAME,
    MSG_SURROUNDING_SPACE, MSG_LANGUAGE, MSG_DUPLICATE, MSG_LISTED_TWICE, MSG_UNKNOWN_PROVIDER,
    MSG_UNKNOWN_CONFIGURATION, MSG_SELF_REFERENCE, MSG_NO_CONFIGURATION, MSG_TERM_LINE_BREAK,
    MSG_PRUNE_PROVIDER_IN_USE, MSG_PRUNE_ORPHAN_LIST, PolicyInvalid,
)
from governance.policy.document import read_document
from governance.policy.reading import Errors

EXPORTERS = {
    "providers": providers.export,
    "mcp_servers": mcp_servers.export,
    "configurations": configurations.export,
    "snippets": snippets.export,
    "term_lists": term_lists.export,
    "pattern_rules": pattern_rules.export,
    "examples": examples.export,
}


def errors_of_document(document, *, prune: bool = False) -> dict:
    """Every error of `document` with its path, as an import would report them; nothing written."""
    errors = Errors()
    read_document(document, errors, prune=prune)
    return errors.by_path


def export_policy() -> dict:
    """The whole policy as a document in the format of policy-example.yaml: every key, in its order."""
    document = {section: export() for section, export in EXPORTERS.items()}
    if not document["mcp_servers"]:
        del document["mcp_servers"]  # not in the example: written only once a server exists (docs/mcp.md)
    return document


def export_yaml() -> str:
    """The policy document as YAML (what `export_policy` the command writes)."""
    return to_yaml(export_policy())


__all__ = [
    "BUDGET_KEYS", "CHANGE_REASON", "CONFIGURATION_KEYS", "CONFIGURATION_PATHS", "ENV_NAME_RE", "LANGUAGE_RE",
    "LINK_KEYS", "NAME_KEYS", "PATTERN_RULE_KEYS", "PROVIDER_KEYS", "RULES_KEYS", "SECTIONS", "SNIPPET_KEYS",
    "TERM_LIST_KEYS", "EXAMPLE_KEYS", "EXPECT_KEYS", "ImportReport", "PolicyInvalid", "export_policy", "export_yaml", "import_policy",
]
