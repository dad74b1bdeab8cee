"""What in a student's cell is the student's own object, which no rule about reaching the
kernel's objects concerns: a method's ``self``, an instance of the notebook's own plain class, a
function's local variable.

:mod:`.reaching`, :mod:`.unseen` and :mod:`.allowed` refuse ways into any object of the kernel
(``x.__subclasses__()``, ``setattr(x, name, ...)``, ``x.__dict__``); on the student's own object
the same code is honest (``setattr(self, key, value)`` in a config class, ``self.modules``, a
local variable named ``gc``: red teams' false positives, rounds fourteen to sixteen). So
:func:`mark` marks those names in a cell's syntax tree, and the others read the marks. It is
decided by what runs, and hardened against each way a red team passed something else off as the
student's own (round fifteen's second look, round sixteen): an instance of a plain class of the
notebook's own (no ``__new__``, no metaclass, no bases but such classes and Python's own
containers and exceptions; no class decorator but ``dataclass``, no method decorator but
``property``; its name never bound again), held by a variable or by ``self.x`` that never holds
anything else; a method's ``self`` unless a method of the class is reached through the class
with another object (``Base.__init__(self)`` is honest); never a parameter, a ``global`` or a
nested function's parameter of the name.
"""
import ast
from collections import Counter

__all__ = ["LOCAL", "mark", "mark_own", "own_methods", "plain_class", "through_its_class"]

_OWN = "_nn_from_scratch_own"  # the mark of a name that is the student's own object: the
# names of its class's methods (a method's self, an instance of the notebook's own class)
LOCAL = "_nn_from_scratch_local"  # the mark of a function's local variable
_MARKED = "_nn_from_scratch_marked"  # a node :func:`mark` has read
_THROUGH = "_nn_from_scratch_through"  # Class.method of a plain class of the student's own
# Python's own classes a plain class may derive from (class History(list): a red team's false
# positive, round sixteen): their instances are made by Python, as the class says
_BUILTIN_BASES = {"object", "list", "dict", "set", "tuple", "Exception", "ValueError",
                  "TypeError", "RuntimeError", "KeyError", "IndexError"}


def mark(tree: ast.AST, classes: dict[str, set[str]] | None = None,
         bound: set[str] | frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """Mark in ``tree`` (a cell's code) the names that are the student's own objects, with
    their class's methods: a method's first parameter (``self``) where the method never binds
    it again, an instance of the notebook's own plain class that a function's variable (or
    ``self.x``, in a class) only ever holds, and a function's local variable as local.
    ``classes``: the notebook's own plain classes so far, each name -> its methods, inherited
    ones included (those of ``tree`` are added). ``bound``: the names the notebook bound
    before ``tree`` (a class whose name is bound again, here or later, is no longer the
    notebook's class). A plain class makes what it says: no decorator, no
    ``__new__``, no metaclass, no bases but plain classes of the notebook's own and Python's
    own containers and exceptions that the notebook has not rebound (a
    ``__new__`` that returned the shell, or ``object``, passed for the student's own: a red
    team's second look, round fifteen). Read by :func:`reaching`, :func:`own_methods` and
    :mod:`.unseen`. A part of a tree marked once is not marked again. Returns ``classes`` with
    those of ``tree``."""
    nodes, todo = [], [tree]
    while todo:  # what is not marked yet: a part marked with its cell is not read again
        node = todo.pop()
        if not getattr(node, _MARKED, False):
            setattr(node, _MARKED, True)
            nodes.append(node)
            todo.extend(ast.iter_child_nodes(node))
    classes = dict(classes or {})
    dataclasses = {id(a) for n in nodes if isinstance(n, ast.ImportFrom) and
                   n.module == "dataclasses" and not n.level for a in n.names} | {
        id(a) for n in nodes if isinstance(n, ast.Import) for a in n.names
        if a.name == "dataclasses" and a.asname is None}
    here = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(
        n.ctx, ast.Store | ast.Del)} | {n.name for n in nodes if isinstance(
            n, ast.FunctionDef | ast.AsyncFunctionDef)} | {
        n.asname or n.name.split(".")[0] for n in nodes if isinstance(n, ast.alias)
        and id(n) not in dataclasses}  # (from dataclasses import dataclass is Python's)
    for cls in sorted((n for n in nodes if isinstance(n, ast.ClassDef)),
                      key=lambda n: (n.lineno, n.col_offset)):  # a base before its subclass
        if (plain := plain_class(cls, classes, set(bound) | here)) and cls.name not in here:
            classes[cls.name] = plain
        else:  # (_Q = lambda: sys after class _Q: round sixteen)
            classes.pop(cls.name, None)
    for node in nodes:  # Class.method: its self may be any object it is handed
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.attr in classes.get(node.value.id, ()):
            setattr(node, _THROUGH, True)
    for function in (n for n in nodes
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)):
        names, stored, values = _read_function(function)
        arguments = function.args
        local = set(stored) | {a.arg for a in (
            *arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
            *([arguments.vararg] if arguments.vararg else []),
            *([arguments.kwarg] if arguments.kwarg else []))}
        declared = {name for n in ast.walk(function) if isinstance(n, ast.Global | ast.Nonlocal)
                    for name in n.names}
        local -= declared
        for name in local:
            for node in names.get(name, ()):
                setattr(node, LOCAL, True)
        parameters = Counter(a.arg for a in ast.walk(function) if isinstance(a, ast.arg))
        for name, assigned in values.items():  # an own object: only ever assigned one, never
            # a parameter (with a default: round sixteen), nor declared global
            if (made := _made_by(assigned, classes)) and stored[name] == len(assigned) and \
                    not parameters[name] and name not in declared:
                for node in names.get(name, ()):
                    setattr(node, _OWN, classes[made])
    for cls in (n for n in nodes if isinstance(n, ast.ClassDef) and n.name in classes):
        kept: dict[str, list[ast.expr]] = {}  # self.x = ..., in any method
        selves: list[ast.Name] = []
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or any(
                    not (isinstance(d, ast.Name) and d.id == "property")
                    for d in method.decorator_list):  # staticmethod under another name
                continue  # (round sixteen): only a plain method's self is its object
            positional = [*method.args.posonlyargs, *method.args.args]
            names, stored, _ = _read_function(method)
            if not positional or positional[0].arg in stored or sum(
                    a.arg == positional[0].arg for a in ast.walk(method)
                    if isinstance(a, ast.arg)) > 1:  # def inner(self): another object
                continue
            selves += names.get(positional[0].arg, [])
            for node in names.get(positional[0].arg, ()):
                setattr(node, _OWN, classes[cls.name])
        for node in ast.walk(cls):
            for target, value in _assigned(node):
                if isinstance(target, ast.Attribute) and target.value in selves:
                    kept.setdefault(target.attr, []).append(value)
        stores = Counter(n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute)
                         and n.value in selves and isinstance(n.ctx, ast.Store | ast.Del))
        for attribute, assigned in kept.items():
            if (made := _made_by(assigned, classes)) and stores[attribute] == len(assigned):
                for node in ast.walk(cls):
                    if isinstance(node, ast.Attribute) and node.value in selves and \
                            node.attr == attribute and isinstance(node.ctx, ast.Load):
                        setattr(node, _OWN, classes[made])
    return classes


def plain_class(cls: ast.ClassDef, classes: dict[str, set[str]],
                bound: set[str] | frozenset[str] = frozenset()) -> set[str] | None:
    """The methods of ``cls`` (its own and those of its bases) if it is a plain class of the
    notebook's own (see :func:`mark`), else None. Its static and class methods are not
    counted: they take no instance. ``bound``: the names the notebook binds (a builtin base
    such as ``list`` rebound is no longer Python's)."""
    if cls.keywords or any(not _dataclass(d, bound) for d in cls.decorator_list) or any(
            not (isinstance(b, ast.Name) and (b.id in classes or b.id in _BUILTIN_BASES
                                              and b.id not in bound)) for b in cls.bases):
        return None  # a decorator may return anything for the class (round sixteen)
    methods = {f.name for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
               and not any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                           for d in f.decorator_list)}
    if "__new__" in {f.name for f in cls.body if isinstance(f, ast.FunctionDef)} or any(
            isinstance(n, ast.Name) and n.id == "__new__" or isinstance(n, ast.Attribute)
            and (n.attr == "__new__" or n.attr == "__class__" and not isinstance(
                n.ctx, ast.Load)) for n in ast.walk(cls)):  # self.__class__.__name__ is read
        return None
    for base in cls.bases:
        methods |= classes.get(getattr(base, "id", ""), set())
    return methods


def _dataclass(decorator: ast.expr, bound: set[str] | frozenset[str]) -> bool:
    """Whether ``decorator`` is ``dataclass``, ``dataclasses.dataclass`` or either called
    (``@dataclass(frozen=True)``), the notebook never having bound that name: it hands back
    the class it is given."""
    if isinstance(decorator, ast.Call):
        decorator = decorator.func
    return isinstance(decorator, ast.Name) and decorator.id == "dataclass" and \
        "dataclass" not in bound or isinstance(decorator, ast.Attribute) and \
        decorator.attr == "dataclass" and isinstance(decorator.value, ast.Name) and \
        decorator.value.id == "dataclasses" and "dataclasses" not in bound


def _made_by(assigned: list[ast.expr], classes: dict[str, set[str]]) -> str:
    """The one plain class of the notebook's own that every value in ``assigned`` is a call
    of, or ""."""
    made = {v.func.id if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
            and v.func.id in classes else "" for v in assigned}
    return made.pop() if len(made) == 1 and "" not in made else ""


def _assigned(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    """The (target, value) pairs a plain assignment ``node`` makes: ``a = v``, ``a: T = v``,
    ``a, b = v, w``; none for anything else."""
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [(node.target, node.value)]
    if not isinstance(node, ast.Assign):
        return []
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for target in node.targets:
        if isinstance(target, ast.Tuple | ast.List) and isinstance(
                node.value, ast.Tuple | ast.List) and len(target.elts) == len(node.value.elts):
            pairs += zip(target.elts, node.value.elts)
        else:
            pairs.append((target, node.value))
    return pairs


def _read_function(function: ast.AST) -> tuple[dict[str, list[ast.Name]], Counter[str],
                                                dict[str, list[ast.expr]]]:
    """In ``function``'s code (nested functions included): each name's nodes, how many times
    each name is bound by Python's own statements (assigned, deleted, a loop's, a with's; an
    import binds a module, never the student's own object, and is not counted as local), and
    the values each name is given by a plain ``name = value`` or ``name: T = value``."""
    names: dict[str, list[ast.Name]] = {}
    stored: Counter[str] = Counter()
    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            names.setdefault(node.id, []).append(node)
            if isinstance(node.ctx, ast.Store | ast.Del):
                stored[node.id] += 1
        for target, value in _assigned(node):
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(value)
    imported = {a.asname or a.name.split(".")[0] for a in ast.walk(function)
                if isinstance(a, ast.alias)}
    for name in imported:  # a module, under a name: no local of the student's, no own object
        stored[name] += 1000
        values.pop(name, None)
    return names, stored, values


def mark_own(node: ast.Name, methods: set[str]) -> None:
    """Mark ``node`` as the student's own object, of a class with ``methods`` (a name of the
    notebook's top level that the reader knows to hold one: :class:`.reading.Reader`)."""
    setattr(node, _OWN, methods)


def own_methods(node: ast.AST) -> set[str]:
    """The methods of the student's own class that ``node`` (a name) is an object of, as
    :func:`mark` marked it; empty if it is not known to be one."""
    methods: set[str] = getattr(node, _OWN, set()) if isinstance(
        node, ast.Name | ast.Attribute) else set()
    return methods


def through_its_class(node: ast.AST) -> bool:
    """Whether ``node`` is ``Class.method`` of a plain class of the student's own, as
    :func:`mark` marked it (called with another object as its self, it is no longer theirs)."""
    return bool(getattr(node, _THROUGH, False))
