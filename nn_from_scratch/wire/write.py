"""Writing the wire's JSON form: which kinds cross (:func:`encode`), and which functions
and classes cross by name (:func:`reference`, for the kernel to import).

    >>> encode((1, [2.5, None]))
    {'t': 'tuple', 'v': [1, {'t': 'list', 'v': [2.5, None]}]}
"""
import base64
import functools
import importlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["ARRAY_KINDS", "NAMED_TUPLES", "SENDABLE", "Handle", "encode", "import_named",
           "named_tuples", "reference"]

# Modules whose functions and classes either side may name, to be imported by the other.
SENDABLE = ("nn_from_scratch", "jax", "numpy", "math", "optax", "builtins")
# The named tuples that cross as themselves (Optax's optimizer states, which a student's step
# returns and takes back); any other named tuple stays in the kernel as a handle.
NAMED_TUPLES = ("EmptyState", "TraceState", "ScaleByAdamState", "ScaleByRmsState",
                "ScaleByRStdDevState", "ScaleByScheduleState", "AddDecayedWeightsState",
                "MaskedState")
ARRAY_KINDS = "biufc"  # booleans, integers, unsigned, floats, complex: nothing else crosses


class Handle(dict):
    """An object that stays where it is, and what it says of itself: ``{"id", "type", "name",
    "callable", "ref"}`` (``ref``: :func:`reference`'s name for it, if it has one)."""


def _array(value: Any) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode()


def reference(value: Any) -> str | None:
    """``"module:qualname"`` of a function or class the other side can import, else None."""
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(name, str)) or "<" in name:
        return None
    if module.split(".")[0] not in SENDABLE:
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    if found is value:
        return f"{module}:{name}"
    # a transformed function its module keeps under another name (pmap_update)
    kept = next((attribute for attribute, held in vars(importlib.import_module(module)).items()
                 if held is value), None)
    return f"{module}:{kept}" if kept else None


@functools.cache
def named_tuples() -> dict[str, type]:
    """:data:`NAMED_TUPLES`' classes by :func:`reference`'s name (none without Optax)."""
    try:
        import optax
    except ImportError:
        return {}
    classes = [getattr(optax, name, None) for name in NAMED_TUPLES]
    return {reference(cls) or "": cls for cls in classes if isinstance(cls, type)
            and issubclass(cls, tuple) and hasattr(cls, "_fields") and reference(cls)}


def _is_key(value: Any) -> bool:
    import jax
    return isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype,
                                                                  jax.dtypes.prng_key)


def encode(value: Any, handle: Callable[[Any], Handle] | None = None, named: bool = True) -> Any:
    """``value`` in the JSON form; what is not plain data goes through ``handle``.

    With ``named``, a function or class the other side can import crosses by name (the
    grader's stand-ins and ``math.sin``); a kernel sends everything that is not data as a
    handle, since the grader never runs a function a kernel names.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if value is Ellipsis:
        return {"t": "..."}
    if isinstance(value, Handle):
        return {**value, "t": "handle"}
    if type(value) in (int, float):
        return value if type(value) is float or abs(value) < 2**53 else {"t": "int",
                                                                          "v": str(value)}
    if type(value) in (list, tuple):
        return {"t": type(value).__name__, "v": [encode(v, handle, named) for v in value]}
    if isinstance(value, tuple) and reference(type(value)) in named_tuples():
        return {"t": "namedtuple", "ref": reference(type(value)),
                "v": [encode(v, handle, named) for v in value]}
    if type(value) is dict:
        return {"t": "dict", "k": [encode(k, handle, named) for k in value],
                "v": [encode(v, handle, named) for v in value.values()]}
    if isinstance(value, np.generic) and value.dtype.kind in ARRAY_KINDS:
        return {"t": "npscalar", "d": _array(value)}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray and \
            value.dtype.kind in ARRAY_KINDS:
        return {"t": "np", "d": _array(value)}
    if "jax" in type(value).__module__:
        import jax
        if _is_key(value):
            impl = str(jax.random.key_impl(value))
            return {"t": "key", "impl": impl, "d": _array(jax.random.key_data(value))}
        if isinstance(value, jax.Array) and getattr(value, "is_fully_addressable", True):
            try:
                data = np.asarray(value)
            except Exception:  # a tracer, a deleted array
                data = None
            if data is not None and data.dtype.kind in ARRAY_KINDS:
                return {"t": "jax", "d": _array(data), "weak": bool(value.weak_type)}
    known = reference(value) if named else None
    if known:
        return {"t": "ref", "v": known}
    if handle is None:
        raise TypeError(f"cannot send {type(value).__name__} {value!r:.80}: not plain data")
    return {**handle(value), "t": "handle"}


def import_named(named: str) -> Any:
    """The function or class ``"module:qualname"`` names, from :data:`SENDABLE` only: what a
    kernel does with the grader's references (the grader never imports a kernel's)."""
    module, _, name = named.partition(":")
    if module.split(".")[0] not in SENDABLE:
        raise ValueError(f"{named}: not something the grader lets cross")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


