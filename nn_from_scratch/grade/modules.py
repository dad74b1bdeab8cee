"""The modules an exercise may use, and what the notebook's names stand for in them.

The grader's reading (:mod:`.allowed`, :mod:`.reading`) follows a name the way Python would:
``np`` is whatever ``import numpy as np`` bound, ``plt.figure`` is matplotlib.pyplot's
``figure`` (a function, where ``matplotlib.figure`` is a module), ``ld`` after
``from numpy import load as ld`` is ``numpy.load`` itself. It looks each up on the modules
themselves, imported in the grader's process, and only on those an exercise may use
(:data:`MODULES`, and :data:`PARTLY`'s few harmless functions): a name it cannot follow stands
for nothing it knows (None), never for something it guessed.
"""
import ast
import builtins
import functools
import importlib
import types
from collections.abc import Collection, Mapping
from typing import Any

from .reaching import GC_HARMLESS
from .spelt import attribute_argument, constant_text

__all__ = ["MODULES", "PARTLY", "allowed_module", "assumed_imports", "attribute_chain",
           "attribute_of", "got_by_constant", "imported", "named_objects", "names_within",
           "on_modules", "root_module", "stands_for"]

# the modules (by their top-level name) an exercise's cell may import or use
MODULES = frozenset({
    "jax", "jaxlib", "numpy", "optax", "matplotlib", "nn_from_scratch",  # (the package's own
    # are read by the copying reader)
    "math", "cmath", "random", "statistics", "fractions", "decimal", "numbers",
    "functools", "itertools", "operator", "collections", "dataclasses", "typing",
    "typing_extensions", "enum", "abc", "copy", "heapq", "bisect", "array", "string", "re",
    "textwrap", "unicodedata", "pprint", "json", "time", "datetime", "contextlib", "platform",
    "resource", "mmap", "__future__", "warnings", "pathlib", "tqdm"})
# modules of which an exercise may use a few harmless functions, and nothing else (the rest of
# gc is :mod:`.reaching`'s: a walk of every object)
PARTLY = {"gc": GC_HARMLESS,
          "inspect": frozenset({"getsource", "getsourcelines", "getdoc", "cleandoc",
                                "isfunction", "isclass", "ismethod"}),  # (not signature: its
          # eval_str=True runs annotations as code, a second look at round sixteen)
          "sys": frozenset({"version", "version_info", "float_info", "int_info", "maxsize",
                            "stdout", "stderr", "platform", "byteorder", "getsizeof",
                            "getrecursionlimit", "setrecursionlimit"}),
          "traceback": frozenset({"print_exc", "format_exc", "print_exception",
                                  "format_exception"}),
          "logging": frozenset({"getLogger", "basicConfig", "debug", "info", "warning",
                                "error", "DEBUG", "INFO", "WARNING", "ERROR"}),
          "IPython.display": frozenset({"display", "clear_output", "HTML", "Markdown", "Math",
                                        "Latex", "Image", "SVG", "JSON"}),
          # (a second look at round seventeen: three honest lines lost every point)
          "types": frozenset({"SimpleNamespace", "MappingProxyType"}),
          "timeit": frozenset({"default_timer"})}


def allowed_module(name: str) -> Any:
    """The module ``name``, if it is one an exercise may use and it imports; else None."""
    if name.split(".")[0] not in MODULES:
        return None
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 (not installed, or broken: nothing to follow)
        return None


def imported(module: str, attribute: str | None = None) -> Any:
    """What ``import module`` (with ``attribute``: ``from module import attribute``) binds, as
    the reading follows it: for a module an exercise may use, the object; else None."""
    if module in PARTLY:  # (inspect's getsource, IPython.display's display)
        return named_objects((f"{module}:{attribute}",))[0] if attribute in PARTLY[module] and \
            named_objects((f"{module}:{attribute}",)) else None
    value = allowed_module(module)
    return value if attribute is None or value is None else attribute_of(value, attribute)


def assumed_imports(modules: Mapping[str, str]) -> dict[str, Any]:
    """What each of the notebook's names for its imports is, from ``modules`` alone: the module,
    or its attribute of that name (``display`` -> IPython.display's ``display``)."""
    found = {}
    for name, module_name in modules.items():
        value = allowed_module(module_name)
        if value is not None and name != module_name.split(".")[-1] and \
                getattr(value, name, None) is not None:
            value = getattr(value, name)
        found[name] = value
    return found


def names_within(statement: ast.stmt, imports: dict[str, Any],
                  own: set[str]) -> tuple[dict[str, Any], set[str]]:
    """``imports`` and ``own`` with what ``statement`` binds within itself: its imports (in a
    ``def``'s body too) as imports, any other name it binds as the notebook's own."""
    for part in ast.walk(statement):
        if isinstance(part, ast.Import):
            for alias in part.names:
                imports[alias.asname or alias.name.split(".")[0]] = imported(
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(part, ast.ImportFrom) and not part.level:
            for alias in part.names:
                imports[alias.asname or alias.name] = imported(part.module or "", alias.name)
        elif isinstance(part, ast.Name) and not isinstance(part.ctx, ast.Load) or isinstance(
                part, ast.arg | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own.add(getattr(part, "id", getattr(part, "arg", getattr(part, "name", ""))))
    return imports, own


def stands_for(node: ast.AST, modules: Mapping[str, str], imports: Mapping[str, Any],
           own: Collection[str]) -> Any:
    """What ``node`` (a name, an attribute chain, ``getattr`` by a string of constants) stands
    for, if it is one of the notebook's imports, an attribute of one, or a builtin the notebook
    did not bind (``own``) itself; None where the reading cannot tell."""
    root, chain = attribute_chain(node)
    if not isinstance(root, ast.Name) or root.id in own:
        return None
    if root.id in imports:
        value = imports[root.id]
    elif root.id in modules:
        value = allowed_module(modules[root.id])
    else:
        value = getattr(builtins, root.id, None)
    return on_modules(value, chain) if chain else value


def attribute_chain(node: ast.AST) -> tuple[ast.AST, list[str]]:
    """``node``'s root and the attributes read from it: ``(np, ["testing", "a"])`` for
    ``np.testing.a`` and for ``getattr(getattr(np, "testing"), "a")``, as written out."""
    chain: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            chain.insert(0, node.attr)
            node = node.value
        elif isinstance(node, ast.Call) and (text := got_by_constant(node)) is not None:
            chain.insert(0, text)
            node = node.args[0]
        else:
            return node, chain


def got_by_constant(node: ast.AST) -> str | None:
    """The attribute ``node`` gets by a string of constants, if it is ``getattr(x, "a")``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "getattr" and (argument := attribute_argument(node)) is not None:
        return constant_text(argument)
    return None


def on_modules(module: str | Any, chain: list[str]) -> Any:
    """What the attributes ``chain`` read from ``module`` (a module, or its name) are, looked up
    on the modules themselves in the grader's process; None where one is not a module's."""
    value: Any = allowed_module(module) if isinstance(module, str) else module
    for attribute in chain:
        if not isinstance(value, types.ModuleType):
            return None
        value = attribute_of(value, attribute)
    return value


def attribute_of(module: types.ModuleType, attribute: str) -> Any:
    """``module``'s ``attribute``, or its submodule of that name not imported yet; or None."""
    value = getattr(module, attribute, None)
    if value is None and hasattr(module, "__path__"):
        value = allowed_module(f"{module.__name__}.{attribute}")
    return value


@functools.cache
def named_objects(spelt: tuple[str, ...]) -> tuple[Any, ...]:
    """The objects named ``"module:attribute"`` that this Python has."""
    found = []
    for name in spelt:
        module_name, attribute = name.split(":")
        try:
            module = builtins if module_name == "builtins" else \
                importlib.import_module(module_name)
        except Exception:  # noqa: BLE001 (not installed: nothing to know it by)
            continue
        if (value := getattr(module, attribute, None)) is not None:
            found.append(value)
    return tuple(found)


def root_module(node: ast.AST, modules: Mapping[str, str]) -> str:
    """The top-level module that ``node`` (``jax.nn``, ``np.lib.format.read_array``, ``load``
    imported from numpy) is, or is an attribute of, by the notebook's names for its imports;
    "" if it is none."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return modules.get(node.id, "").split(".")[0] if isinstance(node, ast.Name) else ""
