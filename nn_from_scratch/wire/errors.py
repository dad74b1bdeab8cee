"""Exceptions across the wire: what was raised, as data (:func:`encode_error`), and an
exception the grader can raise and catch again (:func:`decode_error`), never one that
could stop it (``SystemExit``, ``KeyboardInterrupt``)."""
import builtins
from typing import Any

__all__ = ["decode_error", "encode_error"]

_LIMIT = 2000  # characters of an exception's message that cross
_CAUSES = 8  # causes of an exception that cross (a chain of thousands would recurse)


def encode_error(err: BaseException) -> dict[str, Any]:
    """An exception as data: its class, message (bounded) and cause."""
    cause = err.__cause__ if isinstance(err.__cause__, BaseException) else None
    base = next(cls.__name__ for cls in type(err).__mro__ if cls.__module__ == "builtins")
    return {"t": "error", "type": type(err).__name__, "module": type(err).__module__,
            "base": base, "message": str(err)[:_LIMIT],
            "cause": encode_error(cause) if cause else None}


def _builtin(name: str) -> type | None:
    """The built-in exception class ``name``, unless it could stop the grader."""
    found = vars(builtins).get(name)
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
        found = vars(jax.errors).get(name)  # a class JAX defines, never a lazy attribute
        if isinstance(found, type) and issubclass(found, Exception):
            return found
    # another class, named as the kernel named it, under its nearest built-in class
    return type(name[:100] or "Error", (_builtin(base) or Exception,), {"__module__": "student"})


def _printable(err: Exception) -> bool:
    try:
        return bool(str(err))
    except Exception:
        return False


def decode_error(data: Any, known: dict[str, type], causes: int = _CAUSES) -> Exception:
    """The exception :func:`encode_error` described, of the same class where the grader knows
    it (``known``: ``"module.Name"`` -> class, e.g. the checkers' Mistake), else a class of
    the same name; never a class that could stop the grader (``SystemExit``). At most
    ``causes`` causes are read; a malformed description is a ``ValueError``."""
    if type(data) is not dict:
        raise ValueError("the kernel's error is not an error")
    name, module, base = (str(data.get(field))[:200] for field in ("type", "module", "base"))
    cls, message = _error_class(name, module, base, known), str(data.get("message", ""))[:_LIMIT]
    # cls's own __new__ (OSError's refuses Exception.__new__), not its __init__ (JAX's take
    # other arguments)
    err: Exception = cls.__new__(cls)  # type: ignore[call-overload]  # an Exception subclass
    Exception.__init__(err, message)
    if message and not _printable(err):  # it prints fields of its own (UnicodeDecodeError)
        err = type(name[:100] or "Error", (Exception,), {"__module__": "student"})(message)
    if data.get("cause") and causes > 0:
        err.__cause__ = decode_error(data["cause"], known, causes - 1)
    return err
