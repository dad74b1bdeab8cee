"""What an exercise's code may use: the modules it may import, and Python's own attributes.

Fifteen rounds of red teams read a student's code for what it must not do (``exec``,
``gc.get_objects``, ``sys.modules[...]``...), and each round found a way the list did not
name: round sixteen ran text through ``cProfile.run``, ``timeit.timeit`` and ``pickle.loads``,
imported a module the notebook had written to ``/tmp``, reached the notebook's module through
``inspect.getmodule`` and called a method with another ``self`` through ``__func__``; 5 or 6
of lesson 07's 7 points with every stub still raising. So the other way round too: an
exercise may use the modules a lesson's exercise needs (JAX, NumPy, Optax, Matplotlib, and the
standard library's modules for numbers, text, collections and time) and, of Python's own
``__dunder__`` attributes, those that only read a name, a value or an operator. Anything else
(``import pickle``, the module ``sys`` however it is reached, ``f.__func__``) puts every answer
checked after it in doubt: it earns nothing, and the feedback says what to leave out.
"""
import ast
import functools
import types
from collections.abc import Callable, Collection, Mapping
from typing import Any

from .modules import (
    MODULES,
    PARTLY,
    allowed_module,
    assumed_imports,
    attribute_chain,
    attribute_of,
    got_by_constant,
    named_objects,
    names_within,
    stands_for,
)
from .own import LOCAL
from .spelt import attribute_argument, called_name, constant_text

__all__ = ["OUTSIDE", "holds_a_runner", "outside", "outside_how", "runs_code_at"]

# Python's own attributes an exercise may read: names, values, operators, a base's __init__
_DUNDERS = frozenset({
    "__name__", "__qualname__", "__doc__", "__module__", "__version__", "__class__", "__init__",
    "__call__", "__len__", "__iter__", "__next__", "__contains__", "__getitem__", "__repr__",
    "__str__", "__format__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__hash__", "__bool__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
    "__rmul__", "__matmul__", "__rmatmul__", "__truediv__", "__rtruediv__", "__floordiv__",
    "__mod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__", "__array__",
    "__jax_array__", "__enter__", "__exit__", "__dataclass_fields__",
    "__post_init__", "__slots__", "__array_priority__"})
_SET_DUNDERS = frozenset({"__doc__"})  # ...and may set
# attributes that hand back an object a lookup failed on: an AttributeError's obj held the
# module nn_from_scratch.model after "try: nn_from_scratch.model.nope" (round nineteen, 6/7;
# refusing the lookup of what the package does not have instead cost a solved notebook that
# probed for nn_from_scratch.model.gelu 6 points, and a with block's __exit__ gets the error
# unnamed: round twenty)
_HANDS_BACK = frozenset({"obj"})
_NAMES = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})  # what only names
# attributes that are one of the standard library's modules no exercise needs, on whatever
# object (``np.testing.sys``: a module imported by another is its attribute)
_MODULE_ATTRIBUTES = frozenset({
    "sys", "os", "inspect", "gc", "builtins", "importlib", "pkgutil", "pickle", "marshal",
    "serialize_executable",
    "ctypes", "ctypeslib", "cProfile", "timeit", "pdb", "runpy", "subprocess", "atexit",
    "codeop", "__main__", "IPython", "ipykernel"})
# functions of modules an exercise may use that run a string or a file as code, or read
# attributes by a string (a fourth look at round sixteen: numpy.testing's runstring and measure
# exec a string, rundocs a file's doctests; string.Formatter().get_field follows "0.__globals__"),
# known by the objects themselves, whatever path or name reaches them
_RUNNERS = (("numpy.testing", ("runstring", "rundocs", "measure")), ("string", ("Formatter",)),
            ("tqdm.cli", ("cast",)))  # (cast evals its text: a third look at round seventeen)
# functions that read attributes by the names they are given, given any that are not strings of
# constants (the most positional arguments before them, and their keywords): jax.tree_util.
# register_dataclass(type(module), data_fields=[a name made at run time]) flattened a module
# into the library's relu (a third look at round seventeen)
_BY_NAMES_GIVEN = {"register_dataclass": (1, frozenset({"data_fields", "meta_fields"}))}
# Python's namespaces and code, named by a string or as a class's own attribute: no honest
# notebook spells them so (functools and format strings read attributes by such strings)
_NAMESPACE_NAMES = frozenset({"__globals__", "__builtins__", "__code__", "__closure__"})
# a keyword that lets a loader run code (np.load's allow_pickle: a pickle calls what it names),
# and where the loaders that take it take it by position (np.load(f, None, True): a third look)
_RUNS_CODE_KEYWORDS = frozenset({"allow_pickle"})
_RUNS_CODE_POSITIONS = {"load": 2, "read_array": 1, "NpzFile": 2}
# ...those loaders, as "module:attribute" (known by the objects themselves: under another name,
# ld = np.load, then ld(f, None, True), 6/6 with no note: round nineteen), which an exercise
# may call but not hand on as a value (functools.partial(np.load), a dict of loaders)
_LOADERS = ("numpy:load", "numpy.lib.format:read_array", "numpy.lib.npyio:NpzFile",
            "jax.numpy:load")
# the functions that may be handed a module, as a value (as "module:attribute"): they only
# show or look at it. Any other call given one may keep what it holds:
# contextlib.contextmanager(nn_from_scratch.model) and functools.singledispatch(...) copy the
# module's __dict__ onto their wrapper (functools.wraps inside), whose .relu was then the
# library's, 6/7 with every stub raising (round eighteen). Known by the objects themselves, and
# given the module only positionally (getattr and hasattr: as the object they read): a def of
# the notebook's own named getmembers, and getattr(np, "x", nn_from_scratch.model), handed the
# module back (round nineteen, 7/7 each)
_SHOW_A_MODULE = ("builtins:print", "builtins:repr", "builtins:str", "builtins:dir",
                  "builtins:help", "builtins:type", "builtins:id", "builtins:isinstance",
                  "builtins:hasattr", "builtins:getattr", "builtins:vars", "inspect:getsource",
                  "inspect:getsourcelines", "inspect:getdoc", "inspect:ismodule",
                  "IPython.display:display", "pprint:pprint", "pprint:pp",
                  "nn_from_scratch.listing:listing")
_READ_FIRST = ("builtins:getattr", "builtins:hasattr")  # ...the module as their first argument
# the modules an exercise may not use of packages it may: they start processes, whose code the
# reading never sees (matplotlib.testing's subprocess_run_for_testing ran the library's relu in
# a child Python, 2 of 2 tried: round nineteen), or build and load code (numpy.f2py)
# (and jax.export, which no lesson uses: a function exported with shapes left symbolic runs
# compiled for every size a check draws, so the library's Python never runs where the grader
# watches it: grade/answers.py)
_REFUSED_MODULES = ("matplotlib.testing", "numpy.f2py", "jax.export", "jax.experimental.export",
                    # ...and jax.profiler, whose Python tracer replaces the grader's profiler
                    # on Python 3.11 (round twenty-four)
                    "jax.profiler")
# functions of modules an exercise may not use, allowed called at once with one argument of
# these kinds and these keywords (constants) alone (_called_plainly): a signature read without
# eval_str, a lambda timed without a setup string
_PLAIN_CALLS = {("inspect", "signature"): ((ast.Name, ast.Attribute), ("follow_wrapped",)),
                ("timeit", "timeit"): ((ast.Lambda,), ("number",)),
                ("timeit", "repeat"): ((ast.Lambda,), ("number", "repeat"))}
# attributes that compile a program ahead of time, on anything but these modules: an AOT
# ``jax.jit(f).lower(x).compile()`` of the library's function, made in a cell for every size a
# check may draw (or for sizes padded to one), runs no Python of the library when the check
# calls it, where the grader watches (grade/answers.py: red team, round twenty-three)
_AHEAD = {"compile": ("re",),
          # ...and what runs a jaxpr (the library's computation as data, made in a cell: no
          # Python of the library runs at check time; round twenty-four): an interpreter of
          # its own binds each equation's primitive
          "eval_jaxpr": (), "jaxpr_as_fun": (), "closure_convert": (), "bind": ()}
# ...unless what it compiled is only read at once, never kept or called: lesson 13's
# ``fn.lower(x).compile().as_text()``
_READ_AT_ONCE = frozenset({"as_text", "cost_analysis", "memory_analysis"})
# calls that import a module named by a string
_IMPORTERS = frozenset({"__import__", "import_module", "resolve_name"})
# functions of allowed modules that run text as code (an annotation's string: typing's
# get_type_hints; singledispatch's register reads a function's annotations too, and a string of
# one is read by :func:`_annotation`), and those that write a class's members into a module's
# namespace, the notebook's (enum.global_enum bound the library's relu unseen, 6/7 with every
# stub raising: a second look at round seventeen)
_FUNCTIONS = frozenset({"get_type_hints", "ForwardRef", "global_enum", "_convert_",
                        "eval_jaxpr", "jaxpr_as_fun", "closure_convert",  # (imported by name)
                        # ...and these copy what they wrap (its __dict__, __globals__ if asked)
                        # onto the wrapper: functools.update_wrapper(f, nn_from_scratch.model)
                        # made f.relu the library's, 5/7 (a third look at round seventeen)
                        "update_wrapper", "wraps", "deserialize_and_load"})
# ...and these, unless every attribute they are handed is a string of constants, read as an
# attribute written out is (operator.attrgetter("shape"))
_BY_STRINGS = frozenset({"attrgetter", "methodcaller", "__getattribute__", "__getattr__"})
# what a string annotation may hold: a type's name, ``list[int]``, ``int | None``
_TYPE_NODES = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.BinOp,
               ast.BitOr, ast.Constant, ast.Load)
# how :func:`outside`'s answers begin
OUTSIDE = ("the module ", "the attribute ", "the function ", "the annotation ")
# attributes :mod:`.unseen` and :mod:`.reaching` read in their own ways (a namespace written
# through, a function's code replaced, a frame): their notes say more than this module's
_READ_ELSEWHERE = frozenset({
    "__dict__", "__globals__", "__builtins__", "__closure__", "__code__", "__getattribute__",
    "__setattr__", "__setitem__", "__self__", "__subclasses__"})


def outside(statement: ast.stmt, modules: Mapping[str, str],
            module_names: Collection[str] | None = None, imports: Mapping[str, Any] | None = None,
            own: Collection[str] = ()) -> str:
    """What in ``statement`` (all of it, a ``def``'s body too) is outside what an exercise may
    use (see the module's docstring), as the feedback says it (``"the module pickle"``,
    ``"the attribute __func__"``); "" if nothing. ``modules``: the notebook's names for the
    modules its cells imported and what it imported from them, each name -> the module
    (``{"np": "numpy", "display": "IPython.display"}``); ``module_names``: those of them bound
    to the module itself (``np``, not ``display``; None: all of them); ``imports``: what each
    of those names is, the object itself (None: taken from ``modules``); ``own``: the names the
    notebook bound to something of its own (a ``def getmembers``: not inspect's)."""
    parents = {child: part for part in ast.walk(statement) for child in ast.iter_child_nodes(part)}
    imports, own = names_within(statement, dict(imports if imports is not None else
                                                  assumed_imports(modules)), set(own))

    def value_of(node: ast.AST) -> Any:
        return stands_for(node, modules, imports, own)

    for part in ast.walk(statement):
        if how := _annotation(part):
            return how
        if isinstance(part, ast.Import):
            for alias in part.names:
                if (top := alias.name.split(".")[0]) not in MODULES and not (
                        top in PARTLY and alias.name == top) or _refused_module(alias.name):
                    return f"the module {alias.name}"
        elif isinstance(part, ast.ImportFrom):
            top = (part.module or "").split(".")[0]
            if part.level or top not in MODULES and not all(
                    a.name in PARTLY.get(part.module or "", ()) for a in part.names) or \
                    _refused_module(part.module or ""):
                return f"the module {'.' * part.level}{part.module or ''}"
            module = allowed_module(part.module or "")
            for alias in part.names:  # from random import _os, from enum import bltns
                if how := _of_module(module, alias.name)[0]:
                    return how
        elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load) and \
                (top := modules.get(part.id, "").split(".")[0]) not in MODULES | {""} and \
                not getattr(part, LOCAL, False):
            parent = parents.get(part)  # gc.collect(), inspect.getsource(f): harmless
            if not (isinstance(parent, ast.Attribute) and (parent.attr in PARTLY.get(
                    modules[part.id], ()) or _called_plainly(parent, modules[part.id],
                                                             parents))) and \
                    not _imported_harmless(part.id, modules):
                return f"the module {top}"
        elif isinstance(part, ast.Name) and part.id in _FUNCTIONS or isinstance(
                part, ast.alias) and part.name in _FUNCTIONS:  # (an attribute: _refused)
            return f"the function {getattr(part, 'id', getattr(part, 'name', ''))}"
        if (isinstance(part, ast.Name | ast.Attribute) and isinstance(part.ctx, ast.Load)
                and not getattr(part, LOCAL, False) or got_by_constant(part) is not None) and (
                how := _module_as_value(part, parents, modules, module_names, value_of)
                or _loader_as_value(part, parents, value_of)):
            return how  # (getattr(nn_from_scratch, "model") is the module too)
        if isinstance(part, ast.Constant | ast.BinOp | ast.JoinedStr) and (
                text := constant_text(part)) in _NAMESPACE_NAMES or isinstance(
                part, ast.Name) and (text := part.id) in _NAMESPACE_NAMES - {"__builtins__"}:
            return f"the attribute {text}"  # ("__builtins__" as a name: unseen's, lasting)
        if isinstance(part, ast.Attribute) and part.attr in _AHEAD and not (isinstance(
                part.value, ast.Name) and modules.get(part.value.id) in _AHEAD[part.attr]) \
                and not _only_read(part, parents):
            return f"the attribute {part.attr}"  # (re.compile, a pattern, is allowed)
        if isinstance(part, ast.Attribute) and not (isinstance(part.value, ast.Name) and (
                _called_plainly(part, modules.get(part.value.id, ""), parents))) and (
                how := _refused(part.attr, isinstance(part.ctx, ast.Load))
                or _through_modules(part, modules)):
            return how
        if isinstance(part, ast.Call):
            func = part.func
            name = called_name(func)
            if any(k.arg == "eval_str" for k in part.keywords):  # inspect.signature(f,
                return f"the function {name}(eval_str=...)"  # eval_str=True) runs text
            if name in _BY_NAMES_GIVEN:
                most, keywords = _BY_NAMES_GIVEN[name]
                given = part.args[most:] + [k.value for k in part.keywords
                                            if k.arg is None or k.arg in keywords]
                if any(not _strings(value) for value in given):
                    return f"the function {name}({'/'.join(sorted(keywords))}=...)"
            position = _allow_pickle_at(func, value_of(func), own)
            loading = [k.value for k in part.keywords if k.arg in _RUNS_CODE_KEYWORDS or (
                position is not None and k.arg is None)] + (
                [a for a in part.args if isinstance(a, ast.Starred)] + part.args[position:][:1]
                if position is not None else [])  # np.load(f, allow_pickle=True) unpickles,
            # and so do np.load(f, *more), np.load(f, **options) (round eighteen)
            if any(not (isinstance(value, ast.Constant) and value.value is False)
                   for value in loading):
                return f"the function {name}(allow_pickle=...)"
            if name in _IMPORTERS and part.args:
                text = constant_text(part.args[0])
                if text is None or text.split(".")[0].split(":")[0] not in MODULES:
                    return f"the module {text or 'named at run time'}"
            for text in _asked_for(part, name):  # getattr(x, "builtins"): as x.builtins
                if how := _by_string(name, text):  # (a second look at round sixteen: 7/7
                    return how  # through getattr of "builtins", "get_type_hints")
            if got_by_constant(part) is not None and (how := _through_modules(part, modules)):
                return how  # getattr(np.testing, "runstring")
    return ""


def _through_modules(node: ast.AST, modules: Mapping[str, str]) -> str:
    """How :func:`outside` says that ``node``, an attribute of a module an exercise may use
    (``random._os``, ``enum.bltns``: another module under another name, a third look at round
    sixteen), is a module it may not, one of the module's private names or one of
    :data:`_RUNNERS`; "" if none. ``getattr`` by a string of constants is read as written out.
    The chain is followed on the modules themselves, in the grader's process."""
    root, chain = attribute_chain(node)
    if not isinstance(root, ast.Name) or root.id not in modules:
        return ""
    value: Any = allowed_module(modules[root.id])
    for attribute in chain:
        if not isinstance(value, types.ModuleType):
            return ""
        how, value = _of_module(value, attribute)
        if how:
            return how
    return ""


def _module_as_value(node: ast.AST, parents: Mapping[ast.AST, ast.AST],
                     modules: Mapping[str, str], module_names: Collection[str] | None,
                     value_of: Callable[[ast.AST], Any]) -> str:
    """How :func:`outside` says that ``node``, a module, is used as a value: anything but
    reading its attributes or showing it (:data:`_SHOW_A_MODULE`) may keep what it holds
    (``contextlib.contextmanager(nn_from_scratch.model)``, ``m = nn_from_scratch.model`` then
    ``functools.singledispatch(m)``: a wrapper with the module's names); "" if it is not.
    ``value_of``: what a piece of code stands for (:func:`.modules.stands_for`)."""
    parent = parents.get(node)
    root, chain = attribute_chain(node)
    if not isinstance(root, ast.Name) or root.id not in modules or (
            module_names is not None and root.id not in module_names):
        return ""  # not a name bound to a module itself (display, from IPython.display)
    if isinstance(parent, ast.Attribute) or not isinstance(
            value_of(node), types.ModuleType) or _through_modules(node, modules):
        return ""  # np.array; the outermost attribute of a chain is looked at alone, and a
    # module no exercise may use (np.core.numeric.builtins) is said as such
    if isinstance(parent, ast.Call) and _shown(parent, node, value_of):
        return ""
    return f"the module {ast.unparse(node)} as a value"


def _shown(call: ast.Call, node: ast.AST, value_of: Callable[[ast.AST], Any]) -> bool:
    """Whether ``call`` only shows ``node`` (:data:`_SHOW_A_MODULE`, handed it positionally)."""
    called = value_of(call.func)
    if not any(called is shows for shows in named_objects(_SHOW_A_MODULE)):
        return False
    if any(called is reads for reads in named_objects(_READ_FIRST)):
        return bool(call.args) and call.args[0] is node
    return any(argument is node for argument in call.args)


def _loader_as_value(node: ast.AST, parents: Mapping[ast.AST, ast.AST],
                     value_of: Callable[[ast.AST], Any]) -> str:
    """How :func:`outside` says that ``node``, one of :data:`_LOADERS`, is handed on rather
    than called (its ``allow_pickle`` could then be given where the reading does not look:
    ``ld = np.load``, ``functools.partial(np.load)``); "" if it is not."""
    parent = parents.get(node)
    if _loader_position(value := value_of(node)) is None or isinstance(parent, ast.Call) and (
            parent.func is node or _shown(parent, node, value_of)) or isinstance(
                parent, ast.Attribute) and parent.attr in _NAMES:
        return ""  # (np.load.__name__; np.load.__call__ is a value)
    return f"the function {getattr(value, '__name__', 'load')} as a value"


def _allow_pickle_at(func: ast.AST, called: Any, own: Collection[str]) -> int | None:
    """Where a call of ``func``, which stands for ``called`` (None: the reading cannot tell),
    takes ``allow_pickle`` by position, if it is a loader: one of :data:`_LOADERS`, or a call
    spelt like one on what the reading cannot tell (``x.load(f, None, True)``, where x may be
    numpy got by a name made at run time: round twenty got np.load so, 2/7 with no note), but
    for a def of the notebook's own, which takes what it takes."""
    if called is not None:
        return _loader_position(called)
    name = called_name(func)
    if name in _RUNS_CODE_POSITIONS and not (isinstance(func, ast.Name) and func.id in own):
        return _RUNS_CODE_POSITIONS[name]
    return None


def _loader_position(value: Any) -> int | None:
    """Where ``value``, if it is one of :data:`_LOADERS`, takes ``allow_pickle`` by position."""
    if value is None or not any(value is loader for loader in named_objects(_LOADERS)):
        return None
    return _RUNS_CODE_POSITIONS[value.__name__]


def holds_a_runner(module: str) -> bool:
    """Whether the module named ``module`` holds, itself or in a module within it, one of
    :data:`_LOADERS`, :data:`_RUNNERS` or :data:`_REFUSED_MODULES`: ``getattr`` of it by a
    name made at run time may be one (``getattr(np, "".join(reversed("daol")))``: np.load,
    then called with allow_pickle by position, round twenty, 2/7 with no note)."""
    held = [loader.split(":")[0] for loader in _LOADERS] + [
        name for name, _ in _RUNNERS] + list(_REFUSED_MODULES)
    return any(name == module or name.startswith(module + ".") for name in held)


@functools.cache
def runs_code_at(module: str) -> int | None:
    """How many positional arguments a call of one of the module named ``module``'s own
    functions must at least be given past the first to run code: a loader's ``allow_pickle``
    position (np.load: 2), 0 for a runner; None if it has neither. ``getattr(jnp, op)(x, 0)``,
    called at once with no more, unpickles nothing (an honest line of round twenty-one's,
    refused by round twenty's rule on ``getattr`` by a name made at run time)."""
    value = allowed_module(module)
    if value is None:
        return 0
    found = [0 if any(attribute is runner for runner in _runners()) else _loader_position(
        attribute) for attribute in list(vars(value).values())]
    return min((position for position in found if position is not None), default=None)


def _refused_module(name: str) -> bool:
    """Whether the module ``name`` is, or is within, one of :data:`_REFUSED_MODULES`."""
    return any(name == refused or name.startswith(refused + ".") for refused in _REFUSED_MODULES)


def _strings(node: ast.AST) -> bool:
    """Whether ``node`` is a list or tuple of strings of constants, or one."""
    items = node.elts if isinstance(node, ast.List | ast.Tuple) else [node]
    return all(constant_text(item) is not None for item in items)


def _of_module(module: Any, attribute: str) -> tuple[str, Any]:
    """How :func:`outside` says that ``attribute`` of ``module`` (imported from it, or read
    off it) is more than an exercise may use (a private name: ``jax._src``, ``random._os``; a
    module it may not use: ``enum.bltns``, which is builtins), or ""; and its value."""
    if attribute.startswith("_") and not _dunder(attribute):
        return f"the attribute {attribute}", None
    value = attribute_of(module, attribute)
    if isinstance(value, types.ModuleType) and \
            (top := value.__name__.split(".")[0]) not in MODULES:
        return f"the module {top}", value
    if isinstance(value, types.ModuleType) and _refused_module(value.__name__):
        return f"the module {value.__name__}", value
    if any(value is runner for runner in _runners()):
        return f"the function {attribute}", value
    return "", value


@functools.cache
def _runners() -> tuple[Any, ...]:
    """The functions of :data:`_RUNNERS` that this Python has."""
    return tuple(value for name, functions in _RUNNERS
                 if (module := allowed_module(name)) is not None
                 for function in functions if (value := getattr(module, function, None)))


def _by_string(name: str, text: str | None) -> str:
    """How :func:`outside` says that ``name`` (``getattr``, ``attrgetter``...) asking for the
    attribute ``text`` (None: a string made at run time) is more than an exercise may use;
    "" if it is not. Asked for by a function of :data:`_BY_STRINGS`, a dunder that
    :mod:`.unseen` reads in its own way only from ``getattr`` is refused here too."""
    if text is None:
        return f"the function {name}"
    if how := _refused(text, name not in ("setattr", "delattr")):
        return how
    if text in _AHEAD:  # getattr(lowered, "compile")
        return f"the attribute {text}"
    return f"the attribute {text}" if name in _BY_STRINGS and _dunder(text) and \
        text not in _DUNDERS else ""


def _annotation(part: ast.AST) -> str:
    """How :func:`outside` says that ``part`` (an argument, a ``def``, an annotated
    assignment) is annotated with a string that is more than a type (``x: "exec(...)"``, which
    ``typing`` and ``functools.singledispatch`` run as code); "" if it is not."""
    annotations = [part.annotation] if isinstance(part, ast.arg | ast.AnnAssign) and \
        part.annotation is not None else [part.returns] if isinstance(
            part, ast.FunctionDef | ast.AsyncFunctionDef) and part.returns else []
    for text in (n.value for a in annotations for n in ast.walk(a)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str)):
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            return f"the annotation {text[:40]!r}"
        if any(not isinstance(n, _TYPE_NODES) for n in ast.walk(tree.body)):
            return f"the annotation {text[:40]!r}"
    return ""


def _refused(attribute: str, read: bool = True) -> str:
    """How :func:`outside` says that ``attribute``, read (or set) on any object, is more than
    an exercise may use; "" if it is not."""
    if attribute in _MODULE_ATTRIBUTES:
        return f"the module {attribute}"
    if attribute in _FUNCTIONS:
        return f"the function {attribute}"
    if attribute in _HANDS_BACK:
        return f"the attribute {attribute}"
    if _dunder(attribute) and attribute not in _READ_ELSEWHERE and (
            attribute not in (_DUNDERS if read else _SET_DUNDERS)):
        return f"the attribute {attribute}"
    return ""


def _asked_for(call: ast.Call, name: str) -> list[str | None]:
    """The attributes ``call`` (calling ``name``) asks for by strings: ``getattr(x, "a")``,
    ``setattr``, ``delattr``, ``attrgetter("a.b")``, ``methodcaller("a")``,
    ``x.__getattribute__("a")``; None for one that is not a string of constants (``hasattr``
    only answers True or False). A ``getattr`` by a name made at run time is
    :func:`.unseen.lasting`'s."""
    if (argument := attribute_argument(call)) is not None:
        return [text] if (text := constant_text(argument)) is not None else []
    if name not in _BY_STRINGS or not call.args:
        return []
    handed = call.args if name == "attrgetter" else call.args[:1]
    texts = [constant_text(a) for a in handed]
    return [part for text in texts for part in (text.split(".") if text else [None])]


def _called_plainly(attribute: ast.Attribute, module: str,
                    parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``attribute`` (of ``module``) is one of :data:`_PLAIN_CALLS`, called at once in
    the one shape that runs no text: ``inspect.signature(relu)``, ``timeit.timeit(lambda:
    relu(x), number=10)`` (honest lines that cost a notebook every point: red team, round
    twenty-two). Handed on, or given more (``eval_str``, a ``setup`` string, ``**options``), it
    is not."""
    shape = _PLAIN_CALLS.get((module, attribute.attr))
    call = parents.get(attribute)
    if shape is None or not isinstance(call, ast.Call) or call.func is not attribute:
        return False
    kinds, keywords = shape
    given = call.args + [k.value for k in call.keywords if k.arg in ("stmt", "obj")]
    return len(given) == 1 and isinstance(given[0], kinds) and all(
        k.arg in keywords and isinstance(k.value, ast.Constant) for k in call.keywords
        if k.arg not in ("stmt", "obj"))


def _only_read(attribute: ast.Attribute, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``attribute`` (``.compile``) is called at once and what it makes only read by
    one of :data:`_READ_AT_ONCE`, called at once: ``f.lower(x).compile().as_text()``."""
    call = parents.get(attribute)
    read = parents.get(call) if isinstance(call, ast.Call) and call.func is attribute else None
    if not (isinstance(read, ast.Attribute) and read.attr in _READ_AT_ONCE):
        return False
    then = parents.get(read)
    return isinstance(then, ast.Call) and then.func is read


def _imported_harmless(name: str, modules: Mapping[str, str]) -> bool:
    """Whether ``name`` is one of :data:`PARTLY`'s harmless functions, imported by its name
    (``from inspect import getsource``, ``from IPython.display import display``)."""
    return name in PARTLY.get(modules.get(name, ""), ())


def outside_how(how: str) -> bool:
    """Whether ``how`` (what put an answer in doubt) is one of :func:`outside`'s."""
    return how.startswith(OUTSIDE)


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")

