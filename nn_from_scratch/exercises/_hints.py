"""How a check words what it found: a short line about a value, an error's first line.

A hint quotes what the student handed in, never the whole of it: a (512, 784)
array in a message helps nobody. When the grader checks a submission, the
student's objects are in another process (:mod:`._remote`); they are summed up
from what that process said of them, and nothing more is asked.
"""
from typing import Any

import numpy as np

from ..i18n import N_, _
from ._remote import Remote

__all__ = ["LOGSUMEXP_OVERFLOWED", "NETWORK_SHAPES", "NO_DERIVATIVE", "first_line", "summary",
           "the_stubs"]


# JAX's error where a collective has no derivative (a student's walk of 11.3 and 12.2: grad
# through lax.pmax), as the parallel lessons' checks hint it
NO_DERIVATIVE: dict[str | tuple[str, ...], str] = {"Differentiation rule for 'pmax'": N_(
    "lax.pmax has no derivative (JAX has no differentiation rule for it): average over the "
    "devices with lax.pmean instead")}


# Errors of an answer written for one network where the checks draw its sizes and depth
# (walk 11): its layers named one by one, (w1, b1), (w2, b2) = params; a reshape to a size
# written in, x.reshape(-1, 784); a layer skipped or a W transposed; 10 classes typed
NETWORK_SHAPES: dict[str | tuple[str, ...], str] = {
    "values to unpack": N_(
        "the network here has another number of layers than your code unpacks: loop over "
        "them, for w, b in params (or *hidden, (w, b) = params), rather than name each layer"),
    "cannot reshape": N_(
        "a reshape to a size written as a number? The sizes here are drawn, other than the "
        "lesson's: read them from the arrays (x.shape, w.shape), or let -1 stand for one"),
    ("dot_general requires", "incompatible shapes", "Incompatible shapes"): N_(
        "shapes that do not fit: a layer skipped, a W transposed, or a size written as a "
        "number? Each layer is W @ a + b, W of shape (outputs, inputs), for every (W, b) in "
        "params; the sizes here are drawn, other than the lesson's")}


# A log-softmax written log(sum(exp(logits))), on logits near 100 (07.4 and 13.6)
LOGSUMEXP_OVERFLOWED = N_("returned -inf: with logits near 100, exp(logits) overflows float32 "
                          "(above about 88), so log(sum(exp(logits))) is inf. Use logsumexp "
                          "(jax.scipy.special.logsumexp), which subtracts the largest logit "
                          "first")


def the_stubs(err: BaseException) -> bool:
    """Whether ``err`` is what a stub raises: a bare ``NotImplementedError``. JAX raises one
    with a message where it has no rule ("Differentiation rule for 'pmax' not implemented"):
    that is a wrong answer's, not "not done" (a student's walk of 12.2 and 11.3)."""
    return isinstance(err, NotImplementedError) and not str(err)


def first_line(err: BaseException, limit: int = 160) -> str:
    """``"ValueError: the first line of its message"``, at most ``limit`` characters."""
    text = str(err).strip().splitlines()
    line = f"{type(err).__name__}: {text[0]}" if text else type(err).__name__
    return line if len(line) <= limit else line[:limit - 1] + "…"


def summary(value: Any, limit: int = 60) -> str:
    """A short line about a value a student handed in, never the whole of it.

    ``array of shape (3, 4) float32 [0.1, -2, 3.5, …]``, ``list of 3 items``,
    ``function relu``, ``7.5``. Quoted in hints instead of the value itself: a
    (512, 784) array in a message helps nobody.
    """
    if isinstance(value, Remote):  # what the student's kernel said of it; nothing more is asked
        name = value.name or value.kind
        if not callable(value):
            return value.kind
        return _("function {name}").format(name=name) if "<" not in name else _("a function")
    if isinstance(value, (bool, int, float, complex, str, type(None))) or np.isscalar(value):
        text = repr(value.item() if isinstance(value, np.generic) else value)
        return text if len(text) <= limit else text[:limit - 1] + "…"
    if hasattr(value, "shape") and hasattr(value, "dtype") and np.ndim(value) == 0:
        return summary(np.asarray(value).item(), limit)  # 16.5, not array of shape () [16.5]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        flat = np.asarray(value).ravel()
        head = ", ".join(f"{x:.3g}" if np.issubdtype(flat.dtype, np.number) else str(x)
                         for x in flat[:3].tolist())
        more = ", …" if flat.size > 3 else ""
        return _("array of shape {shape} {dtype} [{values}]").format(
            shape=tuple(value.shape), dtype=value.dtype, values=head + more)
    if isinstance(value, (list, tuple, dict, set)):
        kind, count = type(value).__name__, len(value)
        return (_("{kind} of 1 item").format(kind=kind) if count == 1 else
                _("{kind} of {count} items").format(kind=kind, count=count))
    if callable(value):
        name = getattr(value, "__name__", type(value).__name__)
        return _("function {name}").format(name=name) if "<" not in name else _("a function")
    return type(value).__name__
