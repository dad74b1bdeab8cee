"""What crosses between the grader and a student's kernel: plain data, never pickle.

A check decided in the grader's process calls the student's code in the kernel;
both ways go values in a JSON form that this module makes and reads, and that
holds only:

- ``None``, ``...``, booleans, integers, floats (NaN and infinities too), strings;
- lists, tuples and dicts of these (their kind kept: a tuple comes back a tuple), and
  named tuples of a known package's class (Optax's states), made without running any code
  of the class;
- arrays as ``.npy`` bytes (base64), NumPy's or JAX's (which one, the dtype and a
  0-d array versus a NumPy scalar are kept), and JAX's PRNG keys (their data and
  implementation);
- *handles*: anything else stays in the kernel, and crosses as a number naming
  it, with its type's name and whether it can be called (:class:`Handle`);
- *references*: a function or class of the course's package, JAX, NumPy or the
  standard library, by its module and name, which the other side imports;
- an exception: its class's name and module, its message and its cause.

Reading one never runs code from the message (``np.load`` with
``allow_pickle=False``): whatever a kernel sends, the worst it can be is a wrong
value. :func:`encode` takes ``handle``, the sender's way of keeping an object it
cannot send, and :func:`decode` takes ``resolve``, the receiver's way of turning
a handle or a reference back into an object.
"""
import base64
import builtins
import importlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["SENDABLE", "Handle", "decode", "decode_error", "encode", "encode_error", "reference"]

# Modules whose functions and classes either side may name, to be imported by the other.
SENDABLE = ("nn_from_scratch", "jax", "numpy", "math", "optax", "builtins")
_LIMIT = 2000  # characters of an exception's message that cross


class Handle(dict):
    """An object that stays where it is, and what it says of itself: ``{"id", "type", "name",
    "callable", "ref"}`` (``ref``: :func:`reference`'s name for it, if it has one)."""


def _array(value: Any) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(value), allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode()


def _load(data: str) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(data)), allow_pickle=False)


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
    return f"{module}:{name}" if found is value else None


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
    if isinstance(value, tuple) and hasattr(type(value), "_fields") and reference(type(value)):
        return {"t": "namedtuple", "ref": reference(type(value)),
                "v": [encode(v, handle, named) for v in value]}
    if type(value) is dict:
        return {"t": "dict", "k": [encode(k, handle, named) for k in value],
                "v": [encode(v, handle, named) for v in value.values()]}
    if isinstance(value, np.generic) and value.dtype != object:
        return {"t": "npscalar", "d": _array(value)}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray and value.dtype != object:
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
            if data is not None:
                return {"t": "jax", "d": _array(data), "weak": bool(value.weak_type)}
    known = reference(value) if named else None
    if known:
        return {"t": "ref", "v": known}
    if handle is None:
        raise TypeError(f"cannot send {type(value).__name__} {value!r:.80}: not plain data")
    return {**handle(value), "t": "handle"}


def _import(named: str) -> Any:
    module, _, name = named.partition(":")
    if module.split(".")[0] not in SENDABLE:
        raise ValueError(f"{named}: not something the grader lets cross")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def decode(data: Any, resolve: Callable[[int], Any], named: bool = False) -> Any:
    """A value from its JSON form; ``resolve(id)`` gives the object a handle names.

    Only with ``named`` (the kernel, reading the grader's question) is a name imported.
    """
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):  # never made by encode: a tampered message
        raise ValueError("a bare list")
    kind = data["t"]
    if kind == "...":
        return Ellipsis
    if kind == "int":
        return int(data["v"])
    if kind in ("list", "tuple"):
        items = [decode(v, resolve, named) for v in data["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "namedtuple":  # optax's states: a tuple class of a known package, by name
        cls = _import(data["ref"])
        if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
            raise ValueError(f"{data['ref']} is not a named tuple")
        return tuple.__new__(cls, [decode(v, resolve, named) for v in data["v"]])
    if kind == "dict":
        return {decode(k, resolve, named): decode(v, resolve, named)
                for k, v in zip(data["k"], data["v"])}
    if kind == "np":
        return _load(data["d"])
    if kind == "npscalar":
        return _load(data["d"])[()]
    if kind in ("jax", "key"):
        import jax
        import jax.numpy as jnp
        array = _load(data["d"])
        if kind == "key":
            return jax.random.wrap_key_data(jnp.asarray(array), impl=data["impl"])
        if data.get("weak") and array.ndim == 0 and array.dtype.kind in "biuf":
            return jnp.asarray(array.item())  # a Python number's weak type, as it was
        with jax.enable_x64(array.dtype.itemsize == 8):  # a float64 answer stays float64
            return jnp.asarray(array)
    if kind == "ref" and named:
        return _import(data["v"])
    if kind == "handle":
        return resolve(int(data["id"]))
    raise ValueError(f"unknown kind {kind!r}")


def encode_error(err: BaseException) -> dict[str, Any]:
    """An exception as data: its class, message (bounded) and cause."""
    cause = err.__cause__ if isinstance(err.__cause__, BaseException) else None
    base = next(cls.__name__ for cls in type(err).__mro__ if cls.__module__ == "builtins")
    return {"t": "error", "type": type(err).__name__, "module": type(err).__module__,
            "base": base, "message": str(err)[:_LIMIT],
            "cause": encode_error(cause) if cause else None}


def _builtin(name: str) -> type | None:
    """The built-in exception class ``name``, unless it could stop the grader."""
    found = getattr(builtins, name, None)
    if isinstance(found, type) and issubclass(found, Exception):
        return found
    return None


def _error_class(name: str, module: str, base: str, known: dict[str, type]) -> type:
    if f"{module}.{name}" in known:
        return known[f"{module}.{name}"]
    if module == "builtins" and _builtin(name):
        return _builtin(name)  # type: ignore[return-value]
    if module.startswith("jax"):
        import jax
        found = getattr(jax.errors, name, None)
        if isinstance(found, type) and issubclass(found, Exception):
            return found
    # another class, named as the kernel named it, under its nearest built-in class
    return type(name, (_builtin(base) or Exception,), {"__module__": "student"})


def decode_error(data: dict[str, Any], known: dict[str, type]) -> Exception:
    """The exception :func:`encode_error` described, of the same class where the grader knows
    it (``known``: ``"module.Name"`` -> class, e.g. the checkers' Mistake), else a class of
    the same name; never a class that could stop the grader (``SystemExit``)."""
    cls = _error_class(str(data.get("type")), str(data.get("module")), str(data.get("base")),
                       known)
    err: Exception = Exception.__new__(cls)  # not cls's own __init__: JAX's take other arguments
    Exception.__init__(err, str(data.get("message", ""))[:_LIMIT])
    if data.get("cause"):
        err.__cause__ = decode_error(data["cause"], known)
    return err
