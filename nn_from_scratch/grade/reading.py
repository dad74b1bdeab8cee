"""What a notebook's code refers to, read as Python would run it, without running it.

:class:`Reader` reads cells in order and keeps what each name is bound to: one of
the package's modules or objects (``import``, ``from ... import``, ``x = a.b``,
``getattr(a, "b")``), or the student's own code (a ``def``, a class, the value
assigned). :meth:`Reader.reaches` says which of the package's objects a piece of
code refers to, through the student's own functions, classes, lambdas and
``partial`` calls, and the imports inside them; :func:`hiding` and
:meth:`Reader.dynamic` name what hides that from a reading (``exec``, ``getattr``
of the package by a computed string, ``globals()``...). :mod:`.copying` judges
with it.
"""
import ast
import importlib
import types
from dataclasses import dataclass
from typing import Any

from ..parsing import parse

__all__ = ["Hidden", "Reader", "hides_a_binding", "hiding"]

_CHECKERS = "nn_from_scratch.exercises"
_DEPTH = 4  # how far through the student's own functions a reference is followed
# What hides from a static reading what code reaches: calls by name, and attributes
_HIDING_CALLS = {"exec", "eval", "compile", "__import__", "import_module", "globals", "vars",
                 "locals", "setattr", "delattr", "attrgetter", "methodcaller"}
_HIDING_ATTRIBUTES = {"__dict__", "__globals__", "__builtins__", "__closure__", "__code__",
                      "modules", "__getattribute__"}


def hiding(node: ast.AST) -> str:
    """The first thing in ``node`` that hides what it runs (``exec``, ``globals``...), or ""."""
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            func = part.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name in _HIDING_CALLS and not (isinstance(func, ast.Attribute)
                                              and name == "compile"):  # jit(f).lower().compile()
                return f"{name}()"
        elif isinstance(part, ast.Attribute) and part.attr in _HIDING_ATTRIBUTES:
            return part.attr
    return ""


# A namespace (``globals()``, ``vars()``, ``locals()``, ``x.__dict__``, ``sys.modules``...) read
# and nothing more: its methods that only read, and the builtins that only read what they get
_READ_METHODS = {"get", "keys", "values", "items", "copy", "__contains__", "__getitem__",
                 "__len__", "__iter__"}
_READERS = {"print", "display", "pprint", "len", "sorted", "list", "tuple", "set", "frozenset",
            "dict", "repr", "str", "type", "sum", "any", "all", "isinstance", "id", "iter",
            "enumerate", "zip", "reversed", "min", "max", "format"}
_NAMESPACE_CALLS = {"globals", "vars", "locals"}
_NAMESPACE_ATTRIBUTES = {"__dict__", "__globals__", "__builtins__", "modules"}


def _namespace_written(use: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether the namespace expression ``use`` may be written through where it stands: a
    subscript stored or deleted, a method that writes (``update``...), handed to a function
    that is not a plain reader (it may write it), or kept in a name (``g = globals()``: a later
    ``g["f"] = ...`` is not seen)."""
    parent = parents.get(use)
    if isinstance(parent, ast.Subscript) and parent.value is use:
        # sys.modules' entries are namespaces too (sys.modules["__main__"].f = ...)
        return not isinstance(parent.ctx, ast.Load) or (
            isinstance(use, ast.Attribute) and use.attr in ("modules", "__builtins__")
            and _namespace_written(parent, parents))
    if isinstance(parent, ast.Attribute) and parent.value is use:
        return parent.attr not in _READ_METHODS
    if isinstance(parent, ast.Call) and use is not parent.func:
        return not (isinstance(parent.func, ast.Name) and parent.func.id in _READERS)
    if isinstance(parent, ast.keyword):
        return True
    return isinstance(parent, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr |
                      ast.Return | ast.Yield | ast.Lambda)


def hides_a_binding(statement: ast.AST) -> str:
    """What in ``statement`` may bind a name the reading cannot see (``exec``, ``setattr``,
    ``globals()["f"] = ...``), so that every name bound before it is in doubt; "" if nothing.

    A namespace only read (``print(vars(params))``, ``locals().keys()``, ``x.__dict__["w"]``)
    binds nothing: an honest student's look around does not put the answers in doubt (what a
    name handed in reaches through such a read is judged with that name's own code). An entry
    of ``sys.modules`` is followed as a namespace too: ``sys.modules["__main__"]`` is one.
    """
    parents = {child: node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}
    for part in ast.walk(statement):
        if isinstance(part, ast.Call):
            func = part.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name in _NAMESPACE_CALLS:
                if _namespace_written(part, parents):
                    return f"{name}()"
            elif name in _HIDING_CALLS and not (isinstance(func, ast.Attribute)
                                                and name == "compile"):
                return f"{name}()"  # exec, setattr, import_module...: anything may follow
        elif isinstance(part, ast.Attribute) and part.attr in _NAMESPACE_ATTRIBUTES:
            if _namespace_written(part, parents):
                return part.attr
        elif isinstance(part, ast.Attribute) and part.attr in _HIDING_ATTRIBUTES:
            return part.attr
    return ""


@dataclass(frozen=True)
class Hidden:
    """Code the reading cannot follow: ``how`` names what hides it."""

    how: str


def _checkers(value: Any) -> bool:
    """Whether ``value`` is of the checkers' package (a module of it, or an object)."""
    name = getattr(value, "__name__", "") if isinstance(value, types.ModuleType) else \
        getattr(value, "__module__", "")
    return str(name or "").startswith(_CHECKERS)


def _package_object(value: Any) -> bool:
    return getattr(value, "__name__", "").startswith("nn_from_scratch") or \
        str(getattr(value, "__module__", "") or "").startswith("nn_from_scratch")


class Reader:
    """The notebook's names as its cells bind them, in order (see the module's docstring)."""

    def __init__(self) -> None:
        self.bound: dict[str, Any] = {}  # name -> a package module or object, or None
        self.by_student: set[str] = set()  # names the student's cells bound last
        self.code: dict[str, ast.AST] = {}  # name -> the student's def, or the value assigned
        self.when: dict[str, int] = {}  # name -> the statement that bound it last
        self.count = 0  # statements read
        self.hidden: tuple[int, str] = (-1, "")  # the last student statement that hid what it
        # bound (exec...): every name bound before it is in doubt

    def resolve(self, node: ast.AST) -> Any:
        """The package object ``node`` (a name, an attribute chain, ``getattr`` with a constant
        string) stands for, or None."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "getattr" and len(node.args) >= 2:
            base, attribute = self.resolve(node.args[0]), node.args[1]
            if base is not None and isinstance(attribute, ast.Constant) and \
                    isinstance(attribute.value, str):
                return getattr(base, attribute.value, None)
        return None

    def dynamic(self, node: ast.AST) -> str:
        """What in ``node`` hides what it reaches: :func:`hiding`'s, or a ``getattr`` of one
        of the package's objects by a computed string; "" if nothing."""
        for part in ast.walk(node):
            if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and \
                    part.func.id == "getattr" and len(part.args) >= 2 and \
                    self.resolve(part.args[0]) is not None and self.resolve(part) is None:
                return "getattr()"
        return hiding(node)

    def in_doubt(self, name: str) -> str:
        """What hid, after ``name`` was last bound where the grader could see it, what the
        student's code bound (so ``name`` may be anything); "" if nothing did."""
        after, how = self.hidden
        return how if self.when.get(name, -1) < after else ""

    def _bind(self, name: str, value: Any, student: bool, code: ast.AST | None = None) -> None:
        self.bound[name] = value if value is not None and _package_object(value) else None
        self.when[name] = self.count
        self.by_student.discard(name)
        self.code.pop(name, None)
        if student:
            self.by_student.add(name)
            if code is not None:
                self.code[name] = code

    def read(self, source: str, student: bool) -> None:
        try:
            tree = parse(source)
        except SyntaxError:
            return
        for statement in tree.body:
            self.count += 1
            if student and not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef |
                                          ast.ClassDef) and (how := hides_a_binding(statement)):
                self.hidden = (self.count, how)
            self.statement(statement, student)

    def statement(self, statement: ast.stmt, student: bool) -> None:
        """Bind what one statement binds: imports, defs and classes, assignments."""
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                top = alias.name if alias.asname else alias.name.split(".")[0]
                self._bind(alias.asname or top, _import(top), student)
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            module = _import(statement.module)
            for alias in statement.names:
                value = getattr(module, alias.name, None) if module is not None else None
                if value is None and module is not None:
                    value = _import(f"{statement.module}.{alias.name}")
                self._bind(alias.asname or alias.name, value, student)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._bind(statement.name, None, student, statement)
        elif isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [
                statement.target]
            for target in targets:
                self._assign(target, statement.value, student)

    def _assign(self, target: ast.AST, value: ast.AST, student: bool) -> None:
        """``target = value``: a name gets what ``value`` stands for; ``a, b = x, y`` pairs
        them; any other shape gives every name the whole of ``value`` as its code."""
        if isinstance(target, ast.Name):
            self._bind(target.id, self.resolve(value), student, value)
        elif isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
                and len(target.elts) == len(value.elts):
            for part, part_value in zip(target.elts, value.elts):
                self._assign(part, part_value, student)
        else:
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                self._bind(name, None, student, value)

    def reaches(self, node: ast.AST, targets: list[Any], depth: int = _DEPTH,
                seen: set[str] | None = None) -> Any:
        """The first of ``targets`` (or a checkers' object) that ``node``'s code refers to,
        directly or through the student's own functions; None if none."""
        seen = set() if seen is None else seen
        local = {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
        outer = dict(self.bound), set(self.by_student), dict(self.code), dict(self.when)
        try:  # imports inside a function bind names for its body
            for part in ast.walk(node):
                if isinstance(part, ast.Import | ast.ImportFrom) and part is not node:
                    self.statement(part, False)
                    local -= {alias.asname or alias.name.split(".")[0] for alias in part.names}
            return self._reaches(node, targets, depth, seen, local)
        finally:
            self.bound, self.by_student, self.code, self.when = outer

    def _reaches(self, node: ast.AST, targets: list[Any], depth: int, seen: set[str],
                 local: set[str]) -> Any:
        if how := self.dynamic(node):
            return Hidden(how)
        for part in ast.walk(node):
            if isinstance(part, ast.Attribute | ast.Name) and not (
                    isinstance(part, ast.Name) and part.id in local):
                value = self.resolve(part)
                if value is not None and (any(value is t for t in targets) or _checkers(value)):
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
