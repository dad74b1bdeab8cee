"""Argument checks shared by every layer of the library, and the error types they raise.

Every public entry point checks what it is given *before* doing any work, so a
mistake costs a second, not a training run. An error names what was received,
what was expected and the likely fix. This module imports nothing of the
package, so any module may use it.

``InputError`` is the one type for bad input: the command line catches it (and
only it) and prints its message as one line, while a genuine bug keeps its
traceback. It subclasses ``ValueError`` (and ``InputTypeError`` also
``TypeError``), so ``except ValueError`` in a user's code still works.
"""
import math
import numbers
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["InputError", "InputTypeError", "check_choice", "check_key", "check_positive_int",
           "check_step_size", "check_writable_folder"]


class InputError(ValueError):
    """Bad input to a public function; the message says what was received and the fix."""


class InputTypeError(InputError, TypeError):
    """Input of the wrong type (a seed instead of a key, an array instead of a number)."""


def _describe(value: Any) -> str:
    """``value`` as an error message shows it: its type, and its shape and dtype if it has them."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__} with shape {tuple(shape)} and dtype {dtype}"
    return f"{type(value).__name__} {value!r}"


def check_key(key: Any, name: str = "key") -> Any:
    """Return ``key`` if it is ONE JAX PRNG key, else raise ``InputTypeError``.

    Accepts both styles: a typed key from ``jax.random.key(0)`` (shape ``()``,
    dtype ``key<fry>``) and a legacy raw key from ``jax.random.PRNGKey(0)``
    (shape ``(2,)``, dtype ``uint32``). Anything else, such as a plain integer
    seed, is refused with the fix spelled out.
    """
    dtype, shape = getattr(key, "dtype", None), getattr(key, "shape", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        if shape == ():
            return key
    elif dtype == jnp.uint32 and shape == (2,):
        return key
    raise InputTypeError(
        f"{name} must be a JAX PRNG key; got {_describe(key)}. "
        f"Make one with jax.random.key(seed) (or the older jax.random.PRNGKey(seed)), "
        f"and use jax.random.split(key) to get fresh keys instead of reusing one."
    )


def _as_real_scalar(value: Any, name: str, example: str) -> float | None:
    """``float(value)`` for a real number or a 0-d real array; ``None`` while traced in ``jit``."""
    dtype = getattr(value, "dtype", None)
    is_bool = isinstance(value, (bool, np.bool_)) or (dtype is not None and np.dtype(dtype) == bool)
    shape = getattr(value, "shape", ())
    numeric = isinstance(value, numbers.Real) or (
        hasattr(value, "dtype") and np.issubdtype(np.dtype(value.dtype), np.number))
    if is_bool or shape != () or not numeric:
        raise InputTypeError(f"{name} must be a single number, e.g. {name}={example}; "
                             f"got {_describe(value)}.")
    try:
        return float(value)
    except jax.errors.ConcretizationTypeError:  # a tracer inside jit: its value is not known yet
        return None


def check_step_size(step_size: Any, name: str = "step_size") -> Any:
    """Return ``step_size`` if it is a finite number > 0, else raise ``InputError``.

    Python, NumPy and JAX scalars are accepted; ``True``, strings and arrays with
    more than one element are refused. Under ``jit`` the value is not known, so
    only the shape is checked.
    """
    value = _as_real_scalar(step_size, name, "0.1")
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(
            f"{name} must be a finite number greater than 0; got {step_size}. "
            f"Typical values are 0.01 to 0.5, e.g. {name}=0.1."
        )
    return step_size


def check_positive_int(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``int(value)`` if it is a whole number >= ``minimum``, else raise ``InputError``.

    Python and NumPy integers are accepted; ``True``, ``2.0`` and ``"3"`` are not.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InputTypeError(f"{name} must be a whole number >= {minimum}; got {_describe(value)}.")
    if value < minimum:
        raise InputError(f"{name} must be a whole number >= {minimum}; got {value}.")
    return int(value)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ``InputError`` listing them."""
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}.")
    return value


def check_writable_folder(folder: str | Path, option: str, given: str) -> None:
    """Refuse, before any long work, an output folder that could not be written afterwards.

    ``option`` and ``given`` are how the user named it (``--csv``, ``out/g.csv``).
    """
    if not Path(folder).is_dir():
        raise InputError(f"{option} {given}: the folder {folder} does not exist; create it "
                         f"first or choose another path.")
    if not os.access(folder, os.W_OK):
        raise InputError(f"{option} {given}: the folder {folder} is not writable; choose "
                         f"another path.")
