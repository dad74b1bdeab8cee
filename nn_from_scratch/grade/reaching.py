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

__all__ = ["REACHING", "constant_text", "mark", "own_methods", "reached", "reaching"]

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
_GC_HARMLESS = {"collect", "enable", "disable", "isenabled", "get_count", "get_stats",
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
_LOCAL = "_nn_from_scratch_local"  # the mark of a function's local variable
_MARKED = "_nn_from_scratch_marked"  # a node :func:`mark` has read


def mark(tree: ast.AST, classes: dict[str, set[str]] | None = None) -> None:
    """Mark in ``tree`` (a cell's code) the names that are the student's own objects: a
    method's first parameter (``self``) where the method never binds it again, with its
    class's methods; a function's variable that it only ever assigns an instance of one class
    of the notebook's own (``classes``: its name -> its methods; those of ``tree`` added), with
    that class's methods; and any name a function binds itself (an argument, an assignment),
    as local. Read by :func:`reaching`, :func:`own_methods` and :mod:`.unseen`. A part of a
    tree marked once is not marked again."""
    nodes, todo = [], [tree]
    while todo:  # what is not marked yet: a part marked with its cell is not read again
        node = todo.pop()
        if not getattr(node, _MARKED, False):
            setattr(node, _MARKED, True)
            nodes.append(node)
            todo.extend(ast.iter_child_nodes(node))
    classes = dict(classes or {})
    for cls in (n for n in nodes if isinstance(n, ast.ClassDef)):
        classes[cls.name] = {f.name for f in cls.body
                             if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    for function in (n for n in nodes
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)):
        names, stored, values = _read_function(function)
        arguments = function.args
        local = set(stored) | {a.arg for a in (
            *arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
            *([arguments.vararg] if arguments.vararg else []),
            *([arguments.kwarg] if arguments.kwarg else []))}
        local -= {name for n in ast.walk(function) if isinstance(n, ast.Global | ast.Nonlocal)
                  for name in n.names}
        for name in local:
            for node in names.get(name, ()):
                setattr(node, _LOCAL, True)
        for name, assigned in values.items():
            made = {v.func.id for v in assigned if isinstance(v, ast.Call)
                    and isinstance(v.func, ast.Name) and v.func.id in classes}
            if len(made) == 1 and stored[name] == len(assigned) and all(
                    isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                    and v.func.id in made for v in assigned):
                for node in names.get(name, ()):
                    setattr(node, _OWN, classes[next(iter(made))])
    for cls in (n for n in nodes if isinstance(n, ast.ClassDef)):
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or any(
                    isinstance(d, ast.Name) and d.id == "staticmethod"
                    for d in method.decorator_list):
                continue
            positional = [*method.args.posonlyargs, *method.args.args]
            names, stored, _ = _read_function(method)
            if positional and positional[0].arg not in stored:
                for node in names.get(positional[0].arg, ()):
                    setattr(node, _OWN, classes[cls.name])


def _read_function(function: ast.AST) -> tuple[dict[str, list[ast.Name]], Counter[str],
                                                dict[str, list[ast.expr]]]:
    """In ``function``'s code (nested functions included): each name's nodes, how many times
    each name is bound (assigned, deleted, imported, a loop's, a with's), and the values each
    name is assigned by a plain ``name = value``."""
    names: dict[str, list[ast.Name]] = {}
    stored: Counter[str] = Counter()
    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            names.setdefault(node.id, []).append(node)
            if isinstance(node.ctx, ast.Store | ast.Del):
                stored[node.id] += 1
        elif isinstance(node, ast.alias):
            stored[node.asname or node.name.split(".")[0]] += 1
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values.setdefault(target.id, []).append(node.value)
    return names, stored, values


def own_methods(node: ast.AST) -> set[str]:
    """The methods of the student's own class that ``node`` (a name) is an object of, as
    :func:`mark` marked it; empty if it is not known to be one."""
    methods: set[str] = getattr(node, _OWN, set()) if isinstance(node, ast.Name) else set()
    return methods


def constant_text(node: ast.AST) -> str | None:
    """The string ``node`` makes of constants alone (``"__subcla" + "sses__"``, an f-string of
    constants, ``"%s" % "x"``), or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left, right = constant_text(node.left), constant_text(node.right)
        if left is not None and right is not None:
            return left + right if isinstance(node.op, ast.Add) else _formatted(left, right)
    if isinstance(node, ast.JoinedStr):
        parts = [constant_text(v.value if isinstance(v, ast.FormattedValue) else v)
                 for v in node.values]
        return None if None in parts else "".join(p or "" for p in parts)
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
    if name in ("getattr", "hasattr", "setattr", "delattr") and len(part.args) >= 2:
        return constant_text(part.args[1])
    if name in ("attrgetter", "__getattribute__", "__getattr__"):
        return constant_text(part.args[0])
    return None


def _formatted(template: str, value: str) -> str | None:
    try:
        return template % value
    except (TypeError, ValueError):
        return None


def reaching(node: ast.AST) -> str:
    """How ``node`` (a statement, a function's code) reaches any object of the kernel, as the
    hint says it (``"gc.get_objects()"``); "" if it does not."""
    mark(node)
    parents = {child: part for part in ast.walk(node) for child in ast.iter_child_nodes(part)}
    for part in ast.walk(node):
        if how := _the_graders(part):
            return how
        if (text := _attribute_named(part)) in _AS_STRINGS:
            return REACHING[text]
        if isinstance(part, ast.Attribute):
            mine = bool(own_methods(part.value))
            if part.attr in _ANYWHERE and not mine or part.attr in _INSPECT and isinstance(
                    part.value, ast.Name) and part.value.id == "inspect":
                return REACHING[part.attr]
        elif isinstance(part, ast.ImportFrom) and part.module in _FROM:
            for alias in part.names:
                if alias.name in _FROM[part.module]:
                    return REACHING.get(alias.name, f"from {part.module} import *")
        elif isinstance(part, ast.alias) and part.name == "gc" and part.asname not in (None, "gc"):
            return REACHING["gc"]
        elif isinstance(part, ast.Name) and part.id == "gc" and not getattr(part, _LOCAL, False):
            parent = parents.get(part)
            if not (isinstance(parent, ast.Attribute) and parent.attr in _GC_HARMLESS):
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
    if any(n == _GRADER or n.startswith(_GRADER + ".") for n in names):
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
