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
from .allowed import outside
from .desugar import patterns_read
from .magics import QUIET_MAGICS, as_ipython_runs_it, magic
from .modules import imported
from .own import LOCAL, mark, mark_own, own_methods
from .reaching import REACHING, reaching
from .unseen import (
    BINDING_ATTRIBUTES,
    BINDING_CALLS,
    NAMESPACE_ATTRIBUTES,
    NAMESPACE_CALLS,
    READERS_OF,
    binding_call,
    declared_global,
    hides_a_binding,
    hiding_methods,
    lasting,
    named_attribute,
    rebinds_a_reader,
    stashes_a_namespace,
)

__all__ = ["Hidden", "Reader", "hiding"]

_CHECKERS, _GRADER = "nn_from_scratch.exercises", "nn_from_scratch.grade"
_ABSENT = object()  # a name a table did not hold
_DEPTH = 12  # how far through the student's own functions a reference is followed; deeper
# is code the reading cannot follow (an honest answer's helpers go two or three deep)
# What hides from a static reading what code reaches: what may bind a name unseen, and any
# namespace, read or written (handed-in code has no need of either)
_HIDING_CALLS = BINDING_CALLS | NAMESPACE_CALLS
_HIDING_ATTRIBUTES = BINDING_ATTRIBUTES | NAMESPACE_ATTRIBUTES
# ...but not as attributes of the notebook's own object (``self.__dict__.update(kwargs)``,
# ``self.modules``: red team, round fifteen, cost two solved notebooks 4 and 6 points)
_OWN_ATTRIBUTES = {"__dict__", "modules"}


def hiding(node: ast.AST) -> str:
    """The first thing in ``node`` that hides what it runs (``exec``, ``globals``...), or
    reaches any object (:mod:`.reaching`), or ""."""
    if how := reaching(node):
        return how
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            if name := binding_call(part, _HIDING_CALLS):
                return f"{name}()"
            if attribute := named_attribute(part, _HIDING_ATTRIBUTES):
                return attribute
        elif isinstance(part, ast.Attribute) and part.attr in _HIDING_ATTRIBUTES and not (
                part.attr in _OWN_ATTRIBUTES and own_methods(part.value)):
            return part.attr
    return ""


@dataclass(frozen=True)
class Hidden:
    """Code the reading cannot follow: ``how`` names what hides it."""

    how: str


def _of(value: Any, package: str) -> bool:
    """Whether ``value`` is of ``package`` (a module of it, or an object): the checkers'
    (``nn_from_scratch.exercises``) or the grader's (``nn_from_scratch.grade``)."""
    name = getattr(value, "__name__", "") if isinstance(value, types.ModuleType) else \
        getattr(value, "__module__", "")
    return str(name or "").startswith(package)


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
        self.always = ""  # a hook that may rebind any name after any cell: every name in doubt
        self.plain: set[str] = set()  # names last bound to an object the notebook made
        self.imported: dict[str, str] = {}  # names last bound by "import x (as y)": y -> x,
        # and by "from x import f (as y)" of a reader of the standard library: y -> "x:f"
        self.readers_kept = True  # no statement yet could have replaced pprint.pprint & co.
        self.classes: dict[str, set[str]] = {}  # the notebook's own plain classes: methods
        self.made: dict[str, str] = {}  # names of the top level last bound to an instance of
        # the notebook's own plain class: name -> the class (history = Stack())
        self.modules: dict[str, str] = {}  # names last bound by an import: name -> the
        # module (``import numpy.linalg as la``: la -> numpy; ``from IPython.display import
        # display``: display -> IPython.display)
        self.module_names: set[str] = set()  # those of them bound to the module itself
        self.imports: dict[str, Any] = {}  # ...and what each is (allowed.imported): None for
        # a module no exercise may use

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
        return self.always or (how if self.when.get(name, -1) < after else "")

    def _bind(self, name: str, value: Any, student: bool, code: ast.AST | None = None) -> None:
        previous = self.code.get(name) if student and name in self.by_student else None
        if code is not None and previous is not None and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(code)):
            # "relu = relu[0]": the new value is made of the old, so both are its code
            # (round ten: a match captured the library's relu into a list first)
            code = ast.Module(body=[_as_statement(previous), _as_statement(code)],
                              type_ignores=[])
        self.bound[name] = value if value is not None and _package_object(value) else None
        if student and _of(value, _GRADER):  # g = pkg.grade: the grader's modules, by any path
            self.always = self.always or REACHING["nn_from_scratch.grade"]  # (round fifteen)
        if code is not None and self.bound[name] is None:  # made by the notebook's own code
            self.plain.add(name)
        else:
            self.plain.discard(name)
        self.when[name] = self.count
        self.imported.pop(name, None)
        self.modules.pop(name, None)
        self.module_names.discard(name)
        self.imports.pop(name, None)
        if not isinstance(code, ast.ClassDef):  # a class's name bound again: no longer the
            self.classes.pop(name, None)  # notebook's class (round sixteen)
        self.made = {held: made for held, made in self.made.items()
                     if held != name and made != name}
        if student and isinstance(code, ast.Call) and isinstance(code.func, ast.Name) and \
                code.func.id in self.classes:
            self.made[name] = code.func.id
        self.by_student.discard(name)
        self.code.pop(name, None)
        if student:
            self.by_student.add(name)
            if code is not None:
                self.code[name] = code

    def read(self, source: str, student: bool) -> None:
        try:
            tree: ast.Module | None = parse(source)
        except SyntaxError:  # IPython's syntax, as the kernel turns it into Python (round
            tree = as_ipython_runs_it(source)  # eight: one %%capture line hid a cell)
        if tree is None:
            return  # a cell that does not parse runs nothing
        tree = patterns_read(tree)  # case object(__globals__=ns): ns = subject.__globals__
        self.classes = mark(tree, self.classes, {  # the names bound so far, but what was
            name for name in self.when if self.modules.get(name) != "dataclasses"})  # imported
        # from dataclasses
        for statement in tree.body:
            ran = magic(statement)
            if ran is not None:
                name, code = ran
                if name in QUIET_MAGICS:
                    continue
                if code is not None:  # %time, %%capture...: the code they run, read as code
                    self.read(code, student)
                    for target in getattr(statement, "targets", []):  # t = %timeit -o f(x):
                        self._bind(target.id, None, student)  # what it measured
                    continue
                self.count += 1
                if student:  # any other magic may run anything
                    self.hidden = (self.count, f"%{name}")
                continue
            self.count += 1
            if not student:
                self.statement(statement, student)
                continue
            self.readers_kept = self.readers_kept and not rebinds_a_reader(statement)
            for node in _run_now(statement):  # history.push(x), history = Stack() above
                if isinstance(node, ast.Name) and node.id in self.made:
                    mark_own(node, self.classes[self.made[node.id]])
            if "gc" in self.plain and "gc" not in self.imported:  # the notebook's own variable
                for node in ast.walk(statement):  # gc (a gradient check), no module
                    if isinstance(node, ast.Name) and node.id == "gc":
                        setattr(node, LOCAL, True)

            def code_of(name: str) -> ast.AST | None:
                return self.code.get(name) if name in self.by_student else None

            def hides(part: ast.stmt) -> str:
                return hides_a_binding(part, set(self.when), self.plain, code_of,
                                       imported=self.imported if self.readers_kept else {})

            self.always = self.always or lasting(statement, self.modules) or outside(
                statement, self.modules, self.module_names, self.imports,
                set(self.when) - set(self.imports)) or hiding_methods(
                statement, hides) or stashes_a_namespace(
                statement, set(self.when), self.plain,
                self.imported if self.readers_kept else {})
            if how := hides(statement):
                self.hidden = (self.count, how)
                self.readers_kept = False  # setattr, exec...: may have replaced one
            rebound = declared_global(statement, code_of)  # f() of a def with "global relu"
            self.statement(statement, student)
            for changed in _mentioned(statement) - set(_bound_within(statement)):
                previous = self.code.get(changed) if changed in self.by_student else None
                if previous is not None and not isinstance(previous, _DEFINED):
                    self.code[changed] = ast.Module(body=[  # box.append(relu): box holds it
                        *(previous.body if isinstance(previous, ast.Module) else
                          [_as_statement(previous)]), statement], type_ignores=[])
            for global_name, binder in rebound.items():  # bound by that def's code, here
                self._bind(global_name, None, student, binder)

    def statement(self, statement: ast.stmt, student: bool) -> None:
        """Bind what one statement binds: imports, defs and classes, assignments."""
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                top = alias.name if alias.asname else alias.name.split(".")[0]
                self._bind(alias.asname or top, _import(top), student)
                self.imported[alias.asname or top] = top
                self.modules[alias.asname or top] = alias.name if alias.asname else top
                self.module_names.add(alias.asname or top)
                self.imports[alias.asname or top] = imported(alias.name if alias.asname else top)
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            module = _import(statement.module)
            if module is not None and any(alias.name == "*" for alias in statement.names):
                for name in _exported(module):
                    self._bind(name, getattr(module, name, None), student)
                return  # another module's "*" hides what it binds (unseen.py: "import *")
            for alias in statement.names:
                value = getattr(module, alias.name, None) if module is not None else None
                if value is None and module is not None:
                    value = _import(f"{statement.module}.{alias.name}")
                self._bind(alias.asname or alias.name, value, student)
                self.modules[alias.asname or alias.name] = value.__name__ if isinstance(
                    value, types.ModuleType) else statement.module  # (from enum import bltns:
                # builtins, a third look at round sixteen)
                if isinstance(value, types.ModuleType):
                    self.module_names.add(alias.asname or alias.name)
                self.imports[alias.asname or alias.name] = imported(statement.module,
                                                                    alias.name)
                if alias.name in READERS_OF.get(statement.module, ()):  # from pprint import pp
                    self.imported[alias.asname or alias.name] = f"{statement.module}:{alias.name}"
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self._bind(statement.name, None, student, statement)
        elif isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [
                statement.target]
            for target in targets:
                self._assign(target, statement.value, student)
        else:  # for, with, if, try, walrus...: each name it binds gets the whole statement as
            # its code (round three's and seven's binders the reading did not see)
            for name in _bound_within(statement):
                self._bind(name, None, student, statement)
            for part in ast.walk(statement):  # imports in a block bind as imports do, but
                if isinstance(part, ast.Import | ast.ImportFrom):  # vouch for no reader: the
                    self.statement(part, student)  # block may never run them (round ten:
                    for alias in part.names:  # "if False: from pprint import pprint")
                        self.imported.pop(alias.asname or alias.name.split(".")[0], None)

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
        imports = [part for part in ast.walk(node)
                   if isinstance(part, ast.Import | ast.ImportFrom) and part is not node]
        if not imports:
            return self._reaches(node, targets, depth, seen, local)
        # Imports inside a function bind names for its body: only the names they bind are
        # kept aside and put back (a copy of every table at every helper followed made the
        # reading quadratic: 15,000 helpers took 377 s, red team round twelve)
        names = {name for part in imports for name in self._imported_names(part)}
        outer = {name: (self.bound.get(name, _ABSENT), name in self.by_student,
                        self.code.get(name, _ABSENT), self.when.get(name, _ABSENT))
                 for name in names}
        try:
            for part in imports:
                self.statement(part, False)
                local -= {alias.asname or alias.name.split(".")[0] for alias in part.names}
            return self._reaches(node, targets, depth, seen, local)
        finally:
            for name, (bound, by_student, code, when) in outer.items():
                tables: tuple[tuple[dict[str, Any], Any], ...] = (
                    (self.bound, bound), (self.code, code), (self.when, when))
                for table, value in tables:
                    if value is _ABSENT:
                        table.pop(name, None)
                    else:
                        table[name] = value
                if by_student:
                    self.by_student.add(name)
                else:
                    self.by_student.discard(name)

    @staticmethod
    def _imported_names(part: ast.Import | ast.ImportFrom) -> list[str]:
        """The names :meth:`statement` binds for an import (a ``*`` of one of the package's
        modules: all it exports; of another module, the name ``*`` itself)."""
        if isinstance(part, ast.ImportFrom) and any(alias.name == "*" for alias in part.names):
            module = _import(part.module) if part.module and not part.level else None
            if module is not None:
                return _exported(module)
        if isinstance(part, ast.ImportFrom):
            return [alias.asname or alias.name for alias in part.names]
        return [alias.asname or alias.name.split(".")[0] for alias in part.names]

    def _reaches(self, node: ast.AST, targets: list[Any], depth: int, seen: set[str],
                 local: set[str]) -> Any:
        if how := self.dynamic(node):
            return Hidden(how)
        for part in ast.walk(node):
            if isinstance(part, ast.Attribute | ast.Name) and not (
                    isinstance(part, ast.Name) and part.id in local):
                value = self.resolve(part)
                if value is not None and (any(value is t for t in targets)
                                          or _of(value, _CHECKERS)):
                    return value
            if isinstance(part, ast.Name) and part.id in self.code and part.id not in seen \
                    and part.id not in local:
                if depth <= 0:  # past any honest chain of helpers (round ten: seven deep)
                    return Hidden(f"helpers nested deeper than {_DEPTH}")
                seen.add(part.id)
                found = self.reaches(self.code[part.id], targets, depth - 1, seen)
                if found is not None:
                    return found
        return None


# a def's or a class's code, which a later statement that names it does not change
_DEFINED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _mentioned(statement: ast.stmt) -> set[str]:
    """The names ``statement`` reads: any of them may have its object changed there, and what
    it puts there is then part of what the name holds. A method called on it
    (``box.append(x)``: round twenty), but also the name handed to a call
    (``operator.setitem(box, 0, f)``, ``list.append(box, f)``, a helper of the student's own),
    a method taken for later (``add = box.append``), a subscript as a ``for``, ``with`` or
    assignment target (``for box[0] in [f]``), in an ``except`` or a ``case`` (round
    twenty-one: 07.1 to 07.5 each earned its point with the library's own function)."""
    return {part.id for part in ast.walk(statement)
            if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load)}


def _run_now(statement: ast.stmt) -> list[ast.AST]:
    """The nodes of ``statement`` that run when it runs, not later: none of a function's or a
    lambda's body, nor of a class's methods (a name there may hold anything by then)."""
    nodes: list[ast.AST] = []
    todo: list[ast.AST] = [statement]
    while todo:
        node = todo.pop()
        nodes.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return nodes


def _as_statement(code: ast.AST) -> ast.stmt:
    return code if isinstance(code, ast.stmt) else ast.Expr(value=code)  # type: ignore[arg-type]


def _bound_within(statement: ast.stmt) -> list[str]:
    """The names a statement other than an import, a ``def`` or an assignment binds, at any
    depth: loop and ``with`` targets, ``except ... as``, walrus, a ``def`` or an assignment in
    a block, ``del``, a ``match`` pattern's captures (its imports are bound by
    :meth:`Reader.statement`)."""
    names = []
    for part in ast.walk(statement):
        if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Store | ast.Del):
            names.append(part.id)
        elif isinstance(part, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(part.name)
        elif isinstance(part, ast.ExceptHandler) and part.name:
            names.append(part.name)
        elif isinstance(part, ast.MatchAs | ast.MatchStar) and part.name:  # round ten:
            names.append(part.name)  # "match W: case relu:" binds relu
        elif isinstance(part, ast.MatchMapping) and part.rest:
            names.append(part.rest)
    return list(dict.fromkeys(names))


def _exported(module: Any) -> list[str]:
    """The names ``from module import *`` binds."""
    return list(getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")]))


def _import(name: str) -> Any:
    """The package's module ``name``, or None (another package's modules are not followed)."""
    if name.split(".")[0] != "nn_from_scratch":
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
