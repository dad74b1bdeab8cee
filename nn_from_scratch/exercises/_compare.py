"""How a check compares an answer with the right one, and the references it compares with.

Every comparison happens where the checker runs: in class, in the student's
kernel; when graded, in the grader's own process, on values the student's code
returned (:mod:`._remote`). Each raises :class:`._core.Mistake` with a hint that
says what was compared, or returns quietly.
"""
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..i18n import _
from . import _fixtures
from ._calls import library_name
from ._core import Mistake
from ._hints import summary
from ._remote import beside

__all__ = ["as_array", "expect_close", "expect_own_code", "expect_int", "expect_shape",
           "expect_vmap", "mlp_loss_and_grads", "reject_known_wrong"]


def _numbers(got: Any) -> bool:
    """Is ``got`` an array, a number, or a list or tuple of them (:func:`._fixtures.is_numbers`:
    nothing of the student's own making that becomes numbers only when converted)?"""
    if isinstance(got, list | tuple):
        return all(_numbers(part) for part in got)
    return _fixtures.is_numbers(got)


def as_array(got: Any) -> np.ndarray:
    """``got`` (what a student's function returned) as a NumPy array of numbers, or a
    :class:`Mistake` that says what it is instead (a tuple of two arrays, a string, an object
    of the student's own class)."""
    try:
        array = np.asarray(got) if _numbers(got) else None
    except (ValueError, TypeError):  # arrays of different shapes in a tuple
        array = None
    if array is None or array.dtype.kind in "OUSV":
        raise Mistake(_("your function returned {got}; a check of this exercise expects one "
                        "array of numbers").format(got=summary(got)))
    return array


def expect_shape(got: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``got`` as a NumPy array, or a :class:`Mistake` if its shape is not ``shape`` (or it is
    no array of numbers: a tuple of two arrays, a string)."""
    array = as_array(got)
    if array.shape != tuple(shape) and isinstance(got, (tuple, list)):
        raise Mistake(_("{what} returned {got}; expected one array of shape {want}").format(
            what=what, got=summary(got), want=tuple(shape)))
    if array.shape != tuple(shape):
        raise Mistake(_("{what} has shape {got}; expected {want}").format(
            what=what, got=array.shape, want=tuple(shape)))
    return array


def expect_close(got: Any, want: Any, what: str, rtol: float = 1e-4, atol: float = 1e-5,
                 hint: str = "") -> None:
    """A :class:`Mistake` unless ``got`` has ``want``'s shape and values (to float rounding).

    ``hint`` is marked for translation where it is written, ``hint=N_("...")`` (or
    ``_("... {x}").format(x=...)`` when it has values), and said in the student's language.
    """
    want = np.asarray(want)
    array = expect_shape(got, want.shape, what)
    if not np.allclose(array, want, rtol=rtol, atol=atol):
        worst = float(np.max(np.abs(array.astype(np.float64) - want)))
        if hint:
            raise Mistake(_("{what} is off by up to {worst:.3g} — {hint}").format(
                what=what, worst=worst, hint=_(hint)))
        raise Mistake(_("{what} is off by up to {worst:.3g}").format(what=what, worst=worst))


def reject_known_wrong(got: Any, wrong: Mapping[str, Any], rtol: float = 1e-5,
                       atol: float = 1e-8, want: Any = None) -> None:
    """A :class:`Mistake` with the hint of the first typical wrong answer that ``got`` equals.

    ``wrong`` maps each hint to the value that mistake gives (a number or an array of
    ``got``'s shape); "equals" is ``np.allclose`` with ``rtol`` and ``atol``. With
    ``want`` (the right answer), a wrong answer that happens to equal it on these
    inputs is skipped. Returns quietly when ``got`` matches none of them.
    """
    for hint, value in wrong.items():
        if np.allclose(got, value, rtol=rtol, atol=atol) and not (
                want is not None and np.allclose(value, want, rtol=rtol, atol=atol)):
            raise Mistake(hint)


def expect_int(got: Any, what: str, hint: str) -> int:
    """``got`` as an ``int`` if it is a whole number (an int, a NumPy integer, ``3.0``).

    Anything else (a list, an array, ``2.5``, a string) is a :class:`Mistake` that
    says ``"<what> returned <a summary of got>; <hint>"``.
    """
    try:
        whole = (not isinstance(got, (str, bytes)) and np.ndim(got) == 0
                 and float(got) == int(got))
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole:
        raise Mistake(_("{what} returned {value}; {hint}").format(
            what=what, value=summary(got), hint=_(hint)))
    return int(got)


def mlp_loss_and_grads(params: Any, x: Any, y: Any) -> tuple[float, list[tuple[np.ndarray, ...]]]:
    """The MLP's ``loss`` (lesson 08) and its gradient, in NumPy float64: a reference for
    checks that compiles nothing, where ``jax.jit(jax.grad(loss))`` costs a compile per shape.

    ``params``: ``[(W (n_out, n_in), b (n_out,)), ...]``, ReLU between layers;
    ``x: (batch, n_in)``; ``y: (batch, n_classes)`` one-hot. Returns
    ``(mean cross-entropy of the log-softmax, [(dW, db), ...])``.
    """
    acts = [np.asarray(x, np.float64)]
    layers = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in params]
    for w, b in layers[:-1]:
        acts.append(np.maximum(acts[-1] @ w.T + b, 0))  # (batch, n_out)
    logits = acts[-1] @ layers[-1][0].T + layers[-1][1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    delta = (np.exp(log_p) - y) / len(acts[0])  # d loss / d logits, as sum(y) = 1
    grads: list[tuple[np.ndarray, ...]] = []
    for i in reversed(range(len(layers))):
        grads.append((delta.T @ acts[i], delta.sum(axis=0)))
        delta = (delta @ layers[i][0]) * (acts[i] > 0)
    return float(-np.mean(np.sum(log_p * y, axis=1))), grads[::-1]


def expect_own_code(student_fn: Any, args: tuple[Any, ...], what: str,
                    modules: str | tuple[str, ...], names: tuple[str, ...] = (),
                    allowed: tuple[str, ...] = (), calls: Any = None,
                    message: str | None = None) -> None:
    """A Mistake if ``student_fn(*args)`` calls a function of the library's ``modules``
    (``"nn_from_scratch.optim"``, or several), or one of its ``names`` only, however it is
    reached (a ``def`` or ``lambda`` around it, ``getattr``): the exercise asks for that code.
    Run beside the answer (in class here, when graded in the student's kernel), on inputs it
    may change. ``allowed``: functions the lesson itself hands the student; ``calls``: how the
    calls are found (:func:`._fixtures.library_calls`, or a lesson's own that traces under
    JAX); ``message``: the lesson's words, with ``{what}`` and ``{name}``.
    """
    if not callable(student_fn) or library_name(student_fn):
        return  # the check's call says what it is
    modules = (modules,) if isinstance(modules, str) else modules
    used = [name for name in beside(student_fn, calls or _fixtures.library_calls, student_fn,
                                    args, allowed, modules)
            if not names or name.rpartition(".")[2] in names]
    if used and message:
        raise Mistake(message.format(what=what, name=used[0]))
    if used:
        raise Mistake(_("{what} calls the library's {name}: the exercise wants your own "
                        "code, not the library's").format(
                          what=what, name=used[0].rpartition(".")[2]))


def _transforms(student_fn: Any, args: tuple[Any, ...]) -> dict[str, int]:
    """How many vmaps and grads ``student_fn(*args)`` runs (:func:`._fixtures.transforms_run`),
    where the student's code runs."""
    import jax.numpy as jnp

    return beside(student_fn, _fixtures.transforms_run, student_fn,
                  tuple(jnp.asarray(arg) for arg in args))


def expect_vmap(student_fn: Any, args: tuple[Any, ...], what: str, how: str,
                vmaps: int = 1, grad: bool = False) -> None:
    """A Mistake if ``student_fn(*args)`` runs fewer than ``vmaps`` vmaps (or no grad, where
    ``grad``), or computes its result from fewer (one run and thrown away beside einsum): the
    exercise is vmap, not einsum, a loop or NumPy, right as they may be. ``how``: the
    exercise's vmap, written out."""
    if not callable(student_fn):
        return
    ran = _transforms(student_fn, args)
    if not ran:
        return  # it raised: the check's own call said why
    if not ran["vmap"]:
        raise Mistake(_("{what} is right, but computed without jax.vmap (einsum, a loop, NumPy "
                        "or a matrix product give the numbers, not the lesson): {how}").format(
                          what=what, how=how))
    if ran["vmap"] < vmaps:
        raise Mistake(_("{what} is right, but with one jax.vmap around a matrix product, where "
                        "the exercise wants {vmaps} vmaps and jnp.dot of two vectors: "
                        "{how}").format(what=what, vmaps=vmaps, how=how))
    if grad and not ran["grad"]:
        raise Mistake(_("{what} is right, but computed without jax.grad (a formula worked out "
                        "by hand, or jax.jacobian, jacrev or vjp): {how}").format(
                          what=what, how=how))
    unused = [name for name, kind, wanted in (("jax.vmap", "vmap", vmaps),
                                              ("jax.grad", "grad", int(grad)))
              if ran.get(f"{kind} used", wanted) < wanted]
    if unused:  # run, and thrown away: the numbers come from elsewhere
        raise Mistake(_("{what} runs {name}, but its result is not what it returns: with "
                        "that call's inputs changed the answer stays the same, so its numbers "
                        "come from other code: {how}").format(what=what, name=unused[0],
                                                              how=how))
