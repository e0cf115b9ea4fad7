"""The import rules of CONVENTIONS.md, read from the source with `ast`.

- Only `judging/llm.py` imports litellm (SPEC §11.4: lazily, and nowhere else).
- Pure engines import neither Django nor litellm, not even through another module of ours.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("governance", "judging", "termlists", "snippets")
LITELLM_DOOR = "judging/llm.py"
PURE_ENGINES = (
    "termlists/matcher.py", "governance/screening/redaction.py", "governance/screening/text.py", "judging/zones.py", "judging/prompts.py",
    "judging/demo_model.py",
    "snippets/patterns.py", "governance/protocols/openai_chat/translate.py", "governance/protocols/openai_chat/errors.py",
    "governance/protocols/openai_responses/translate.py",
    "governance/review/passages.py", "governance/review/chart.py",
)
# Engines that may appear as the work goes on; each is pure the moment it exists.
PURE_ENGINE_PATTERNS = ("judging/*verdict*.py", "judging/rulesets_pure.py", "judging/rulesets_pure/*.py")
FORBIDDEN_IN_PURE = ("django", "litellm", "rest_framework", "celery")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module name the source imports, relative imports resolved, dynamic imports by literal included."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module or ""
            found.add(target)
            # `from governance.screening import text` imports the module governance.screening.text.
            found.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__", "import_string"):
                found.add(node.args[0].value)
    return found


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


def pure_engines() -> list[Path]:
    found = {ROOT / p for p in PURE_ENGINES}
    for pattern in PURE_ENGINE_PATTERNS:
        found.update(ROOT.glob(pattern))
    return sorted(found)


# --- the rules ---
def test_only_judging_llm_imports_litellm():
    offenders = {
        str(path.relative_to(ROOT)): sorted(name for name in imports_of_file(path) if top(name) == "litellm")
        for path in source_files()
        if str(path.relative_to(ROOT)) != LITELLM_DOOR
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_litellm_door_exists_and_imports_it_only_inside_functions():
    door = ROOT / LITELLM_DOOR
    tree = ast.parse(door.read_text(encoding="utf-8"))
    module_level = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not [n for n in module_level
                if any(top(a.name) == "litellm" for a in n.names) or top(getattr(n, "module", "") or "") == "litellm"]
    assert "litellm" in {top(name) for name in imports_of_file(door)}


def test_the_litellm_door_imports_no_django():
    assert {top(name) for name in imports_of_file(ROOT / LITELLM_DOOR)} & {"django", "rest_framework"} == set()


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
    allowed = {"judging", "judging.llm"} | {module_name(p) for p in pure_engines() if p.parts[-2] == "judging"}

    def base(name):  # `judging.llm.complete` is a name inside the module judging.llm
        return name if project_module_path(name) else name.rpartition(".")[0]

    above = {name: chain for name, chain in chains.items()
             if base(name) == "governance.runs.completions" or (top(name) == "judging" and base(name) not in allowed)}
    assert above == {}


def test_judges_reach_models_through_the_call_service():
    users = {str(p.relative_to(ROOT)) for p in (ROOT / "judging").rglob("*.py")
             if "governance.runs.calls" in {n.rpartition(".")[0] if n.endswith((".call_model", ".call_decision")) else n
                                       for n in imports_of_file(p)}}
    assert {"judging/judges.py", "judging/decisions.py"} <= users
