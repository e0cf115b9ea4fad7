"""The import graph of Gavel's own modules, read from the source with `ast` (nothing is imported).

Used by tests/test_architecture.py, and on its own to measure the layout (docs/architecture.md):

    .venv/bin/python -m tests.import_graph

prints the modules of each wing, the longest modules, every arrow that runs against the table of
allowed directions, and every import cycle (strongly connected components of more than one module).
Imports inside functions count like any other: an import moved into a function still closes a cycle.
"""
import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("governance", "judging", "termlists", "snippets")
# Generated code and the packages' own tests are not rooms of the house.
SKIPPED_PARTS = ("migrations", "__pycache__", ".venv")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module name the source imports, relative imports resolved, dynamic imports by literal included."""
    return {name for name, _line, _nested in import_sites(source, module, is_package)}


def import_sites(source: str, module: str, is_package: bool = False) -> list[tuple[str, int, bool]]:
    """(name, line, inside a function) for every name the source imports."""
    found: list[tuple[str, int, bool]] = []
    package = module if is_package else module.rpartition(".")[0]

    def visit(node, nested: bool):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, nested) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)] if child.level > 1 else base
                    prefix = ".".join(base)
                    target = f"{prefix}.{child.module}" if child.module else prefix
                else:
                    target = child.module or ""
                found.append((target, child.lineno, nested))
                # `from governance.screening import text` imports the module governance.screening.text.
                found.extend((f"{target}.{alias.name}", child.lineno, nested) for alias in child.names
                             if alias.name != "*")
            elif isinstance(child, ast.Call) and child.args and isinstance(child.args[0], ast.Constant) \
                    and isinstance(child.args[0].value, str):
                func = child.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("import_module", "__import__", "import_string"):
                    found.append((child.args[0].value, child.lineno, nested))
            visit(child, inner)

    visit(ast.parse(source), False)
    return found


@dataclass
class Graph:
    """Our modules (name → file) and the arrows between them (importer → imported, with where)."""
    files: dict[str, Path]
    arrows: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    nested: dict[tuple[str, str], int] = field(default_factory=dict)  # (from, to) → line, for imports in functions

    def resolve(self, name: str) -> str | None:
        """The module of ours a dotted name lands in (`a.b.func` → `a.b`), or None for anything else."""
        while name:
            if name in self.files:
                return name
            name = name.rpartition(".")[0]
        return None

    def cycles(self) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        found: list[list[str]] = []
        counter = 0
        for start in sorted(self.files):
            if start in index:
                continue
            work = [(start, iter(sorted(self.arrows.get(start, ()))))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                node, children = work[-1]
                advanced = False
                for child in children:
                    if child not in index:
                        index[child] = low[child] = counter
                        counter += 1
                        stack.append(child)
                        on_stack.add(child)
                        work.append((child, iter(sorted(self.arrows.get(child, ())))))
                        advanced = True
                        break
                    if child in on_stack:
                        low[node] = min(low[node], index[child])
                if advanced:
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
        return sorted(found)


def build(root: Path = ROOT, packages=PACKAGES) -> Graph:
    files = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if not any(part in SKIPPED_PARTS for part in path.relative_to(root).parts):
                files[module_name(path, root)] = path
    graph = Graph(files)
    sites_of = {module: import_sites(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
                for module, path in files.items()}
    # A package whose __init__ imports nothing runs nothing of ours: no arrow passes through it.
    hollow = {module for module, path in files.items() if path.name == "__init__.py" and not sites_of[module]}
    for module, sites in sites_of.items():
        for name, line, nested in sites:
            target = graph.resolve(name)
            if target is None or target == module:
                continue
            # Importing a.b.c runs a/__init__ and a/b/__init__ first: an arrow to each package the
            # importer is not inside of (a module inside a package finds it already importing).
            parts = target.split(".")
            for depth in range(1, len(parts) + 1):
                prefix = ".".join(parts[:depth])
                if prefix == module or prefix not in files or (module + ".").startswith(prefix + ".") \
                        or prefix in hollow:
                    continue
                graph.arrows[module].add(prefix)
                if nested:
                    graph.nested.setdefault((module, prefix), line)
    return graph


def wing_of(module: str, wings) -> str:
    """The wing a module lives in: the longest prefix named in `wings` (a dict prefix → wing)."""
    name = module
    while name:
        if name in wings:
            return wings[name]
        name = name.rpartition(".")[0]
    raise KeyError(f"{module} is in no wing of the table")


def wrong_way(graph: Graph, wings: dict[str, str], allowed: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Arrows between wings that the table does not allow."""
    return sorted((source, target) for source, targets in graph.arrows.items() for target in targets
                  if wing_of(source, wings) != wing_of(target, wings)
                  and wing_of(target, wings) not in allowed[wing_of(source, wings)])


def line_counts(graph: Graph) -> dict[str, int]:
    return {module: len(path.read_text(encoding="utf-8").splitlines()) for module, path in graph.files.items()}


def main() -> int:
    from tests.test_architecture import ALLOWED, WINGS

    graph = build()
    per_wing = defaultdict(list)
    for module in graph.files:
        per_wing[wing_of(module, WINGS)].append(module)
    lines = line_counts(graph)
    print(f"{len(graph.files)} modules, {sum(len(t) for t in graph.arrows.values())} arrows between them")
    for wing in sorted(per_wing):
        longest = max(per_wing[wing], key=lines.get)
        print(f"  {wing:<12} {len(per_wing[wing]):>3} modules, longest {longest} ({lines[longest]} lines)")
    top = max(lines, key=lines.get)
    print(f"longest module: {top} ({lines[top]} lines)")
    against = wrong_way(graph, WINGS, ALLOWED)
    print(f"arrows against the table: {len(against)}")
    for source, target in against:
        print(f"  {source} -> {target}")
    cycles = graph.cycles()
    print(f"import cycles: {len(cycles)}")
    for component in cycles:
        print("  " + " <-> ".join(component))
    print(f"imports of our own modules inside functions: {len(graph.nested)}")
    for (source, target), line in sorted(graph.nested.items()):
        print(f"  {graph.files[source].relative_to(ROOT)}:{line} -> {target}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
