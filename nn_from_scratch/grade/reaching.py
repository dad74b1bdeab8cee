"""Code that reaches any object of the kernel, whatever its name: the grader's own included.

The grader's answering object lives in the kernel (:mod:`.answers`), so a cell can patch it:
have it hand each check the library's function for an exercise whose code computes nothing.
Named (``_nn_from_scratch_answers``), that is a note; reached without its name, nothing in the
source said so. Red team, round fourteen, found it through the garbage collector
(``gc.get_objects()``, by its type's name: 5 of 7 points for lesson 07 with every stub still
raising), then, once that was read, through ``object.__subclasses__()`` (5 of 7, no note);
the stack of frames that called a function reaches the grader's code too. None of these is
needed by any lesson's exercise, so a student's code that uses one puts every answer checked
after it in doubt (:func:`.unseen.lasting`): it earns nothing, and says why.

Named, the grader's answering object (``_nn_from_scratch_answers``, a string naming it too)
and its modules (``nn_from_scratch.grade``: a lesson imports the library's, never the
grader's) do the same; before round fourteen they were a note, and a stub changed by one token
kept the points the patched object handed over.

Read from the source, as spelt: an attribute (``gc.get_objects``, ``x.__subclasses__``,
``frame.f_back``), a name imported from ``gc``, ``inspect`` or ``sys``, the module ``gc`` itself
used for anything but its harmless functions (``gc.collect()`` is honest; ``getattr(gc, ...)``,
``g = gc`` and ``import gc as g`` hand it on), and ``gc`` imported by a string. A method of the
student's own called through ``self`` is theirs; so is a function of their own named like one
of these, and a string that is only a string (a red team's second look, round fourteen: an
honest helper named ``get_objects`` and a dict key cost two solved notebooks every point).

Round fifteen: ``self`` is the student's only where it is a method's own first parameter,
never reassigned (``self = object; self.__subclasses__()`` passed as the student's); a local
variable named ``gc`` (``gc = jnp.maximum(0, x)``) is no module; a string put together from
constants (``getattr(object, "__subcla" + "sses__")``) is read as the string it makes, and a
string naming a frame's or a class's way in (``"__subclasses__"``, ``"f_back"``) reaches as the
attribute does; the grader's modules reached as attributes of the package
(``nn_from_scratch.grade.answers``, the package imported by a lesson's first cell) are the
grader's modules. :func:`mark` marks a cell's names that are the student's own objects (a
method's ``self``, an instance of the notebook's own class, a local variable).
"""
import ast
from collections import Counter
from typing import Any

__all__ = ["GC_HARMLESS", "LOCAL", "REACHING", "attribute_argument", "constant_text", "mark",
           "mark_own", "own_methods", "plain_class", "reached", "reaching"]

# the attribute, or the name imported, and how the hint says it
REACHING = {
    "get_objects": "gc.get_objects()", "get_referrers": "gc.get_referrers()",
    "get_referents": "gc.get_referents()", "gc": "the module gc (handed on, or under another "
                                                 "name)",
    "__subclasses__": "__subclasses__()",
    "_getframe": "sys._getframe()", "currentframe": "inspect.currentframe()",
    "f_back": "a frame's f_back", "f_globals": "a frame's f_globals",
    "f_locals": "a frame's f_locals", "tb_frame": "a traceback's tb_frame",
    "gi_frame": "a generator's gi_frame", "cr_frame": "a coroutine's cr_frame",
    "ag_frame": "a generator's ag_frame", "stack": "inspect.stack()", "trace": "inspect.trace()",
    "getouterframes": "inspect.getouterframes()", "getinnerframes": "inspect.getinnerframes()",
    "getargvalues": "inspect.getargvalues()",
    "_nn_from_scratch_answers": "the grader's answering object (_nn_from_scratch_answers)",
    "nn_from_scratch.grade": "the grader's own modules (nn_from_scratch.grade)",
    "through its class": "a method of your class called with another object as its self "
                         "(Class.method(x))",
}
# the grader's, in the kernel: its answering object, and the package it comes from (a lesson
# imports the library's modules, never the grader's); named, a string too
_ANSWERS, _GRADER = "_nn_from_scratch_answers", "nn_from_scratch.grade"
# attributes that reach, on whatever object (the rest only on the module ``inspect``)
_ANYWHERE = {"get_objects", "get_referrers", "get_referents", "__subclasses__", "_getframe",
             "currentframe", "f_back", "f_globals", "f_locals", "tb_frame", "gi_frame",
             "cr_frame", "ag_frame"}
_INSPECT = {"stack", "trace", "getouterframes", "getinnerframes", "getargvalues", "currentframe"}
_FROM = {"gc": {"get_objects", "get_referrers", "get_referents", "*"},
         "inspect": _INSPECT | {"*"}, "sys": {"_getframe", "*"}}
# what of gc an honest notebook may use: collecting, and its switches and counts
GC_HARMLESS = {"collect", "enable", "disable", "isenabled", "get_count", "get_stats",
                "get_threshold", "set_threshold", "freeze", "unfreeze", "get_freeze_count",
                "get_debug", "set_debug", "is_tracked", "is_finalized"}


# attributes whose name in a string reaches as the attribute does (``getattr(x, "f_back")``,
# ``vars(type)["__subclasses__"]``): none is a word an honest string holds
_AS_STRINGS = {"__subclasses__", "_getframe", "f_back", "f_globals", "f_locals", "tb_frame",
               "gi_frame", "cr_frame", "ag_frame"}
# the grader's modules, as attributes of ``nn_from_scratch.grade`` (``x.grade.answers``)
_GRADER_MODULES = {"answers", "apart", "assignment", "batch", "capped", "checker_process",
                   "checking", "cli", "copying", "exports", "inert", "intake", "journal", "lms",
                   "magics", "notebook", "reaching", "reading", "rebuild", "release", "report",
                   "results", "suspicious", "unseen", "verdicts"}
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


def constant_text(node: ast.AST) -> str | None:
    """The string ``node`` makes of constants alone (``"__subcla" + "sses__"``, an f-string of
    constants, ``"%s%s" % ("a", "b")``, ``"".join([...])``, ``"{}".format(...)``, a slice such
    as ``[::-1]``), or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left = constant_text(node.left)
        right: Any = constant_text(node.right) if not isinstance(node.right, ast.Tuple) else \
            _texts(node.right.elts)
        if left is not None and right is not None:
            return left + right if isinstance(node.op, ast.Add) and isinstance(right, str) \
                else _formatted(left, right) if isinstance(node.op, ast.Mod) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            (text := constant_text(node.func.value)) is not None and not node.keywords:
        if node.func.attr == "join" and len(node.args) == 1 and isinstance(
                node.args[0], ast.List | ast.Tuple) and (parts := _texts(node.args[0].elts)):
            return text.join(parts)
        if node.func.attr == "format" and (parts := _texts(node.args)) is not None:
            return _formatted(text, parts, "format")
    if isinstance(node, ast.Subscript) and (text := constant_text(node.value)) is not None \
            and isinstance(node.slice, ast.Slice):  # "__sessalcbus__"[::-1]
        try:
            bounds = [None if p is None else ast.literal_eval(p) for p in (
                node.slice.lower, node.slice.upper, node.slice.step)]
            return text[slice(*bounds)]
        except (ValueError, TypeError, SyntaxError):
            return None
    if isinstance(node, ast.JoinedStr):
        pieces = _texts([v.value if isinstance(v, ast.FormattedValue) else v
                         for v in node.values])
        return None if pieces is None else "".join(pieces)
    return None


def _attribute_named(part: ast.AST) -> str | None:
    """The attribute ``part`` asks for by a string of constants: ``getattr(x, "f_b" + "ack")``
    (``hasattr``, ``attrgetter``, ``x.__getattribute__``), or ``vars(type)["__subclasses__"]``,
    an entry looked up by it; None otherwise (a dict's key, a printed word)."""
    if isinstance(part, ast.Subscript):
        return constant_text(part.slice)
    if not isinstance(part, ast.Call) or not part.args:
        return None
    func = part.func
    name = func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else ""
    if (argument := attribute_argument(part)) is not None:  # (hasattr only answers True or
        return constant_text(argument)  # False)
    if name in ("attrgetter", "__getattribute__", "__getattr__"):
        return constant_text(part.args[0])
    return None


def _texts(nodes: list[ast.expr]) -> tuple[str, ...] | None:
    texts = [constant_text(n) for n in nodes]
    return None if None in texts else tuple(t or "" for t in texts)


def attribute_argument(call: ast.AST) -> ast.expr | None:
    """The name argument of ``getattr``, ``setattr`` or ``delattr`` called by ``call``
    (``getattr(x, name)``: ``name``), or None for any other call."""
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in (
            "getattr", "setattr", "delattr") and len(call.args) >= 2:
        return call.args[1]
    return None


def _formatted(template: str, value: str | tuple[str, ...], how: str = "%") -> str | None:
    try:
        return template % value if how == "%" else template.format(*value)
    except (TypeError, ValueError, IndexError, KeyError):
        return None


def reaching(node: ast.AST) -> str:
    """How ``node`` (a statement, a function's code) reaches any object of the kernel, as the
    hint says it (``"gc.get_objects()"``); "" if it does not."""
    mark(node)
    parents = {child: part for part in ast.walk(node) for child in ast.iter_child_nodes(part)}
    for part in ast.walk(node):
        if how := _the_graders(part):
            return how
        if (text := _attribute_named(part)) in _AS_STRINGS or text in _ANYWHERE and \
                isinstance(part, ast.Call):  # getattr(gc_, "get_" + "objects"), not a dict's
            return REACHING[text or ""]
        if isinstance(part, ast.Attribute):
            call = parents.get(part)
            if getattr(part, _THROUGH, False) and not (  # Base.__init__(self, ...) is honest
                    isinstance(call, ast.Call) and call.func is part and call.args
                    and own_methods(call.args[0])):
                return REACHING["through its class"]
            mine = part.attr in own_methods(part.value) and not part.attr.startswith("__")
            if part.attr in _ANYWHERE and not mine or part.attr in _INSPECT and isinstance(
                    part.value, ast.Name) and part.value.id == "inspect":
                return REACHING[part.attr]
        elif isinstance(part, ast.ImportFrom) and part.module in _FROM:
            for alias in part.names:
                if alias.name in _FROM[part.module]:
                    return REACHING.get(alias.name, f"from {part.module} import *")
        elif isinstance(part, ast.alias) and part.name == "gc" and part.asname not in (None, "gc"):
            return REACHING["gc"]
        elif isinstance(part, ast.Name) and part.id == "gc" and isinstance(part.ctx, ast.Load) \
                and not getattr(part, LOCAL, False):
            parent = parents.get(part)
            if not (isinstance(parent, ast.Attribute) and parent.attr in GC_HARMLESS):
                return REACHING["gc"]
        elif isinstance(part, ast.Call) and any(constant_text(a) == "gc" for a in part.args):
            func = part.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("__import__", "import_module"):
                return REACHING["gc"]
    return ""


def _the_graders(part: ast.AST) -> str:
    """How ``part`` names the grader's own answering object or modules, or ""."""
    text = constant_text(part) if isinstance(part, ast.BinOp | ast.JoinedStr | ast.Constant) \
        else None
    if isinstance(part, ast.Name) and part.id == _ANSWERS or isinstance(
            part, ast.Attribute) and part.attr == _ANSWERS or text and _ANSWERS in text:
        return REACHING[_ANSWERS]
    names = [a.name for a in part.names] if isinstance(part, ast.Import) else \
        [f"{part.module}.{a.name}" for a in part.names] if isinstance(part, ast.ImportFrom) \
        and part.module and not part.level else [text] if text is not None else []
    if any(n == _GRADER or n.startswith(_GRADER + ".") for n in names) or text and (
            _GRADER in text or len(text) > len("nn_from_scratch.") and _GRADER.startswith(text)):
        return REACHING[_GRADER]
    if isinstance(part, ast.Attribute) and (  # nn_from_scratch.grade, x.grade.answers
            part.attr == "grade" and isinstance(part.value, ast.Name)
            and part.value.id == "nn_from_scratch" or part.attr in _GRADER_MODULES
            and isinstance(part.value, ast.Attribute) and part.value.attr == "grade"):
        return REACHING[_GRADER]
    return ""


def reached(how: str) -> bool:
    """Whether ``how`` (what put an answer in doubt) is one of :func:`reaching`'s."""
    return how in REACHING.values() or how.startswith("from ") and how.endswith(" import *")
