"""judging/, termlists/ and snippets/ (issue 24): no import cycle among their modules, counting imports inside
functions; from governance only its records, its messages and its pure text helpers; no module over 600 lines."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("judging", "termlists", "snippets")
GOVERNANCE_ALLOWED = ("governance.models", "governance.messages", "governance.errors", "governance.screening.text",
                      "governance.screening.redaction")
# Admin pages build on governance's admin: its tag field and its bulk actions (governance/admin.py is being split).
ADMIN_GLUE = {
    "snippets.admin": {"governance.admin", "governance.records.bulk"},
    "termlists.admin": {"governance.records.bulk"},
}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(path: Path, module: str) -> set[str]:
    """Every module name imported anywhere in the file (inside functions too), relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def graph_of(known: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of `known` it imports (a name inside a module counts as the module)."""
    def owner(name):
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name

    return {module: {owner(n) for n in imported(path, module) if owner(n) and owner(n) != module}
            for module, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_among_judging_termlists_and_snippets():
    assert cycles(graph_of(modules())) == []


def test_the_cycle_finder_sees_a_cycle_through_an_import_inside_a_function(tmp_path):
    (tmp_path / "a.py").write_text("from fake import b\n")
    (tmp_path / "b.py").write_text("def later():\n    from fake.c import thing\n")
    (tmp_path / "c.py").write_text("import fake.a\n")
    (tmp_path / "d.py").write_text("from fake import a\n")
    known = {f"fake.{name}": tmp_path / f"{name}.py" for name in "abcd"}
    assert cycles(graph_of(known)) == [["fake.a", "fake.b", "fake.c"]]


def not_allowed(module: str, names: set[str]) -> list[str]:
    """What `module` imports from governance beyond its records, messages and text helpers."""
    allowed = GOVERNANCE_ALLOWED + tuple(ADMIN_GLUE.get(module, ()))

    def fine(name):
        # `from governance.screening import text` also names the package, whose __init__ is a docstring.
        return any(name == ok or name.startswith(ok + ".") or ok.startswith(name + ".") for ok in allowed)

    return sorted(n for n in names if n.split(".")[0] == "governance" and not fine(n))


def test_from_governance_only_records_messages_and_text_helpers():
    offenders = {module: bad for module, path in modules().items() if (bad := not_allowed(module, imported(path, module)))}
    assert offenders == {}


def test_the_governance_check_sees_the_call_service_reached_for_inside_a_function(tmp_path):
    fake = tmp_path / "judges.py"
    fake.write_text("from governance.errors import ProviderFailed\n"
                    "def decide():\n    from governance.runs.calls import call_model\n")
    assert not_allowed("judging.judges", imported(fake, "judging.judges")) == [
        "governance.runs.calls", "governance.runs.calls.call_model"]


def test_no_module_over_600_lines():
    long = {module: n for module, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}


def test_what_judges_answer_in_and_the_hand_in_import_no_django():
    import subprocess
    import sys

    code = ("import sys, judging.judgement, judging.rulesets_pure, judging.model_calls, judging.chain; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'litellm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
