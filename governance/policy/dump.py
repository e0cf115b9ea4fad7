"""The policy document written as YAML the way policy-example.yaml writes it (flow lists, quoted patterns)."""
from __future__ import annotations

import yaml


class _FlowList(list):
    """A short list of one-line scalars, written `[a, b]` as the example writes it."""


class _FlowDict(dict):
    """A mapping written `{a: 1, b: 2}`, as the example writes `budget`."""


class _Pattern(str):
    """A regular expression, written single-quoted as the example writes it: backslashes stay as typed."""


class _Suggested(str):
    """A term with its suggestion, written double-quoted as the example writes it: "Kunde => Kundin oder Kunde"."""


class _PolicyDumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True  # every value written out: a policy document with an alias is refused on import

    def increase_indent(self, flow=False, indentless=False):
        # Indent a list under its key (`  - name: …`), as the example does.
        return super().increase_indent(flow, False)


def _represent_str(dumper, value: str):
    # Multi-line prose (snippet bodies, prompts) reads best as a literal block. PyYAML falls back
    # to a quoted style by itself where a block cannot hold the value exactly.
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_str(value)


_PolicyDumper.add_representer(str, _represent_str)
_PolicyDumper.add_representer(
    _Pattern, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
)
_PolicyDumper.add_representer(
    _Suggested, lambda dumper, value: dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
)
_PolicyDumper.add_representer(
    _FlowList, lambda dumper, value: dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)
)
_PolicyDumper.add_representer(
    _FlowDict, lambda dumper, value: dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)
)


def _yaml_shape(node, key=None):
    """Mark the lists and the mapping the example writes in flow style."""
    if isinstance(node, str) and key in ("violation_pattern", "satisfied_pattern") and "\n" not in node:
        return _Pattern(node)
    if isinstance(node, dict):
        shaped = {k: _yaml_shape(v, k) for k, v in node.items()}
        return _FlowDict(shaped) if key in ("budget", "finding") else shaped
    if isinstance(node, list):
        # An example's findings are written one per line, `- {check: term_list, list: …}`, as the example does.
        items = [_yaml_shape(v, "finding" if key in ("findings", "absent") else None) for v in node]
        if key == "forbidden":
            items = [_Suggested(v) if isinstance(v, str) and "=>" in v else v for v in items]
        if all(isinstance(v, (str, int, float)) and not (isinstance(v, str) and "\n" in v) for v in items):
            return _FlowList(items)
        return items
    return node


def to_yaml(document: dict) -> str:
    """A policy document as YAML, one blank line between sections, as in the example."""
    document = _yaml_shape(document)
    return "\n".join(
        yaml.dump({section: value}, Dumper=_PolicyDumper, sort_keys=False, allow_unicode=True,
                  default_flow_style=False, width=100)
        for section, value in document.items()
    )
