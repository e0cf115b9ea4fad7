"""The architecture, read from the source with `ast` (docs/architecture.md; `python -m tests.import_graph`).

- The wings and the direction of imports between them: the table WINGS / ALLOWED below.
- No import cycle between our modules, imports inside functions included.
- No module over 600 lines outside migrations and tests.
- Only the package `judging/llm/` imports litellm (SPEC §11.4: lazily, and nowhere else).
- Pure engines import neither Django nor litellm, not even through another module of ours.
"""
import ast
from pathlib import Path

import pytest

from tests.import_graph import Graph, build, imports_of, line_counts, wing_of, wrong_way
from tests.import_graph import module_name as graph_module_name

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("governance", "judging", "termlists", "snippets")
LITELLM_DOOR = "judging/llm"  # a package: every module in it is the door
PURE_ENGINES = (
    "termlists/matcher.py", "termlists/invisible.py", "governance/screening/redaction.py", "governance/screening/masking.py", "governance/screening/text.py", "judging/zones.py", "judging/prompts.py",
    "judging/demo_model.py", "judging/judgement.py", "judging/model_calls.py",
    "snippets/patterns.py", "governance/protocols/openai_chat/translate.py", "governance/protocols/openai_chat/errors.py",
    "governance/protocols/anthropic/translate.py", "governance/protocols/anthropic/errors.py",
    "governance/protocols/openai_responses/translate.py", "governance/protocols/presentation.py",
    "governance/review/passages.py", "governance/review/chart.py",
)
# Engines that may appear as the work goes on; each is pure the moment it exists.
PURE_ENGINE_PATTERNS = ("judging/*verdict*.py", "judging/rulesets_pure.py", "judging/rulesets_pure/*.py")
FORBIDDEN_IN_PURE = ("django", "litellm", "rest_framework", "celery")


# --- the wings, and which wings each may import (the architecture as a table; docs/architecture.md) ---
# A module belongs to the longest prefix named here. Pure engines are their own wing at the bottom.
WINGS = {
    "governance": "site",  # settings, urls, health, logins, admin, the OpenAPI document, commands
    "governance.errors": "base", "governance.messages": "base", "governance.models": "base",
    "governance.cache": "base",  # the Redis client behind the cache, for the throttle and provider limits
    "governance.postgresql": "base",  # the database backend (ENGINE): under the models, imports nothing of ours
    "governance.middleware": "http", "governance.pages": "http",  # what every surface answers with
    "governance.celery": "work",  # the Celery app belongs to queued work (`celery -A governance` finds it)
    "governance.api.schema": "site",  # the OpenAPI document spans every surface
    "governance.records": "records",
    "governance.screening": "screening",
    "governance.policy": "policy",
    "governance.runs": "runs",
    "governance.work": "work",
    "governance.review": "review",
    "governance.evidence": "evidence",
    "governance.api": "api",
    "governance.protocols": "protocols",
    "governance.protocols.mcp": "mcp",  # the MCP gateway (SPEC §14): a protocol whose approval is queued work
    "judging": "checks", "termlists": "checks", "snippets": "checks",
    # The admin pages of the checks' records are the site's surface, beside governance.admin.
    "judging.admin": "site", "termlists.admin": "site", "snippets.admin": "site",
}
_BELOW_CHECKS = {"engines", "base"}
ALLOWED = {
    "engines": set(),
    "base": {"engines"},
    "http": {"engines", "base"},
    "checks": _BELOW_CHECKS,
    "records": _BELOW_CHECKS | {"checks"},
    # Evidence, metrics and traces: written by the screening and the runs, so below them.
    "evidence": _BELOW_CHECKS | {"records"},
    "screening": _BELOW_CHECKS | {"checks", "records", "evidence"},
    "runs": _BELOW_CHECKS | {"checks", "records", "evidence", "screening"},
    "policy": _BELOW_CHECKS | {"checks", "records", "evidence", "screening", "runs"},
    "work": _BELOW_CHECKS | {"checks", "records", "screening", "runs", "policy", "evidence"},
    "review": _BELOW_CHECKS | {"http", "checks", "records", "screening", "runs", "policy", "evidence", "work"},
    "api": _BELOW_CHECKS | {"http", "checks", "records", "screening", "runs", "policy", "evidence", "work",
                            "review"},
    # A protocol is a thin translation on the REST API's plumbing (auth, errors, serializers).
    "protocols": _BELOW_CHECKS | {"http", "checks", "records", "screening", "runs", "evidence", "api"},
    # The MCP gateway: a protocol too, and its approvals are tasks of queued work (governance/work/tool_calls.py).
    "mcp": _BELOW_CHECKS | {"http", "checks", "records", "screening", "evidence", "api", "work"},
    "site": {"engines", "base", "http", "checks", "records", "screening", "runs", "policy", "evidence", "work",
             "review", "protocols", "api", "mcp"},
}
MAX_LINES = 600


def module_name(path: Path) -> str:
    return graph_module_name(path, ROOT)


def top(name: str) -> str:
    return name.split(".")[0]


def source_files() -> list[Path]:
    files = []
    for package in PACKAGES:
        files.extend(p for p in (ROOT / package).rglob("*.py") if ".venv" not in p.parts)
    return sorted(files)


def project_module_path(name: str) -> Path | None:
    """The file of a module of ours, or None (third party, stdlib, or a name inside a module)."""
    if top(name) not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of_file(path: Path) -> set[str]:
    return imports_of(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def reachable(path: Path) -> dict[str, list[str]]:
    """Every module importing `path` pulls in, each with the chain of our modules that leads to it."""
    chains: dict[str, list[str]] = {}
    pending = [(path, [module_name(path)])]
    seen = {path}
    while pending:
        current, chain = pending.pop()
        for name in sorted(imports_of_file(current)):
            # Importing a.b.c runs a/__init__, a/b/__init__ and a/b/c.
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                prefix = ".".join(parts[:depth])
                chains.setdefault(prefix, chain + [prefix])
                nested = project_module_path(prefix)
                if nested is not None and nested not in seen:
                    seen.add(nested)
                    pending.append((nested, chain + [prefix]))
    return chains


def door_files() -> list[Path]:
    return sorted((ROOT / LITELLM_DOOR).rglob("*.py"))


def pure_engines() -> list[Path]:
    found = {ROOT / p for p in PURE_ENGINES}
    for pattern in PURE_ENGINE_PATTERNS:
        found.update(ROOT.glob(pattern))
    return sorted(found)


# Every pure engine, listed or found by pattern, is in the engines wing.
WINGS.update({module_name(engine): "engines" for engine in pure_engines()})


# --- the rules ---
def test_only_judging_llm_imports_litellm():
    offenders = {
        str(path.relative_to(ROOT)): sorted(name for name in imports_of_file(path) if top(name) == "litellm")
        for path in source_files()
        if path not in door_files()
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_litellm_door_exists_and_imports_it_only_inside_functions():
    assert (ROOT / LITELLM_DOOR / "__init__.py").is_file()
    for door in door_files():
        tree = ast.parse(door.read_text(encoding="utf-8"))
        module_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not [n for n in module_level
                    if any(top(a.name) == "litellm" for a in n.names) or top(getattr(n, "module", "") or "") == "litellm"]
    assert "litellm" in {top(name) for door in door_files() for name in imports_of_file(door)}


def test_the_litellm_door_imports_no_django():
    assert {top(name) for door in door_files() for name in imports_of_file(door)} & {"django", "rest_framework"} == set()


@pytest.mark.parametrize("engine", pure_engines(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pure_engine_imports_neither_django_nor_litellm(engine):
    assert engine.is_file(), f"{engine.relative_to(ROOT)} is named as a pure engine but does not exist"
    chains = reachable(engine)
    bad = {name: " -> ".join(chain) for name, chain in chains.items()
           if "." not in name and name in FORBIDDEN_IN_PURE}
    assert bad == {}


# --- the scanner itself must be able to fail ---
def test_the_scanner_sees_every_form_of_import():
    source = """
import os, litellm as llm
from litellm.utils import token_counter
from . import sibling
from ..judging import zones
import importlib
importlib.import_module("django.db")
__import__("celery")
def later():
    from rest_framework import views
"""
    found = imports_of(source, "governance.api.views")
    assert {"litellm", "litellm.utils", "governance.api.sibling", "governance.judging", "governance.judging.zones",
            "django.db", "celery", "rest_framework", "os", "importlib"} <= found
    assert imports_of("from . import x", "termlists", is_package=True) >= {"termlists.x"}


def test_the_walk_follows_our_own_modules():
    # termlists/guardrail.py imports governance code that imports Django: the walk must say so.
    chains = reachable(ROOT / "termlists" / "guardrail.py")
    assert "django" in chains
    assert chains["django"][0] == "termlists.guardrail"


# --- one room for model calls (issue 19): the arrows run one way ---
CALL_SERVICE = "governance/runs/calls.py"


def test_judging_never_imports_the_completion_service():
    """Judges ask the call service; the completion service reaches judging only through the pipeline."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(n for n in imports_of_file(path)
                                            if n == "governance.runs.completions" or n.startswith("governance.runs.completions."))
        for path in (ROOT / "judging").rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_call_service_sits_below_completions_and_judging():
    """governance/runs/calls.py and everything it pulls in import neither the completion service nor any
    judging module but the litellm door."""
    chains = reachable(ROOT / CALL_SERVICE)
    # Below it may be only the litellm door and pure engines (which import nothing of ours that calls).
    allowed = {"judging"} | {module_name(p) for p in door_files()} \
        | {module_name(p) for p in pure_engines() if p.parts[-2] == "judging"}

    def base(name):  # `judging.llm.complete` is a name inside the module judging.llm
        return name if project_module_path(name) else name.rpartition(".")[0]

    above = {name: chain for name, chain in chains.items()
             if base(name) == "governance.runs.completions" or (top(name) == "judging" and base(name) not in allowed)}
    assert above == {}


def test_judges_reach_models_through_the_call_service():
    """Judges ask the model calls governance hands in at start-up (judging/model_calls.py): the call service."""
    from governance.runs import calls
    from judging import model_calls

    assert model_calls.installed() is calls
    users = {str(p.relative_to(ROOT)) for p in (ROOT / "judging").rglob("*.py")
             if "judging.model_calls" in imports_of_file(p)}
    assert {"judging/judges.py", "judging/decisions.py"} <= users


# --- the layout (issue 24): wings, one direction, no cycles, no room over 600 lines ---
GRAPH = build()


def test_every_module_is_in_a_wing():
    unplaced = []
    for module in GRAPH.files:
        try:
            wing_of(module, WINGS)
        except KeyError:
            unplaced.append(module)
    assert unplaced == []


def test_imports_run_only_the_way_the_table_allows():
    assert wrong_way(GRAPH, WINGS, ALLOWED) == []


def test_no_import_cycles_between_our_modules_imports_in_functions_included():
    assert GRAPH.cycles() == []


def test_no_module_over_600_lines():
    assert {module: n for module, n in line_counts(GRAPH).items() if n > MAX_LINES} == {}


def test_each_wing_of_governance_says_what_lives_there():
    for package in sorted((ROOT / "governance").iterdir()):
        init = package / "__init__.py"
        if package.is_dir() and init.is_file() and package.name not in ("migrations", "management"):
            docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
            assert docstring, f"governance/{package.name}/__init__.py says nothing of what lives there"


def test_checks_import_from_governance_only_its_records_messages_and_pure_text_helpers():
    allowed = ("governance.models", "governance.messages", "governance.errors", "governance.screening.text",
               "governance.screening.redaction")
    offenders = {}
    for module, targets in GRAPH.arrows.items():
        if wing_of(module, WINGS) == "checks":
            bad = sorted(t for t in targets if t.startswith("governance") and t not in ("governance",
                         "governance.screening") and not t.startswith(allowed))
            if bad:
                offenders[module] = bad
    assert offenders == {}


# --- the checks themselves must be able to fail (a fake package with a cycle and an upward import) ---
def _fake_package(tmp_path: Path) -> Graph:
    files = {
        "app/__init__.py": '"""A fake app."""\n',
        "app/low/__init__.py": "",
        "app/low/a.py": "from app.low import b\n",
        "app/low/b.py": "def later():\n    from app.low.c import thing\n",  # hidden in a function
        "app/low/c.py": "import app.low.a\nthing = 1\n",
        "app/high/__init__.py": "",
        "app/high/view.py": "from app.low.a import *\n",
        "app/low/up.py": "from app.high import view\n",  # upward
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return build(tmp_path, ("app",))


def test_the_mcp_room_has_one_door_into_the_screening_and_no_way_into_the_runs():
    """SPEC §14: a tool call passes the pipeline every protocol uses, through one module (checks.py)."""
    room = sorted((ROOT / "governance" / "protocols" / "mcp").glob("*.py"))
    assert room, "the MCP room is gone"
    doors = {path.name for path in room
             if any(name.startswith("governance.screening") for name in imports_of_file(path))}
    assert doors == {"checks.py"}
    assert not [path.name for path in room
                if any(name.startswith("governance.runs") for name in imports_of_file(path))]


def test_the_cycle_check_reports_a_cycle_hidden_in_a_function(tmp_path):
    graph = _fake_package(tmp_path)
    assert graph.cycles() == [["app.low.a", "app.low.b", "app.low.c"]]
    assert ("app.low.b", "app.low.c") in graph.nested


def test_the_direction_check_reports_an_upward_import(tmp_path):
    graph = _fake_package(tmp_path)
    wings = {"app": "top", "app.low": "low", "app.high": "high"}
    allowed = {"top": {"low", "high"}, "high": {"low"}, "low": set()}
    assert wrong_way(graph, wings, allowed) == [("app.low.up", "app.high.view")]


def test_the_line_check_counts_lines(tmp_path):
    graph = _fake_package(tmp_path)
    (tmp_path / "app/low/c.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert line_counts(graph)["app.low.c"] == MAX_LINES + 1
