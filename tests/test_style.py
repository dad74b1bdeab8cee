"""The codebase stays a model: ruff's lint rules and mypy's type check pass, as CI demands."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args):
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_ruff_finds_nothing():
    result = run("ruff", "check", ".")  # rules E, F, I, B, UP: see pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_nothing_in_the_package():
    result = run("mypy")  # the package, with the settings in pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr


PACKAGE = "nn_from_scratch"


def module_name(path: Path) -> str:
    """``nn_from_scratch/grade/wire.py`` -> ``nn_from_scratch.grade.wire`` (a package: its name)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """Every module of the package that ``path`` imports, at the top or inside a function.

    ``from .x import y`` and ``from nn_from_scratch.x import y`` both lead to ``x``
    (or to ``x.y`` where ``y`` is itself a module); relative imports are resolved.
    """
    import ast

    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {name for name in found if name in modules and name != here}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle, as a list of modules, for each strongly connected part of ``graph`` (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                parts.append(part)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for part in parts:  # the shortest way round from the part's first module back to it
        members, start = set(part), min(part)
        came_from: dict[str, str] = {}
        frontier = [start]
        while start not in came_from:  # breadth first; the part is strongly connected
            reached = []
            for node in frontier:
                for succ in sorted(graph[node] & members):
                    if succ not in came_from:
                        came_from[succ] = node
                        reached.append(succ)
            frontier = reached
        path, node = [start], came_from[start]
        while node != start:
            path.append(node)
            node = came_from[node]
        cycles.append([*path, start][::-1])
    return cycles


def package_import_graph() -> dict[str, set[str]]:
    files = sorted((ROOT / PACKAGE).rglob("*.py"))
    modules = {module_name(path) for path in files}
    return {module_name(path): imported_modules(path, modules) for path in files}


def test_the_import_graph_finder_sees_every_kind_of_import_and_names_a_circle(tmp_path):
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}, "p.e": set()}
    assert import_cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]
    assert import_cycles({"p.a": {"p.b"}, "p.b": set()}) == []
    worker = package_import_graph()[f"{PACKAGE}.worker"]
    assert {f"{PACKAGE}.parallel", f"{PACKAGE}.data", f"{PACKAGE}.i18n"} <= worker
    doctor = package_import_graph()[f"{PACKAGE}.doctor"]
    assert f"{PACKAGE}.data" in doctor  # imported inside a function, not at the top


def test_no_module_of_the_package_imports_one_that_imports_it_back():
    cycles = import_cycles(package_import_graph())
    assert not cycles, "import circles (each arrow an import):\n" + "\n".join(
        " -> ".join(cycle) for cycle in cycles)
