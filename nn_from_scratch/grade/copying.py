"""Copying the library is pedagogy, not forgery: found in the submitted source, before it runs.

A student can hand in the library's own answer: ``from nn_from_scratch.model
import predict``, ``predict = model.predict``, or a one-line wrapper
``def mul(a, b): return check.autodiff.mul(a, b)``. Its values are right, so no
check of values can tell; the source can. The grader reads the rebuilt notebook
cell by cell, as Python would run it, and keeps what each name is bound to: a
module or object of the package (``import``, ``from ... import``, ``x = a.b``),
or the student's own code. At each check cell it looks at what the cell hands
in: a library object bound by the student's own cells, or a function (or an
expression) of the student's whose code reaches, itself or through the student's
functions it calls, either the exercise's *twin* (the package's function of the
same name: ``model.predict`` for ``predict``) or anything of the checkers'
package (their references). Such an exercise is "the library's own": no points,
and the hint says so. Using the library elsewhere, as the lessons do
(``jax.vmap(predict, ...)`` over the library's ``predict`` in 07.5), is the
student's own work. The reading is static and best-effort: it judges copying,
not code written to hide it.
"""
import ast
import importlib
import pkgutil
from typing import Any

import nn_from_scratch

from .rebuild import Rebuilt
from .release import Release
from .verdicts import check_cells

__all__ = ["library_copies", "twins"]

# The package's modules of concepts (the answers' twins live there), not its machinery.
_NOT_CONCEPTS = {"grade", "exercises", "doctor", "notebook_runner", "sandbox", "seccomp",
                 "memory_watch", "i18n", "worker", "plots", "data", "mnist", "timing"}
_CHECKERS = "nn_from_scratch.exercises"
_DEPTH = 4  # how far through the student's own functions a reference is followed


def twins(names: set[str]) -> list[Any]:
    """The package's functions named as ``names`` (the checker's, and what the cell hands in)."""
    found = []
    for module in pkgutil.iter_modules(nn_from_scratch.__path__):
        if module.name.startswith("_") or module.name in _NOT_CONCEPTS:
            continue
        loaded = importlib.import_module(f"nn_from_scratch.{module.name}")
        found += [getattr(loaded, name) for name in names if callable(getattr(loaded, name, None))]
    return found


def _package_object(value: Any) -> bool:
    return getattr(value, "__name__", "").startswith("nn_from_scratch") or \
        str(getattr(value, "__module__", "") or "").startswith("nn_from_scratch")


class _Reader:
    """The notebook's names as its cells bind them, in order (see the module's docstring)."""

    def __init__(self) -> None:
        self.bound: dict[str, Any] = {}  # name -> a package module or object, or None
        self.by_student: set[str] = set()  # names the student's cells bound last
        self.code: dict[str, ast.AST] = {}  # name -> the student's def, or the value assigned

    def resolve(self, node: ast.AST) -> Any:
        """The package object ``node`` (a name or an attribute chain) stands for, or None."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is not None:
                return getattr(base, node.attr, None)
        return None

    def _bind(self, name: str, value: Any, student: bool, code: ast.AST | None = None) -> None:
        self.bound[name] = value if value is not None and _package_object(value) else None
        self.by_student.discard(name)
        self.code.pop(name, None)
        if student:
            self.by_student.add(name)
            if code is not None:
                self.code[name] = code

    def read(self, source: str, student: bool) -> None:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return
        for statement in tree.body:
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    top = alias.name if alias.asname else alias.name.split(".")[0]
                    module = _import(top)
                    self._bind(alias.asname or top, module, student)
            elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                module = _import(statement.module)
                for alias in statement.names:
                    value = getattr(module, alias.name, None) if module is not None else None
                    if value is None and module is not None:
                        value = _import(f"{statement.module}.{alias.name}")
                    self._bind(alias.asname or alias.name, value, student)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._bind(statement.name, None, student, statement)
            elif isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                targets = statement.targets if isinstance(statement, ast.Assign) else [
                    statement.target]
                for target in targets:
                    for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                        single = isinstance(target, ast.Name)
                        self._bind(name, self.resolve(statement.value) if single else None,
                                   student, statement.value if single else None)

    def reaches(self, node: ast.AST, targets: list[Any], depth: int = _DEPTH,
                seen: set[str] | None = None) -> Any:
        """The first of ``targets`` (or a checkers' object) that ``node``'s code refers to,
        directly or through the student's own functions; None if none."""
        seen = set() if seen is None else seen
        local = {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
        for part in ast.walk(node):
            if isinstance(part, ast.Attribute | ast.Name) and not (
                    isinstance(part, ast.Name) and part.id in local):
                value = self.resolve(part)
                if value is not None and (any(value is t for t in targets) or str(getattr(
                        value, "__module__", "") or "").startswith(_CHECKERS)):
                    return value
            if isinstance(part, ast.Name) and part.id in self.code and part.id not in seen \
                    and part.id not in local and depth > 0:
                seen.add(part.id)
                found = self.reaches(self.code[part.id], targets, depth - 1, seen)
                if found is not None:
                    return found
        return None


def _import(name: str) -> Any:
    """The package's module ``name``, or None (another package's modules are not followed)."""
    if name.split(".")[0] != "nn_from_scratch":
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def library_copies(rebuilt: Rebuilt, release: Release) -> dict[str, str]:
    """Exercise id -> the name of the package's function that the student's code hands in for
    it (see the module's docstring); exercises of the student's own work are left out."""
    reader, copies = _Reader(), {}
    checks = {c.index: c for c in check_cells(rebuilt)}
    for index, (cell, placed) in enumerate(zip(rebuilt.nb.cells, rebuilt.placed)):
        if cell.cell_type != "code":
            continue
        if index in checks:
            check = checks[index]
            targets = twins({check.checker, *check.names})
            for name in check.names:
                value = reader.bound.get(name)
                if name in reader.by_student and value is not None and (
                        any(value is t for t in targets) or _package_object(value)):
                    copies[check.exercise] = getattr(value, "__name__", name)
                elif name in reader.code:
                    found = reader.reaches(reader.code[name], targets)
                    if found is not None:
                        copies[check.exercise] = getattr(found, "__name__", name)
            continue
        student = placed.released is None or placed.released.role == "exercise"
        reader.read(cell.source, student)
    return copies
