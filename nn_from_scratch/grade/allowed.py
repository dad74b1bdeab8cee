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
from collections.abc import Mapping

from .reaching import GC_HARMLESS, LOCAL, attribute_argument, constant_text

__all__ = ["MODULES", "OUTSIDE", "outside", "outside_how"]

# the modules (by their top-level name) an exercise's cell may import or use
MODULES = frozenset({
    "jax", "jaxlib", "numpy", "optax", "matplotlib", "nn_from_scratch",  # (the package's own
    # are read by the copying reader)
    "math", "cmath", "random", "statistics", "fractions", "decimal", "numbers",
    "functools", "itertools", "operator", "collections", "dataclasses", "typing",
    "typing_extensions", "enum", "abc", "copy", "heapq", "bisect", "array", "string", "re",
    "textwrap", "unicodedata", "pprint", "json", "time", "datetime", "contextlib", "platform",
    "resource", "mmap", "__future__"})
# modules of which an exercise may use a few harmless functions, and nothing else (the rest of
# gc is :mod:`.reaching`'s: a walk of every object)
_PARTLY = {"gc": GC_HARMLESS,
           "inspect": frozenset({"getsource", "getsourcelines", "getdoc", "cleandoc",
                                 "signature", "isfunction", "isclass", "ismethod"})}
# Python's own attributes an exercise may read: names, values, operators, a base's __init__
_DUNDERS = frozenset({
    "__name__", "__qualname__", "__doc__", "__module__", "__version__", "__class__", "__init__",
    "__call__", "__len__", "__iter__", "__next__", "__contains__", "__getitem__", "__repr__",
    "__str__", "__format__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__hash__", "__bool__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
    "__rmul__", "__matmul__", "__rmatmul__", "__truediv__", "__rtruediv__", "__floordiv__",
    "__mod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__", "__array__",
    "__jax_array__", "__enter__", "__exit__", "__annotations__", "__dataclass_fields__",
    "__post_init__", "__slots__"})
# attributes that are one of the standard library's modules no exercise needs, on whatever
# object (``np.testing.sys``: a module imported by another is its attribute)
_MODULE_ATTRIBUTES = frozenset({
    "sys", "os", "inspect", "gc", "builtins", "importlib", "pkgutil", "pickle", "marshal",
    "ctypes", "ctypeslib", "cProfile", "timeit", "pdb", "runpy", "subprocess", "atexit",
    "codeop", "__main__", "IPython", "ipykernel"})
# calls that import a module named by a string
_IMPORTERS = frozenset({"__import__", "import_module", "resolve_name"})
OUTSIDE = ("the module ", "the attribute ")  # how each of :func:`outside`'s answers begins
# attributes :mod:`.unseen` and :mod:`.reaching` read in their own ways (a namespace written
# through, a function's code replaced, a frame): their notes say more than this module's
_READ_ELSEWHERE = frozenset({
    "__dict__", "__globals__", "__builtins__", "__closure__", "__code__", "__getattribute__",
    "__setattr__", "__setitem__", "__self__", "__subclasses__"})


def outside(statement: ast.stmt, modules: Mapping[str, str]) -> str:
    """What in ``statement`` (all of it, a ``def``'s body too) is outside what an exercise may
    use (see the module's docstring), as the feedback says it (``"the module pickle"``,
    ``"the attribute __func__"``); "" if nothing. ``modules``: the notebook's names for the
    modules its cells imported, each name -> the module's top-level name (``{"np": "numpy"}``)."""
    parents = {child: part for part in ast.walk(statement) for child in ast.iter_child_nodes(part)}
    for part in ast.walk(statement):
        if isinstance(part, ast.Import):
            for alias in part.names:
                if (top := alias.name.split(".")[0]) not in MODULES and not (
                        top in _PARTLY and alias.name == top):
                    return f"the module {alias.name}"
        elif isinstance(part, ast.ImportFrom):
            top = (part.module or "").split(".")[0]
            if part.level or top not in MODULES and not (top == part.module and all(
                    a.name in _PARTLY.get(top, ()) for a in part.names)):
                return f"the module {'.' * part.level}{part.module or ''}"
        elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load) and \
                modules.get(part.id, "") not in MODULES | {""} and \
                not getattr(part, LOCAL, False):
            parent = parents.get(part)  # gc.collect(), inspect.getsource(f): harmless
            if not (isinstance(parent, ast.Attribute) and parent.attr in _PARTLY.get(
                    modules[part.id], ())) and not _imported_harmless(part.id, modules):
                return f"the module {modules[part.id]}"
        elif isinstance(part, ast.Attribute):
            if part.attr in _MODULE_ATTRIBUTES:
                return f"the module {part.attr}"
            if _dunder(part.attr) and part.attr not in _READ_ELSEWHERE and (
                    part.attr not in _DUNDERS or not isinstance(part.ctx, ast.Load)):
                return f"the attribute {part.attr}"
        elif isinstance(part, ast.Call):
            func = part.func
            name = func.id if isinstance(func, ast.Name) else \
                func.attr if isinstance(func, ast.Attribute) else ""
            if name in _IMPORTERS and part.args:
                text = constant_text(part.args[0])
                if text is None or text.split(".")[0].split(":")[0] not in MODULES:
                    return f"the module {text or 'named at run time'}"
            argument = attribute_argument(part)
            text = constant_text(argument) if argument is not None else None
            if text and _dunder(text) and text not in _DUNDERS | _READ_ELSEWHERE:
                return f"the attribute {text}"
    return ""


def _imported_harmless(name: str, modules: Mapping[str, str]) -> bool:
    """Whether ``name`` is one of :data:`_PARTLY`'s harmless functions, imported by its name
    (``from inspect import getsource``)."""
    return name in _PARTLY.get(modules.get(name, ""), ())


def outside_how(how: str) -> bool:
    """Whether ``how`` (what put an answer in doubt) is one of :func:`outside`'s."""
    return how.startswith(OUTSIDE)


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")

