"""What a student's statement may bind where a reading of the source cannot see it.

The copying reader (:mod:`.reading`) follows names as the cells visibly bind them. A
statement that may bind a name some other way (``exec``, ``setattr``, a namespace written
through: ``globals()["relu"] = ...``, ``sys.modules["__main__"].relu = ...``) puts in doubt
every name bound before it; a hook that runs after every cell (an IPython event, a tracer)
or a change to ``builtins`` puts in doubt every name, before or after it; so does code that
reaches any object of the kernel (:mod:`.reaching`: ``gc.get_objects``, ``__subclasses__``).

A namespace only *read* binds nothing, and an honest student's look around must not cost a
point (red team, round six): :func:`hides_a_binding` counts a namespace expression as read
only in a few shapes it can prove are (an argument of a builtin reader such as ``print`` or
``len`` that the notebook has not rebound, ``name in globals()``, a loop over it, ``.keys()``,
``.get(...)`` and the like whose result is itself only read, ``"...".format(**locals())``,
``", ".join(vars(x))``, ``pprint.pprint`` and ``json.dumps`` of an imported ``pprint`` or
``json``, or imported from them); anything else, however it is spelt (``[globals()][0][...] = ...``,
``globals().get.__self__[...] = ...``: round seven), counts as a write.

Code that runs when a ``def`` or ``class`` statement runs (decorators, default arguments, a
class's body) is read as a statement too, and so is the code of every student's name a
statement refers to, to any depth: round seven hid ``exec`` in each of them, round eight
behind ``map``, a list and a method. ``exec`` and its kin kept or passed under another name
(``run = exec``) hide too; so does IPython's shell (``_ip``, ``user_ns``, ``push``).
"""
import ast
from collections.abc import Callable, Mapping

from .allowed import holds_a_runner, runs_code_at
from .modules import MODULES, attribute_chain, root_module
from .own import own_methods
from .reaching import reaching
from .spelt import attribute_argument, called_name, constant_text

__all__ = ["BINDING_ATTRIBUTES", "BINDING_CALLS", "NAMESPACE_ATTRIBUTES", "NAMESPACE_CALLS",
           "READERS_OF", "binding_call", "declared_global", "hides_a_binding",
           "hiding_methods", "lasting", "named_attribute", "rebinds_a_reader",
           "stashes_a_namespace"]

# builtins that only read what they are handed, and hand back a new object
_READERS = {"print", "len", "sorted", "list", "tuple", "set", "frozenset", "dict", "repr", "str",
            "sum", "any", "all", "isinstance", "id", "enumerate", "zip", "reversed", "min",
            "max", "format"}
# ...of which these hand back no object of what they are handed: a namespace's objects only
# read (list(globals().values()) hands them on)
_ONLY_READERS = {"print", "len", "repr", "str", "id", "any", "all", "format"}
_READ_METHODS = {"get", "keys", "values", "items", "copy"}
# functions of the standard library that only read what they are handed, by their module, when
# the notebook's name for the module is an ``import`` of it: ``pprint.pprint(vars(f(x)))``
# (``from pprint import pprint`` too: ``pprint(vars(f(x)))``)
READERS_OF = {"pprint": {"pprint", "pformat", "pp"}, "json": {"dumps"}}
NAMESPACE_CALLS = {"globals", "vars", "locals"}
NAMESPACE_ATTRIBUTES = {"__dict__", "__globals__", "__builtins__", "modules"}
# calls that run text as code, import by name, or set names by string
BINDING_CALLS = {"exec", "eval", "compile", "__import__", "import_module", "setattr", "delattr",
                 "attrgetter", "methodcaller", "run_line_magic", "run_cell_magic",
                 # IPython's shell, which runs text as code or sets names (round eight)
                 "push", "run_cell", "ex", "ev", "run_code", "run_source", "safe_execfile",
                 "magic"}
# ...of which these run text as code: lasting, since the text may patch anything
_RUNS_TEXT = {"exec", "eval", "compile", "run_line_magic", "run_cell_magic", "run_cell", "ex",
              "ev", "run_code", "run_source", "safe_execfile", "magic"}
# ...of which these common names count only as a method called (shell.push(...)): a plain
# push(...) calls the student's own function (a student's walk: a helper named push cost an
# honest backward its point)
SHELL_METHODS = {"push", "ex", "ev", "magic"}
BINDING_ATTRIBUTES = {"__closure__", "__code__", "__getattribute__", "__setattr__",
                      "__setitem__", "__self__", "_ip", "user_ns", "user_global_ns",
                      # IPython's table of its namespaces, its module (round fifteen)
                      "ns_table", "user_module", "user_ns_hidden"}
# IPython's shell's namespaces, by attribute: handed on, written through later
_SHELL_NAMESPACES = {"ns_table", "user_ns", "user_global_ns", "user_module"}
# a namespace's methods that hand out its objects, to code that may change them: lasting
_HANDS_OUT = {"values", "items", "copy", "get", "pop", "popitem", "setdefault"}
# names that ARE such a call when passed or kept under another name (run = exec; map(exec, ...))
_ALIASED = {"exec", "eval", "compile", "__import__", "setattr", "delattr", "getattr", "globals",
            "vars", "locals"}
# hooks that run after any later cell, and Python's own builtins: every name is in doubt
_LASTING_ATTRIBUTES = {"settrace", "setprofile", "addaudithook"}
_LASTING_NAMES = {"builtins", "__builtins__"}
_TEXT_RUNNERS = _RUNS_TEXT & _ALIASED  # Python's own, by name: exec, eval, compile
_BY_NAME = {"getattr", "setattr", "delattr", "__import__"}  # ...and those of attributes


def _only_read(node: ast.AST, parents: dict[ast.AST, ast.AST], rebound: set[str],
               imported: Mapping[str, str], objects: bool = False) -> bool:
    """Whether the namespace expression ``node`` is provably only read where it stands
    (``imported``: the notebook's names for the modules it imported, ``{"pp": "pprint"}``,
    and for the readers it imported from them, ``{"show": "pprint:pprint"}``). ``objects``:
    ``node`` gives the namespace's objects (``.values()``, an entry), which a loop hands to
    code that may change them (red team, round sixteen: the grader's answering object found
    by its type's name in ``globals().values()`` and patched)."""
    parent = parents.get(node)
    if isinstance(parent, ast.Expr | ast.FormattedValue):
        return True
    if isinstance(parent, ast.Compare):  # "relu" in globals(), vars(self) == vars(other)
        return True
    if isinstance(parent, ast.comprehension | ast.For):
        return parent.iter is node and not objects  # its names, not its objects
    if isinstance(parent, ast.Call) and node in parent.args:
        func = parent.func
        if isinstance(func, ast.Name):
            module, _, name = imported.get(func.id, "").partition(":")
            return (func.id in (_ONLY_READERS if objects else _READERS)
                    and func.id not in rebound) or \
                name in READERS_OF.get(module, ())
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.attr in READERS_OF.get(imported.get(func.value.id, ""), ()):
            return True
        return isinstance(func, ast.Attribute) and func.attr == "join" and \
            isinstance(func.value, ast.Constant) and isinstance(func.value.value, str)
    if isinstance(parent, ast.keyword) and parent.arg is None:  # "...".format(**locals())
        call = parents.get(parent)
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
            call.func.attr == "format" and isinstance(call.func.value, ast.Constant)
    if isinstance(parent, ast.Attribute) and parent.value is node and \
            parent.attr in _READ_METHODS:  # .get(...), .keys(): read if what they give is
        call = parents.get(parent)
        return isinstance(call, ast.Call) and call.func is parent and \
            _only_read(call, parents, rebound, imported, objects or parent.attr != "keys")
    if isinstance(parent, ast.Subscript) and parent.value is node and \
            isinstance(parent.ctx, ast.Load):  # an entry: read if it is only read
        return _only_read(parent, parents, rebound, imported, True)
    return False


def _running_parts(statement: ast.stmt) -> list[ast.AST]:
    """What runs when ``statement`` runs: all of it, but of a ``def`` only its decorators,
    default arguments and annotations, and of a ``class`` everything but its methods'
    bodies (their running parts are read in turn)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = statement.args
        return [*statement.decorator_list, *arguments.defaults,
                *[d for d in arguments.kw_defaults if d is not None],
                *[a.annotation for a in (*arguments.posonlyargs, *arguments.args,
                                         *arguments.kwonlyargs) if a.annotation is not None],
                *([statement.returns] if statement.returns else [])]
    if isinstance(statement, ast.ClassDef):
        parts: list[ast.AST] = [*statement.decorator_list, *statement.bases,
                                *statement.keywords]
        for inner in statement.body:
            parts += _running_parts(inner)
        return parts
    return [statement]


def _of_an_object(node: ast.AST, plain: frozenset[str] | set[str]) -> bool:
    """Whether ``node`` is ``vars(x)`` or ``x.__dict__`` of an ``x`` that is an object the
    notebook made itself (a name last bound by an assignment, a ``def`` or a ``class``, not
    an import): writing through it changes that object's attributes, never a name."""
    target = node.args[0] if isinstance(node, ast.Call) and len(node.args) == 1 and \
        isinstance(node.func, ast.Name) and node.func.id == "vars" else \
        node.value if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules") \
        else None
    return isinstance(target, ast.Name) and (  # a method's self, an instance of its class
        bool(own_methods(target)) or target.id in plain and getattr(node, "attr", "") != "modules")


def _sets_its_own(part: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``part`` is ``object.__setattr__`` called on the student's own object with a
    name of constants (``object.__setattr__(self, "size", n)``, as a frozen dataclass sets
    what it computes: round sixteen's false positive)."""
    call = parents.get(part)
    return isinstance(part, ast.Attribute) and part.attr == "__setattr__" and \
        isinstance(call, ast.Call) and call.func is part and len(call.args) == 3 and \
        bool(own_methods(call.args[0])) and constant_text(call.args[1]) is not None


def _how(node: ast.AST, rebound: set[str], plain: frozenset[str] | set[str],
         imported: Mapping[str, str]) -> str:
    """The first thing in ``node`` that may bind a name unseen, or ""."""
    parents = {child: part for part in ast.walk(node) for child in ast.iter_child_nodes(part)}
    for part in ast.walk(node):
        if _of_an_object(part, plain) or _sets_its_own(part, parents):
            continue
        if isinstance(part, ast.alias) and part.name == "__main__":
            return "import __main__"  # the notebook's namespace, as a module (round fifteen)
        if isinstance(part, ast.ImportFrom) and any(a.name == "*" for a in part.names) and (
                part.level or (part.module or "").split(".")[0] != "nn_from_scratch"):
            return "import *"  # binds names no reading can list (round ten: a module written
            # by the notebook); the package's own are listed (Reader.statement)
        parent = parents.get(part)
        if isinstance(part, ast.Name) and part.id in _ALIASED and not (
                isinstance(parent, ast.Call) and parent.func is part):
            return part.id  # round eight: run = exec; run(...), map(exec, [...])
        if isinstance(part, ast.Call):
            func = part.func
            name = called_name(func)
            if name in NAMESPACE_CALLS and not _only_read(part, parents, rebound, imported):
                return f"{name}()"
            if binding_call(part, BINDING_CALLS):
                return f"{name}()"
            if (attribute := named_attribute(part, BINDING_ATTRIBUTES | NAMESPACE_ATTRIBUTES)) \
                    and not (attribute in NAMESPACE_ATTRIBUTES and _only_read(
                        part, parents, rebound, imported)):
                return attribute  # getattr(f, "__co" + "de__"): round fifteen
        elif isinstance(part, ast.Attribute) and (
                part.attr in BINDING_ATTRIBUTES or part.attr in NAMESPACE_ATTRIBUTES
                and not _only_read(part, parents, rebound, imported)):
            return part.attr
    return ""


def named_attribute(call: ast.Call, attributes: set[str]) -> str:
    """The attribute of ``attributes`` that ``call`` gets, sets or asks for by a string of
    constants (``getattr(f, "__co" + "de__")``); "" if none."""
    argument = attribute_argument(call)
    text = constant_text(argument) if argument is not None else None
    return text if text in attributes else ""


def stashes_a_namespace(statement: ast.stmt, rebound: set[str],
                        plain: frozenset[str] | set[str] = frozenset(),
                        imported: Mapping[str, str] | None = None) -> str:
    """A namespace in ``statement`` handed somewhere the reading does not follow (an argument,
    a container, an entry or an attribute of something, a returned value:
    ``box.append(globals())``), from where any later cell may write through it unseen (a red
    team's second look, round fifteen: 5/7 with every stub raising); "" if none. One kept under
    a plain name (``g = globals()``) is followed wherever the name is used
    (:func:`hides_a_binding`)."""
    parents = {child: part for part in ast.walk(statement)
               for child in ast.iter_child_nodes(part)}
    for part in ast.walk(statement):
        namespace = isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and \
            part.func.id in NAMESPACE_CALLS or isinstance(part, ast.Attribute) and \
            part.attr in NAMESPACE_ATTRIBUTES | _SHELL_NAMESPACES
        if not namespace or _of_an_object(part, plain) or \
                _only_read(part, parents, rebound, imported or {}):
            continue
        node, parent = part, parents.get(part)
        while isinstance(parent, ast.BoolOp | ast.IfExp):  # globals() or {}
            node, parent = parent, parents.get(parent)
        kept_plainly = isinstance(parent, ast.Assign) and all(
            isinstance(t, ast.Name) for t in parent.targets)
        handed_out = isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load) \
            or isinstance(parent, ast.Attribute) and parent.attr in _HANDS_OUT  # its objects
        written_or_read = isinstance(parent, ast.Subscript | ast.Attribute) and \
            parent.value is node and not handed_out
        if not kept_plainly and not written_or_read and not isinstance(parent, ast.Expr):
            return f"{part.func.id}()" if isinstance(part, ast.Call) and isinstance(
                part.func, ast.Name) else getattr(part, "attr", "")
    return ""


def binding_call(call: ast.Call, names: set[str]) -> str:
    """The name ``call`` calls if it is one of ``names`` that may run text or bind names: not
    a method named ``compile`` (``jax.jit(f).lower(x).compile()``), nor a plain call of one of
    :data:`SHELL_METHODS` (the student's own function) or one called on an object of the
    notebook's own class that has that method (:func:`.own.mark`); "" otherwise."""
    func = call.func
    name = called_name(func)
    if name not in names or isinstance(func, ast.Attribute) and name == "compile" or \
            name in SHELL_METHODS and isinstance(func, ast.Name) or isinstance(
                func, ast.Attribute) and name in own_methods(func.value):
        return ""  # (round fifteen: stack.push(x) of the notebook's own class, too; round
        # sixteen: tracker.eval(), a method of its own)
    if name in ("setattr", "delattr") and isinstance(func, ast.Name) and call.args and \
            own_methods(call.args[0]):
        return ""  # setattr(self, key, value): the student's own object's attribute
    return name


def hides_a_binding(statement: ast.stmt, rebound: set[str],
                    plain: frozenset[str] | set[str] = frozenset(),
                    code_of: Callable[[str], ast.AST | None] = lambda name: None,
                    seen: set[str] | None = None,
                    imported: Mapping[str, str] | None = None) -> str:
    """What in ``statement`` may bind a name the reading cannot see, so that every name bound
    before it is in doubt (see the module's docstring); "" if nothing.

    ``rebound``: the names the notebook has bound so far (a builtin reader such as ``print``
    that the notebook rebound is no longer trusted to only read). ``plain``: those last bound
    to an object the notebook made (an assignment, a ``def``, a ``class``): ``vars(x)`` and
    ``x.__dict__`` of such an ``x`` are no namespace of names. ``code_of``: the student's own
    code a name is bound to (a ``def``, a ``class``, an assigned value), or None: the code of
    every name the statement refers to is read too, however it may come to run (called,
    decorating, handed to ``map``, kept in a list, a method of an instance: round eight), and
    the code of the names that code refers to, to any depth. ``imported``: the notebook's
    names for the modules it imported (``import pprint as pp``: ``{"pp": "pprint"}``), so
    that ``pp.pprint(vars(f(x)))`` is a namespace only read.
    """
    seen = set() if seen is None else seen
    for part in _running_parts(statement):
        if how := _how(part, rebound, plain, imported or {}):
            return how
        for name in [n.id for n in ast.walk(part) if isinstance(n, ast.Name)]:
            code = None if name in seen else code_of(name)
            if code is None:
                continue
            seen.add(name)
            for inner in _code_body(code):
                if how := hides_a_binding(inner, rebound, plain, code_of, seen, imported):
                    return how
    return ""


def _code_body(code: ast.AST) -> list[ast.stmt]:
    """The statements of a student's ``def``, lambda, ``class`` (its methods' bodies too) or
    assigned value, as :func:`hides_a_binding` reads them."""
    return code.body if isinstance(code, ast.FunctionDef | ast.AsyncFunctionDef) else \
        [ast.Expr(code.body)] if isinstance(code, ast.Lambda) else \
        [s for inner in code.body for s in (
            inner.body if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
            else [inner])] if isinstance(code, ast.ClassDef) else \
        [code] if isinstance(code, ast.stmt) else \
        [ast.Assign(targets=[ast.Name(id="_", ctx=ast.Store())], value=code, lineno=0)] \
        if isinstance(code, ast.expr) else []  # a value kept: globals() kept is written later


def declared_global(statement: ast.stmt, code_of: Callable[[str], ast.AST | None],
                    seen: set[str] | None = None) -> dict[str, ast.AST]:
    """The names that the student's code ``statement`` runs declares ``global`` (``def f():
    global relu; relu = ...``, then ``f()``), each with the code that binds it: running the
    statement may bind them there, where the reading of the statement alone sees nothing
    (red team, round ten). Followed through the code of every name it refers to, to any
    depth, as :func:`hides_a_binding` is."""
    seen = set() if seen is None else seen
    found: dict[str, ast.AST] = {}
    for part in _running_parts(statement):
        for name in [n.id for n in ast.walk(part) if isinstance(n, ast.Name)]:
            code = None if name in seen else code_of(name)
            if code is None:
                continue
            seen.add(name)
            for node in ast.walk(code):
                if isinstance(node, ast.Global):
                    found.update(dict.fromkeys(node.names, code))
            for inner in _code_body(code):
                found.update(declared_global(inner, code_of, seen))
    return found


def hiding_methods(statement: ast.stmt, hides: Callable[[ast.stmt], str]) -> str:
    """A method of a class in ``statement`` that Python calls by itself (``__repr__`` when a
    reader prints, ``__bool__``, ``__format__``..., a property) whose code may bind a name
    unseen (``hides``, or a ``global``): from then on any statement may run it, so every name
    is in doubt (red team, round ten: ``print(globals()["s"])`` ran a ``__repr__`` that bound
    the library's relu); "" if none."""
    for cls in (n for n in ast.walk(statement) if isinstance(n, ast.ClassDef)):
        for method in cls.body:
            if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or not (
                    method.name.startswith("__") and method.name.endswith("__")
                    or any(isinstance(d, ast.Name) and d.id in {"property", "cached_property"}
                           or isinstance(d, ast.Attribute) for d in method.decorator_list)):
                continue
            for inner in method.body:
                how = "global" if any(isinstance(n, ast.Global) for n in ast.walk(inner)) \
                    else hides(inner)
                if how:
                    return f"{cls.name}.{method.name}: {how}"
    return ""


def rebinds_a_reader(statement: ast.stmt) -> bool:
    """Whether ``statement`` (all of it, a ``def``'s body too) sets or deletes an attribute
    named as one of the standard library's readers (``pprint.pprint = ...``, on any object,
    since an alias of the module is the module): from then on ``pprint.pprint(vars(x))`` may
    write, and the notebook's imports no longer vouch for them."""
    readers = set().union(*READERS_OF.values())
    return any(isinstance(part, ast.Attribute) and isinstance(part.ctx, ast.Store | ast.Del)
               and part.attr in readers for part in ast.walk(statement))


def _runs_nothing(module: str, call: ast.Call | None) -> bool:
    """Whether what ``getattr`` of the module named ``module`` by a name made at run time gets
    can run no code: the module holds no loader or runner, or ``call`` calls it at once with
    too few arguments to (``getattr(jnp, op)(x, 0)``; np.load's allow_pickle is its third)."""
    if not holds_a_runner(module):
        return True
    if call is None or any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None or k.arg == "allow_pickle" for k in call.keywords):
        return False
    least = runs_code_at(module)
    return least is None or len(call.args) <= least


def _module_name(node: ast.AST, modules: Mapping[str, str]) -> str:
    """The dotted name of the module ``node`` (``np.random``) would be, by the notebook's names
    for its imports (``numpy.random``); its attributes are taken for modules within it."""
    root, chain = attribute_chain(node)
    return ".".join([modules.get(root.id, "") if isinstance(root, ast.Name) else "", *chain])


def lasting(statement: ast.stmt, modules: Mapping[str, str] | None = None) -> str:
    """What in ``statement`` (all of it, a ``def``'s body too) may rebind names after any
    later cell (an IPython event hook, a tracer, ``builtins``), so that every name is in
    doubt from here on; "" if nothing. So does what reaches any object of the kernel, the
    grader's answering object included (:mod:`.reaching`), text run as code (``exec``), and
    ``getattr``/``setattr`` of a name made at run time: either may patch the grader's object,
    unless it is the student's own object's (``setattr(self, key, value)``) or, for
    ``getattr``, one of the modules an exercise may use (``getattr(jax.nn, name)``, a red
    team's false positive, round sixteen; ``modules``: the notebook's names for the modules
    it imported, each -> the module's top-level name)."""
    if how := reaching(statement):
        return how
    modules = modules or {}
    called = {id(part.func) for part in ast.walk(statement) if isinstance(part, ast.Call)}
    at_once = {id(part.func): part for part in ast.walk(statement)  # getattr(m, name)(...)
               if isinstance(part, ast.Call) and isinstance(part.func, ast.Call)}
    for part in ast.walk(statement):
        if isinstance(part, ast.Call):  # text run as code may patch anything, the grader's
            if name := binding_call(part, _RUNS_TEXT):  # answering object included, for good
                return f"{name}()"  # (a third look, round fifteen: 7/7 with stubs raising)
            argument = attribute_argument(part)
            if argument is not None and constant_text(argument) is None and not (
                    own_methods(part.args[0]) or getattr(part.func, "id", "") == "getattr"
                    and root_module(part.args[0], modules) in MODULES - {"nn_from_scratch"}
                    and _runs_nothing(_module_name(part.args[0], modules),
                                      at_once.get(id(part)))):
                return f"{getattr(part.func, 'id', '')}() with a name made at run time"  # (getattr
                # (sys, a + "ules"): a third look, round fifteen)
        if isinstance(part, ast.Attribute) and (part.attr in _LASTING_ATTRIBUTES or (
                part.attr == "register" and isinstance(part.value, ast.Attribute)
                and part.value.attr == "events")):  # get_ipython().events.register(...)
            return part.attr
        if isinstance(part, ast.Name) and part.id in _LASTING_NAMES:
            return part.id
        if isinstance(part, ast.Name) and part.id in _TEXT_RUNNERS and isinstance(
                part.ctx, ast.Load):  # handed on, it may run text later: (exec, (text,)) as
            return part.id  # a __reduce__ that copy.copy calls (round sixteen)
        if isinstance(part, ast.Name) and part.id in _BY_NAME and isinstance(
                part.ctx, ast.Load) and id(part) not in called:  # handed on, it is called
            # with names made at run time (functools.reduce(getattr, names, package): the
            # library's count_params for 07.6, red team round seventeen)
            return f"{part.id} handed on, with names made at run time"
        if isinstance(part, ast.alias) and part.name.split(".")[0] in _LASTING_NAMES or \
                isinstance(part, ast.ImportFrom) and part.module in _LASTING_NAMES:
            return "builtins"  # from builtins import exec as run (round eight)
        if isinstance(part, ast.alias) and part.name == "__main__":
            return "import __main__"  # the notebook's namespace as a module, kept: any later
            # cell may write through it (red team, round fifteen)
    return ""
