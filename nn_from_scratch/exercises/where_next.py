"""Checkers for lesson 15, optimizers from scratch, then Optax.

The student writes momentum's and Adam's update for ONE parameter (an array of any
shape), AdamW's decoupled weight decay on top of Adam, a warm-up–cosine learning-rate
schedule, clipping a whole pytree of gradients by its global norm, and a training step
with any Optax optimizer. The references are written out here in NumPy (float64), so that
a check does not lean on the library it checks against; the tests confirm that they agree
with Optax.

Every check draws its inputs, sizes as well as values, with :func:`._calls.generator`:
the same in class, fresh for each grading; no two cases of a check share every size, so
an answer right for one shape only fails.

Optax comes with the ``lessons`` extra, not with the library: it is imported inside the
checkers, so that grading and the other lessons work without it.
"""
import contextvars
import functools
from typing import Any

import jax
import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import call, fast_call, finish_first, generator, scaled
from ._compare import (
    expect_close,
    expect_own_code,
    expect_shape,
    mlp_loss_and_grads,
    reject_known_wrong,
)
from ._core import Mistake, exercise
from ._draws import draw_sizes, labelled_batch, layer_sizes, network
from ._hints import NETWORK_SHAPES, summary
from ._remote import beside, session_of, transformed

LESSON = "15_where_next"
STEP_LR, STEP_BETA = 0.1, 0.9  # the optimizer of the training-step check
OTHER_LR, OTHER_BETA = 0.03, 0.5  # a second one: the step must use the tx it is handed


def _shapes(n: int) -> tuple[tuple[int, ...], ...]:
    """Three shapes for a check's cases, a vector, a matrix and a 3-D array, sizes 2-7 drawn
    from ``generator(n)``: no two share every size, whatever is drawn."""
    sizes = generator(n).integers(2, 8, size=6)
    return (int(sizes[0]),), (int(sizes[1]), int(sizes[2])), tuple(int(s) for s in sizes[3:])


def _normal(source: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
    return (scale * source.normal(size=shape)).astype(np.float32)


def _pair(out: Any, what: str, names: str) -> tuple[Any, ...]:
    """``out`` as the tuple ``names`` describes ("(update, velocity)"), or a Mistake."""
    count = names.count(",") + 1
    if not (isinstance(out, (tuple, list)) and len(out) == count):
        raise Mistake(_("{what} should return a tuple {names}; got {got}").format(
            what=what, names=names, got=summary(out)))
    return tuple(out)


# What the lesson itself hands the student while a check runs: after 15.2 the lesson's own
# adam_update calls the library's adam_step, so 15.3 (and its "finish 15.2 first") allows it.
_HANDED: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("handed", default=())


def _own_code(student_fn: Any, args: tuple[Any, ...], what: str,
              allowed: tuple[str, ...] = ()) -> None:
    """A Mistake if ``student_fn(*args)`` calls a ready-made optimizer (the library's
    ``optim``, Optax, ``jax.example_libraries``) instead of the formula the exercise asks
    for, however it is reached (a wrapper, ``partial``, ``getattr`` by name). ``allowed``:
    functions the lesson itself hands the student (``adam_step`` behind 15.3's
    ``adam_update``)."""
    expect_own_code(student_fn, args, what, _fixtures.OPTIMIZER_MODULES,
                    allowed=(*allowed, *_HANDED.get()), message=_(
                        "{what} calls {name}, a ready-made version of what this exercise asks "
                        "you to write: write the formula yourself with jax.numpy (the lesson "
                        "compares yours with the library's and Optax's afterwards)"))


def _optax() -> Any:
    try:
        import optax
    except ImportError:
        raise Mistake("optax is not installed: pip install -e '.[lessons]'") from None
    return optax


MOMENTUM_SETTINGS = ((0.1, 0.9), (0.03, 0.5), (0.4, 0.99))  # (learning_rate, beta) per case


@exercise(LESSON, 1, "momentum for one parameter")
def momentum_update(student_fn: Any) -> str:
    settings = (MOMENTUM_SETTINGS[0], *(tuple(scaled(s, 151 + i, 0.1))
                                        for i, s in enumerate(MOMENTUM_SETTINGS[1:])))
    for number, (shape, (lr, beta)) in enumerate(zip(_shapes(150), settings)):
        source = generator(155 + number)
        grad, velocity = _normal(source, shape), _normal(source, shape, 2.0)
        what = _("momentum_update(grad, velocity, {lr:g}, {beta:g}) for arrays of shape "
                 "{shape}").format(lr=lr, beta=beta, shape=shape)
        if number == 0:
            _own_code(student_fn, (grad, velocity, lr, beta), what)
        out = fast_call(student_fn, grad, velocity, lr, beta, what=what)
        update, new_velocity = _pair(out, what, "(update, velocity)")
        g, v = grad.astype(np.float64), velocity.astype(np.float64)
        want_v = beta * v + g
        want = -lr * want_v
        update = expect_shape(update, shape, what)
        new_velocity = expect_shape(new_velocity, shape, what)
        if np.allclose(update, want_v, rtol=1e-4, atol=1e-6) and np.allclose(
                new_velocity, want, rtol=1e-4, atol=1e-6):
            raise Mistake("the two came back in the other order: return (update, velocity)")
        reject_known_wrong(new_velocity, {
            N_("the velocity averages the gradients, (1 - beta) * grad: that is Adam's moving "
               "average. Momentum adds the whole gradient: velocity = beta * velocity + grad"):
                beta * v + (1 - beta) * g,
            N_("beta multiplies the old velocity, not the gradient: velocity = beta * velocity "
               "+ grad"): v + beta * g,
            N_("the new velocity is the old one times beta, plus the gradient; it was "
               "returned unchanged"): v,
        }, rtol=1e-4, atol=1e-6, want=want_v)
        expect_close(new_velocity, want_v, _("the velocity of {what}").format(what=what),
                     hint=N_("velocity = beta * velocity + grad"))
        reject_known_wrong(update, {
            N_("the update points uphill: the update is ADDED to the parameter, so return "
               "-learning_rate * velocity"): -want,
            N_("the update ignores the velocity: step along the new velocity, "
               "-learning_rate * velocity, not along the gradient alone"): -lr * g,
            N_("the update uses the OLD velocity: first velocity = beta * velocity + grad, "
               "then the update -learning_rate * velocity from the new one"): -lr * v,
        }, rtol=1e-4, atol=1e-6, want=want)
        expect_close(update, want, _("the update of {what}").format(what=what),
                     hint=N_("update = -learning_rate * velocity, from the NEW velocity"))
    return N_("three shapes and three (learning_rate, beta): velocity = beta * velocity + grad, "
              "update = -learning_rate * velocity")


ADAM_CASES = (  # (step t, learning_rate, b1, b2, eps): the defaults, then others
    (1, 1e-3, None, None, None), (4, 0.01, 0.8, 0.99, 0.05), (30, 0.1, 0.7, 0.95, 1e-8))


def _adam(g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, lr: float, b1: float, b2: float,
          eps: float, correct: bool = True, root: bool = True,
          eps_inside: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Adam's update of ONE parameter in float64, and the typical slips (no bias correction, no
    square root, eps under it)."""
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat, v_hat = (m / (1 - b1 ** t), v / (1 - b2 ** t)) if correct else (m, v)
    if eps_inside:
        scale = np.sqrt(v_hat + eps)
    else:
        scale = (np.sqrt(v_hat) if root else v_hat) + eps
    return -lr * m_hat / scale, m, v


def _adam_inputs(number: int, shape: tuple[int, ...], t: int) -> tuple[np.ndarray, ...]:
    """grad, m, v of ``shape`` for a case at step ``t``: m and v zero at step 1, as Adam's
    state starts; v positive after."""
    source = generator(165 + number)
    grad = _normal(source, shape, 0.3)
    if t == 1:
        return grad, np.zeros(shape, np.float32), np.zeros(shape, np.float32)
    return (grad, _normal(source, shape, 0.1),
            (0.05 * source.uniform(0.2, 1.0, size=shape)).astype(np.float32))


def _adam_settings(case: tuple[Any, ...]) -> tuple[float, float, float]:
    _t, _lr, b1, b2, eps = case
    return (0.9 if b1 is None else b1, 0.999 if b2 is None else b2, 1e-8 if eps is None else eps)


def _adam_args(case: tuple[Any, ...]) -> tuple[Any, ...]:
    """The optional arguments a case passes: none for the defaults."""
    return () if case[2] is None else case[2:]


@exercise(LESSON, 2, "Adam for one parameter")
def adam_update(student_fn: Any) -> str:
    for number, (shape, case) in enumerate(zip(_shapes(160), ADAM_CASES)):
        t, (lr,) = case[0], scaled((case[1],), 161 + number)
        b1, b2, eps = _adam_settings(case)
        grad, m, v = _adam_inputs(number, shape, t)
        args = (grad, m, v, t, lr, *_adam_args(case))
        what = _("adam_update(grad, m, v, {t}, {lr:g}{rest}) for arrays of shape {shape}").format(
            t=t, lr=lr, rest="".join(f", {a:g}" for a in _adam_args(case)), shape=shape)
        if number == 0:
            _own_code(student_fn, args, what)
        out = fast_call(student_fn, *args, what=what, hints={
            "positional argument": _("{what} failed: adam_update takes (grad, m, v, t, "
                                     "learning_rate, b1=0.9, b2=0.999, eps=1e-8)").format(
                                         what=what)})
        update, new_m, new_v = (expect_shape(a, shape, what)
                                for a in _pair(out, what, "(update, m, v)"))
        g, m0, v0 = (a.astype(np.float64) for a in (grad, m, v))
        want, want_m, want_v = _adam(g, m0, v0, t, lr, b1, b2, eps)
        reject_known_wrong(new_m, {
            N_("return the moving averages m and v themselves, not the bias-corrected m_hat "
               "and v_hat: the correction is for the step only, the next step goes on from m "
               "and v"): want_m / (1 - b1 ** t),
            N_("m is the moving average of the gradients: m = b1 * m + (1 - b1) * grad"):
                b1 * m0 + g,
            N_("b1 and b2 are swapped: m = b1 * m + (1 - b1) * grad uses b1, v uses b2"):
                b2 * m0 + (1 - b2) * g,
        }, rtol=1e-4, atol=1e-7, want=want_m)
        expect_close(new_m, want_m, "m", rtol=1e-4, atol=1e-7,
                     hint=N_("m = b1 * m + (1 - b1) * grad"))
        reject_known_wrong(new_v, {
            N_("v averages the SQUARED gradients: v = b2 * v + (1 - b2) * grad ** 2"):
                b2 * v0 + (1 - b2) * np.abs(g),
            N_("b1 and b2 are swapped: v = b2 * v + (1 - b2) * grad ** 2"):
                b1 * v0 + (1 - b1) * g * g,
        }, rtol=1e-4, atol=1e-8, want=want_v)
        expect_close(new_v, want_v, "v", rtol=1e-4, atol=1e-8,
                     hint=N_("v = b2 * v + (1 - b2) * grad ** 2"))
        reject_known_wrong(update, {
            N_("the update points uphill: return -learning_rate * m_hat / (sqrt(v_hat) + eps)"):
                -want,
            N_("the bias correction is missing: m_hat = m / (1 - b1 ** t) and v_hat = v / (1 - "
               "b2 ** t); without it the first steps are too small"):
                _adam(g, m0, v0, t, lr, b1, b2, eps, correct=False)[0],
            N_("divide by the square ROOT of v_hat: m_hat / (sqrt(v_hat) + eps)"):
                _adam(g, m0, v0, t, lr, b1, b2, eps, root=False)[0],
            N_("eps goes outside the root, as in Optax: m_hat / (sqrt(v_hat) + eps)"):
                _adam(g, m0, v0, t, lr, b1, b2, eps, eps_inside=True)[0],
        }, rtol=1e-4, atol=1e-8, want=want)
        expect_close(update, want, _("the update of {what}").format(what=what), atol=1e-8,
                     hint=N_("update = -learning_rate * m_hat / (sqrt(v_hat) + eps), with "
                             "m_hat = m / (1 - b1 ** t), v_hat = v / (1 - b2 ** t)"))
    return N_("three shapes, steps 1, 4 and 30, the default and two other settings of b1, b2 "
              "and eps: m, v and the bias-corrected step")


def _adamw_variants(g: np.ndarray, p: np.ndarray, m: np.ndarray, v: np.ndarray, t: int,
                    lr: float, wd: float, b1: float, b2: float,
                    eps: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """AdamW's update, and what its typical slips return instead."""
    adam = _adam(g, m, v, t, lr, b1, b2, eps)[0]
    return adam - lr * wd * p, {
        N_("that is L2 in the gradient (grad + weight_decay * param), which Adam then divides "
           "by sqrt(v_hat): AdamW decouples the decay, update = adam's update - learning_rate "
           "* weight_decay * param"): _adam(g + wd * p, m, v, t, lr, b1, b2, eps)[0],
        N_("the decay is scaled by the learning rate too: - learning_rate * weight_decay * "
           "param"): adam - wd * p,
        N_("the decay pulls the parameter towards 0: subtract learning_rate * weight_decay * "
           "param from the update, do not add it"): adam + lr * wd * p,
        N_("the weight decay is missing: subtract learning_rate * weight_decay * param"): adam,
    }


ADAMW_CASES = (  # (step t, learning_rate, weight_decay, b1, b2, eps)
    (2, 0.01, 0.1, None, None, None), (3, 0.05, 0.5, 0.8, 0.99, 0.05),
    (12, 0.2, 0.02, 0.6, 0.9, 1e-8))


@exercise(LESSON, 3, "AdamW's decoupled weight decay")
def adamw_update(student_fn: Any) -> str:
    token = _HANDED.set(("adam_step",))
    try:
        finish_first(student_fn, "adam_update", adam_update)
    finally:
        _HANDED.reset(token)
    for number, (shape, case) in enumerate(zip(_shapes(170), ADAMW_CASES)):
        t, (lr, wd) = case[0], scaled(case[1:3], 171 + number)
        adam_case = (t, lr, *case[3:])
        b1, b2, eps = _adam_settings(adam_case)
        grad, m, v = _adam_inputs(10 + number, shape, t)
        param = _normal(generator(175 + number), shape, 2.0)
        rest = _adam_args(adam_case)
        what = _("adamw_update(grad, param, m, v, {t}, {lr:.3g}, {wd:.3g}{rest}) for arrays of "
                 "shape {shape}").format(t=t, lr=lr, wd=wd, rest="".join(f", {a:g}" for a in rest),
                                         shape=shape)
        if number == 0:  # the lesson's adam_update calls the library's adam_step: allowed
            _own_code(student_fn, (grad, param, m, v, t, lr, wd, *rest), what, ("adam_step",))
        out = fast_call(student_fn, grad, param, m, v, t, lr, wd, *rest, what=what)
        update, new_m, new_v = (expect_shape(a, shape, what)
                                for a in _pair(out, what, "(update, m, v)"))
        g, p, m0, v0 = (a.astype(np.float64) for a in (grad, param, m, v))
        want, wrong = _adamw_variants(g, p, m0, v0, t, lr, wd, b1, b2, eps)
        _unused, want_m, want_v = _adam(g, m0, v0, t, lr, b1, b2, eps)
        reject_known_wrong(update, wrong, rtol=1e-4, atol=1e-8, want=want)
        if not (np.allclose(new_m, want_m, rtol=1e-4, atol=1e-7)
                and np.allclose(new_v, want_v, rtol=1e-4, atol=1e-8)):
            raise Mistake("m and v should be Adam's, from the gradient alone: the weight decay "
                          "never enters the moving averages (return adam_update's m and v)")
        # The update is ADDED to a float32 param, which cannot hold a difference below its own
        # rounding (2**-23 * |param|): an update computed as (new param - param) is as right.
        if np.all(np.abs(update - want) <= 1e-4 * np.abs(want) + 1e-8 + 2.0 ** -22 * np.abs(p)):
            continue
        expect_close(update, want, _("the update of {what}").format(what=what), atol=1e-8,
                     hint=N_("adam_update's update - learning_rate * weight_decay * param"))
    return N_("three shapes and settings: Adam's step on the gradient alone, minus learning_rate "
              "* weight_decay * param")


def _warmup_cosine_reference(steps: np.ndarray, peak: float, warmup: int, decay: int,
                             init: float = 0.0, end: float = 0.0) -> np.ndarray:
    """optax.warmup_cosine_decay_schedule(init, peak, warmup, decay, end), in NumPy."""
    progress = np.clip((steps - warmup) / (decay - warmup), 0.0, 1.0)
    cosine = end + (peak - end) * 0.5 * (1 + np.cos(np.pi * progress))
    return np.where(steps < warmup, init + (peak - init) * steps / warmup, cosine)


# (peak_value, warmup_steps, decay_steps, init_value, end_value): init and end left to their
# default 0 in the first, given in the others; each runs a different number of steps.
SCHEDULES: tuple[tuple[float, int, int, float | None, float | None], ...] = (
    (1e-3, 10, 50, None, None), (0.5, 4, 20, 0.05, 0.01), (2.0, 7, 33, 0.3, 0.5))


@exercise(LESSON, 4, "a warm-up–cosine schedule")
def warmup_cosine(student_fn: Any) -> str:
    if not callable(student_fn):
        raise Mistake(_("expected a function warmup_cosine(step, peak_value, warmup_steps, "
                        "decay_steps, init_value=0.0, end_value=0.0); got {name}").format(
                          name=type(student_fn).__name__))
    for number, (peak, warmup, decay, given_init, given_end) in enumerate(SCHEDULES):
        (peak,) = scaled((peak,), 90 + number)
        init, end = float(given_init or 0.0), float(given_end or 0.0)
        given = () if given_init is None else (init, end)
        steps = np.arange(decay + 5 + number, dtype=np.int32)  # past the end of the schedule
        what = _("warmup_cosine(step, {peak:.3g}, {warmup}, {decay}{rest}) inside "
                 "jax.jit").format(peak=peak, warmup=warmup, decay=decay,
                                   rest="".join(f", {a:g}" for a in given))
        if number == 0:
            _own_code(student_fn, (steps, peak, warmup, decay, *given), what)
        try:  # optax calls a schedule with a traced step count, inside the jitted step
            got = call(transformed(beside(student_fn, _fixtures.first_given, student_fn, peak,
                                          warmup, decay, *given), jax.jit), steps, what=what)
        except Mistake as err:
            text = str(err)
            if "Tracer" in text or "Concretization" in text or "truth value" in text:
                raise Mistake("Optax calls the schedule with a traced step count inside a jitted "
                              "step, where Python's `if` and math/NumPy functions cannot see its "
                              "value (lesson 04): use jnp.where, jnp.clip and jnp.cos") from None
            raise
        got = np.asarray(got, np.float64)
        if got.shape != steps.shape:
            raise Mistake(_("given {len_steps} steps at once, it returned shape "
                            "{shape}; compute elementwise with jnp.where rather than "
                            "Python's `if`").format(len_steps=len(steps), shape=got.shape))
        want = _warmup_cosine_reference(steps, peak, warmup, decay, init, end)
        rtol, atol = 1e-4, 1e-6 * peak
        if np.allclose(got, want, rtol=rtol, atol=atol):
            continue
        after = steps >= warmup
        if np.any(got[after] < end - 0.1 * (peak - end)):
            raise Mistake("the rate goes below end_value: the cosine runs from 1 to -1, so use "
                          "0.5 * (1 + cos(pi * progress)), which runs from 1 to 0")
        if not np.allclose(got[~after], want[~after], rtol=rtol, atol=atol):
            raise Mistake(_("the warm-up should rise linearly from init_value at step 0 to "
                            "peak_value at step warmup_steps: init_value + (peak_value - "
                            "init_value) * step / warmup_steps (it gave {got:.3g} at step 1 for "
                            "peak_value={peak:.3g}, warmup_steps={warmup}, "
                            "init_value={init:g})").format(got=got[1], peak=peak, warmup=warmup,
                                                            init=init))
        unclipped = end + (peak - end) * 0.5 * (1 + np.cos(np.pi * (steps - warmup)
                                                          / (decay - warmup)))
        if np.allclose(got[after], unclipped[after], rtol=rtol, atol=atol):
            raise Mistake("after decay_steps the rate rises again: clip the progress to at most "
                          "1 (jnp.clip or jnp.minimum) so that it stays at end_value")
        if abs(got[warmup] - peak) > 1e-4 * peak:
            raise Mistake(_("at step warmup_steps the rate should be peak_value "
                            "({peak:.3g}); got {got:.3g}: the cosine starts where the "
                            "warm-up ends, progress = (step - warmup_steps) / "
                            "(decay_steps - warmup_steps)").format(peak=peak, got=got[warmup]))
        if abs(got[decay] - end) > 1e-3 * peak:
            raise Mistake(_("at step decay_steps the rate should have reached end_value "
                            "({end:g}); got {got:.3g}. As in Optax, decay_steps counts the "
                            "warm-up too, and the cosine runs from peak_value down to "
                            "end_value: end_value + (peak_value - end_value) * 0.5 * (1 + "
                            "cos(pi * progress))").format(end=end, got=got[decay]))
        worst = float(np.max(np.abs(got - want)))
        raise Mistake(_("off by up to {worst:.3g} for peak_value={peak:.3g}, "
                        "warmup_steps={warmup}, decay_steps={decay}, init_value={init:g}, "
                        "end_value={end:g}: a linear warm-up from init_value to peak_value, "
                        "then end_value + (peak_value - end_value) * 0.5 * (1 + cos(pi * "
                        "progress))").format(worst=worst, peak=peak, warmup=warmup,
                                             decay=decay, init=init, end=end))
    return N_("equals optax.warmup_cosine_decay_schedule for three settings, init_value and "
              "end_value left out and given, all steps at once under jit")


def _gradient_tree(number: int, norm: float) -> tuple[list[tuple[np.ndarray, np.ndarray]], float]:
    """A list of (W, b) gradients of drawn sizes, scaled to global norm ``norm``."""
    source = generator(185 + number)
    n, m, k = (int(s) for s in source.integers(2, 8, size=3))
    m += number  # the cases' sizes differ, whatever is drawn
    tree = [(_normal(source, (m, n)), _normal(source, (m,))),
            (_normal(source, (k, m)), _normal(source, (k,)))]
    total = np.sqrt(sum(float(np.sum(leaf.astype(np.float64) ** 2))
                        for leaf in jax.tree.leaves(tree)))
    return jax.tree.map(lambda leaf: (leaf * (norm / total)).astype(np.float32), tree), norm


def _leaf_norms(tree: Any) -> list[float]:
    return [float(np.sqrt(np.sum(leaf ** 2))) for leaf in _leaves(tree)]


@exercise(LESSON, 5, "clipping by the global norm")
def clip_by_global_norm(student_fn: Any) -> str:
    cases = ((5.0, 2.0), (0.7, 1.5), (30.0, 0.5))  # (global norm, max_norm): clipped or not
    for number, (norm, max_norm) in enumerate(cases):
        (max_norm,) = scaled((max_norm,), 181 + number, 0.1)
        grads, norm = _gradient_tree(number, norm)
        what = _("clip_by_global_norm(grads, {max_norm:.3g}) for gradients of global norm "
                 "{norm:g}, shapes {shapes}").format(
            max_norm=max_norm, norm=norm, shapes=[leaf.shape for leaf in jax.tree.leaves(grads)])
        if number == 0:
            _own_code(student_fn, (grads, max_norm), what)
        got = fast_call(student_fn, grads, max_norm, what=what)
        if str(jax.tree.structure(got)) != str(jax.tree.structure(grads)):
            raise Mistake(_("{what} should return a pytree like grads (a list of (W, b)); got "
                            "{got}").format(what=what, got=summary(got)))
        scale = min(1.0, max_norm / norm)
        leaves = _leaves(grads)
        want = [leaf * scale for leaf in leaves]
        got_leaves = _leaves(got)
        if all(a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-7)
               for a, b in zip(got_leaves, want)):
            continue
        norms = _leaf_norms(grads)
        wrongs = {
            N_("each array was clipped to max_norm on its own; the global norm takes ALL the "
               "gradients as one long vector: sqrt of the sum of every leaf's sum of squares"):
                [leaf * min(1.0, max_norm / nrm) for leaf, nrm in zip(leaves, norms)],
            N_("gradients whose global norm is already at most max_norm stay as they are: "
               "scale by min(1, max_norm / norm)"): [leaf * max_norm / norm for leaf in leaves],
            N_("the global norm is the square root of the sum of squares, not their sum"):
                [leaf * min(1.0, max_norm / norm ** 2) for leaf in leaves],
            N_("the global norm is not the sum of the leaves' norms: sqrt of the sum of every "
               "leaf's sum of squares"):
                [leaf * min(1.0, max_norm / sum(norms)) for leaf in leaves],
            N_("the scale is upside down: multiply by max_norm / norm, which is below 1 when "
               "the norm is too large"): [leaf * max(1.0, norm / max_norm) for leaf in leaves],
            N_("clipping each number to [-max_norm, max_norm] changes the gradient's direction; "
               "scale every leaf by the same factor, max_norm / global norm"):
                [np.clip(leaf, -max_norm, max_norm) for leaf in leaves],
        }
        for hint, value in wrongs.items():
            if all(a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-7)
                   for a, b in zip(got_leaves, value)):
                raise Mistake(hint)
        raise Mistake(_("{what} should scale every gradient by min(1, max_norm / global norm) "
                        "= {scale:.4g}").format(what=what, scale=scale))
    return N_("three pytrees of other shapes, two clipped and one left as it is: every leaf "
              "scaled by min(1, max_norm / global norm)")


def _problems() -> list[tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray, np.ndarray]]:
    """15.6's two problems, ``(params, x, y)``: a small network (:func:`network`) and a batch
    for it (:func:`labelled_batch`), whose inputs, hidden width, classes and batch size are
    drawn (:func:`draw_sizes`), each another in the second problem, whose network has two
    hidden layers, not one: a size or a number of layers written in fails. NumPy inputs keep
    the check fast: one compile per problem."""
    problems = []
    for number, s in enumerate(draw_sizes(generator(156), 2, inputs=(5, 10), hidden=(3, 9),
                                          second=(3, 9), classes=(2, 6), batch=(6, 12))):
        sizes = layer_sizes(s, 1 + number)
        x, _labels, y = labelled_batch(generator(100 + number), (s["batch"],), sizes[0],
                                       sizes[-1])
        problems.append((network(generator(number), sizes), x, y))
    return problems


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(leaf, np.float64) for leaf in jax.tree.leaves(tree)]


def _close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    """Two pytrees with the same leaves, up to float rounding."""
    la, lb = _leaves(a), _leaves(b)
    return len(la) == len(lb) and all(
        x.shape == y.shape and np.allclose(x, y, rtol=rtol, atol=atol) for x, y in zip(la, lb))


def _tree_map(fn: Any, *trees: Any) -> list[np.ndarray]:
    """``fn`` leaf by leaf over pytrees, as a flat list of NumPy arrays."""
    return [fn(*leaves) for leaves in zip(*(_leaves(t) for t in trees))]


def _grads(params: Any, x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The leaves of ``grad(loss)(params, x, y)``, in NumPy: no compile for the reference."""
    return _leaves(mlp_loss_and_grads(params, x, y)[1])


def _step_output(out: Any, what: str) -> tuple[Any, Any, Any]:
    if not (isinstance(out, (tuple, list)) and len(out) == 3):
        got = (_("{kind} of length {length}").format(kind=type(out).__name__, length=len(out))
               if isinstance(out, (tuple, list)) else type(out).__name__)
        raise Mistake(_("{what} should return a tuple (params, opt_state, loss_value); "
                        "got {got}").format(what=what, got=got))
    return out[0], out[1], out[2]


@functools.cache
def _sgd_with_momentum() -> Any:
    """One optimizer object for every check in class: jit compiles a step once per optimizer
    object."""
    return _optax().sgd(STEP_LR, momentum=STEP_BETA)


@functools.cache
def _other_sgd() -> Any:
    """The second optimizer of the training-step check, one object for every check in class."""
    return _optax().sgd(OTHER_LR, momentum=OTHER_BETA)


def _optimizer(anchor: Any, make: Any, *args: Any, **kwargs: Any) -> Any:
    """``make(*args, **kwargs)``, an optimizer made where the student's code runs (its
    functions stay there)."""
    return beside(anchor, make, *args, **kwargs)


@exercise(LESSON, 6, "a training step with Optax")
def optax_step(student_step: Any) -> str:
    tx = _sgd_with_momentum()
    handed = tx if session_of(student_step) is None else _optimizer(
        student_step, _optax().sgd, STEP_LR, momentum=STEP_BETA)
    if not callable(student_step):
        raise Mistake(_("expected a function optax_step(params, opt_state, x, y, tx); "
                        "got {name}").format(name=type(student_step).__name__))
    # Jitted as a training loop would (the optimizer is a static argument): one compile
    # instead of one per operation, and the step must work on traced arrays; a step that jit
    # objects to (the lesson's float(value)) runs as written (fast_call).
    def step_fn(*args: Any, what: str) -> Any:
        return fast_call(student_step, *args, what=what, static_argnums=(4,),
                         hints=NETWORK_SHAPES)
    (params, x, y), (other_params, other_x, other_y) = _problems()
    lr, beta = STEP_LR, STEP_BETA
    value_want, layer_grads = mlp_loss_and_grads(params, x, y)
    g1 = _leaves(layer_grads)
    first_state = tx.init(params)
    what = _("optax_step(params, opt_state, x, y, optax.sgd({lr}, momentum={beta}))").format(
               lr=lr, beta=beta)
    try:
        out = step_fn(params, first_state, x, y, handed, what=what)
    except Mistake as err:
        if "abstract array" in str(err):  # the optimizer's functions, traced as arguments
            raise Mistake("the optimizer tx is not an array, so a jitted optax_step must mark it "
                          "static: jax.jit(optax_step, static_argnames='tx'); or leave "
                          "optax_step un-jitted and jit the loop that calls it") from None
        raise
    new, state, value = _step_output(out, what)
    if str(jax.tree.structure(new)) != str(jax.tree.structure(params)):
        raise Mistake(_("the new params should have the structure of the old ones (a "
                        "list of (W, b)); got {summary_new}. Return "
                        "optax.apply_updates(params, updates)").format(
                          summary_new=summary(new)))
    if _close(new, params):
        raise Mistake("the params came back unchanged: return the NEW params, "
                      "optax.apply_updates(params, updates)")
    if _close(new, _tree_map(lambda p, g: p + lr * g, params, g1)):
        raise Mistake("the step went uphill: the updates already carry the minus sign "
                      "(optax.sgd's updates are -learning_rate * grads), so ADD them with "
                      "optax.apply_updates(params, updates), do not subtract them")
    if any(_close(new, _tree_map(lambda p, g, s=sign: p + s * g, params, g1))
           for sign in (1, -1)):
        raise Mistake("the raw gradients were applied: pass them through the optimizer "
                      "first, updates, opt_state = tx.update(grads, opt_state, params), and "
                      "apply the updates")
    want = _tree_map(lambda p, g: p - lr * g, params, g1)  # our update: the velocity starts at 0
    if not _close(new, want):
        raise Mistake(_("the first step with optax.sgd({lr}) should give exactly our "
                        "update(params, x, y, {lr}): value_and_grad of loss, tx.update, "
                        "optax.apply_updates").format(lr=lr))
    expect_close(value, value_want, _("the returned loss value"),
                 hint=_("return the batch's loss at the params you were given, the value "
                        "from jax.value_and_grad(loss)(params, x, y)"))
    if _close(state, first_state, rtol=0, atol=0):
        raise Mistake("the opt_state came back unchanged: return the NEW state from tx.update, "
                      "or the optimizer forgets what it learned (here, momentum's velocity)")

    # The second step needs the state of the first: velocity = beta * g1 + g2.
    treedef = jax.tree.structure(params)
    g2 = _grads(jax.tree.unflatten(treedef, [w.astype(np.float32) for w in want]), x, y)
    want = _tree_map(lambda p, a, b: p - lr * (beta * a + b), want, g1, g2)
    what = _("optax_step at step 2, with the state from step 1")
    new, _unused, _unused = _step_output(step_fn(new, state, x, y, handed, what=what),
                                         what)
    if not _close(new, want, atol=1e-5):
        raise Mistake("the second step does not follow from the first: call "
                      "tx.update(grads, opt_state, params) with the opt_state you were given, "
                      "and return the state it gives back")

    # Another optimizer, from the start, on another problem: an answer that makes its own
    # optimizer instead of using tx fails, and so does one written for the first's sizes.
    other = _other_sgd()
    handed = other if session_of(student_step) is None else _optimizer(
        student_step, _optax().sgd, OTHER_LR, momentum=OTHER_BETA)
    what = _("optax_step(params, opt_state, x, y, optax.sgd({lr}, momentum={beta}))").format(
        lr=OTHER_LR, beta=OTHER_BETA)
    new, _unused, _unused = _step_output(step_fn(other_params, other.init(other_params),
                                              other_x, other_y, handed, what=what), what)
    other_grads = _grads(other_params, other_x, other_y)
    if not _close(new, _tree_map(lambda p, g: p - OTHER_LR * g, other_params, other_grads)):
        if _close(new, _tree_map(lambda p, g: p - lr * g, other_params, other_grads)):
            raise Mistake(_("{what} did not step as that optimizer does (its first step is "
                            "-{lr} * grads): use the tx it is given, updates, opt_state = "
                            "tx.update(grads, opt_state, params), not an optimizer of your "
                            "own").format(what=what, lr=OTHER_LR))
        raise Mistake(_("{what}, on a network of layer sizes {sizes} and a batch of {n} (the "
                        "first steps had others), did not give that optimizer's first step: "
                        "a size written as a number? Read every size from the arrays you "
                        "are given").format(
                          what=what, sizes=[w.shape[1] for w, _b in other_params] + [
                              other_params[-1][0].shape[0]], n=len(other_x)))
    return (_("with optax.sgd({lr}, momentum={beta}): step 1 equals our update, step 2 "
              "uses the optimizer state that step 1 returned; with another optimizer, "
              "optax.sgd({other}, momentum={other_beta}), it steps as that one").format(
                  lr=lr, beta=beta, other=OTHER_LR, other_beta=OTHER_BETA))


