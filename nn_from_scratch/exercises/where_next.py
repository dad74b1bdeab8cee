"""Checkers for lesson 15, where next: Optax.

The student writes a training step with any Optax optimizer, SGD with momentum
as an Optax ``GradientTransformation``, a warmup-cosine learning-rate schedule,
and the size of an optimizer's first step for the parameters' (Adam's at SGD's
rate is far too big). The references are written
out here in NumPy (SGD, momentum, the schedule), so that a check does not lean
on the very library it is checking against; the tests confirm that they agree
with Optax.

Optax comes with the ``lessons`` extra, not with the library: it is imported
inside the checkers, so that grading and the other lessons work without it.
"""
import functools
from typing import Any

import jax
import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import call, generator, scaled
from ._compare import expect_close, mlp_loss_and_grads, reject_known_wrong
from ._core import Mistake, exercise
from ._hints import summary
from ._remote import beside, session_of, transformed, twins

LESSON = "15_where_next"
SIZES = [8, 6, 4]  # a small network: NumPy inputs and one shape keep every check fast
STEP_LR, STEP_BETA = 0.1, 0.9  # the optimizer of the training-step check


def _optax() -> Any:
    try:
        import optax
    except ImportError:
        raise Mistake("optax is not installed: pip install -e '.[lessons]'") from None
    return optax


def _network() -> list[tuple[np.ndarray, np.ndarray]]:
    """A [8, 6, 4] network's (W, b) with He-sized weights (so mistakes show), float32."""
    rng = generator(0)
    return [((rng.normal(size=(n, m)) * np.sqrt(2 / m)).astype(np.float32),
             (0.1 * rng.normal(size=n)).astype(np.float32))
            for m, n in zip(SIZES[:-1], SIZES[1:])]


def _batch() -> tuple[np.ndarray, np.ndarray]:
    """A batch for it: x (5, 8) in [0, 1) and one-hot y (5, 4)."""
    rng = generator(100)
    x = rng.uniform(size=(5, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], size=5)]
    return x, y


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


def _optimizer(anchor: Any, make: Any, *args: Any, **kwargs: Any) -> Any:
    """``make(*args, **kwargs)``, an optimizer made where the student's code runs (its
    functions stay there)."""
    return beside(anchor, make, *args, **kwargs)


@exercise(LESSON, 1, "a training step with Optax")
def optax_step(student_step: Any) -> str:
    tx = _sgd_with_momentum()
    handed = tx if session_of(student_step) is None else _optimizer(
        student_step, _optax().sgd, STEP_LR, momentum=STEP_BETA)
    if not callable(student_step):
        raise Mistake(_("expected a function optax_step(params, opt_state, x, y, tx); "
                        "got {name}").format(name=type(student_step).__name__))
    # Jitted as a training loop would (the optimizer is a static argument): one compile
    # instead of one per operation, and the step must work on traced arrays.
    step_fn = transformed(student_step, (jax.jit, {"static_argnums": 4}))
    params, (x, y) = _network(), _batch()
    lr, beta = STEP_LR, STEP_BETA
    value_want, layer_grads = mlp_loss_and_grads(params, x, y)
    g1 = _leaves(layer_grads)
    first_state = tx.init(params)
    what = _("optax_step(params, opt_state, x, y, optax.sgd({lr}, momentum={beta}))").format(
               lr=lr, beta=beta)
    try:
        out = call(step_fn, params, first_state, x, y, handed, what=what)
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
    new, _unused, _unused = _step_output(call(step_fn, new, state, x, y, handed, what=what),
                                         what)
    if not _close(new, want, atol=1e-5):
        raise Mistake("the second step does not follow from the first: call "
                      "tx.update(grads, opt_state, params) with the opt_state you were given, "
                      "and return the state it gives back")
    return (_("with optax.sgd({lr}, momentum={beta}): step 1 equals our update, step 2 "
              "uses the optimizer state that step 1 returned").format(lr=lr, beta=beta))


def _momentum_tx(student_fn: Any, lr: float, beta: float | None) -> Any:
    """``momentum(lr, beta=beta)``, or ``momentum(lr)`` for ``beta=None`` (its default)."""
    if beta is None:
        tx = call(student_fn, lr, what=f"momentum({lr})")
    else:
        tx = call(student_fn, lr, beta, what=f"momentum({lr}, beta={beta})")
    if not (callable(getattr(tx, "init", None)) and callable(getattr(tx, "update", None))):
        raise Mistake(_("momentum(...) should return optax.GradientTransformation(init, "
                        "update), an object with .init and .update; got {name}").format(
                          name=type(tx).__name__))
    return tx


@exercise(LESSON, 2, "momentum as an Optax transformation")
def momentum(student_fn: Any) -> str:
    params = _network()
    rng = generator(5)
    grads = [[(rng.normal(size=w.shape).astype(np.float32),
               rng.normal(size=b.shape).astype(np.float32)) for w, b in params]
             for _unused in range(3)]
    for lr, given in ((0.3, 0.5), (0.1, None)):  # None: beta left to its default, 0.9
        tx, beta = _momentum_tx(student_fn, lr, given), 0.9 if given is None else given
        state = call(tx.init, params, what="init(params)")
        leaves = _leaves(state)
        if sum(leaf.size for leaf in leaves) != sum(leaf.size for leaf in _leaves(params)):
            raise Mistake("init(params) should return the velocity: one array of zeros for each "
                          "array of params, jax.tree.map(jnp.zeros_like, params)")
        if any(np.any(leaf != 0) for leaf in leaves):
            raise Mistake("the velocity must start at zero: init(params) returns "
                          "jax.tree.map(jnp.zeros_like, params), not the params")
        velocity = _tree_map(np.zeros_like, params)
        for step, g in enumerate(grads, 1):
            what = _("update(grads, state, params) at step {step}").format(step=step)
            try:
                out = call(tx.update, g, state, params, what=what)
            except Mistake as err:
                if "positional argument" in str(err):
                    raise Mistake("update must take (grads, state, params=None): Optax passes the "
                                  "params too, for the optimizers that need them") from None
                raise
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise Mistake(_("update should return a pair (updates, new_state); got "
                                "{name}").format(name=type(out).__name__))
            updates, state = out
            velocity = _tree_map(lambda v, gi, b=beta: b * v + gi, velocity, g)
            want = _tree_map(lambda v, a=lr: -a * v, velocity)
            if _close(updates, want):
                continue
            if _close(updates, _tree_map(lambda v, a=lr: a * v, velocity)):
                raise Mistake("the updates point uphill: optax.apply_updates ADDS them to the "
                              "params, so return -learning_rate * velocity")
            if step == 1 and _close(updates, _tree_map(lambda gi, a=lr, b=beta: -a * (1 - b) * gi,
                                                       g)):
                raise Mistake("the velocity averages the gradients, (1 - beta) * grads: that is "
                              "Adam's moving average. Momentum adds the whole gradient: "
                              "velocity = beta * velocity + grads")
            if step > 1 and _close(updates, _tree_map(lambda gi, a=lr: -a * gi, g)):
                raise Mistake(_("step {step} ignored the earlier gradients: return the "
                                "NEW velocity as the state, and add beta * velocity to "
                                "the gradient").format(step=step))
            if given is None:
                raise Mistake(_("momentum({lr}), with beta left out, should use the "
                                "default beta=0.9, as momentum({lr}, beta=0.9) would").format(
                                  lr=lr))
            raise Mistake(_("the updates at step {step} (learning_rate={lr}, "
                            "beta={beta}) should be -learning_rate * velocity, with "
                            "velocity = beta * velocity + grads").format(
                              step=step, lr=lr, beta=beta))
    return (N_("equals optax.sgd(learning_rate, momentum=beta) over 3 steps, for two learning "
            "rates and betas (one with beta left to its default, 0.9)"))


def _warmup_cosine_reference(steps: np.ndarray, peak: float, warmup: int, decay: int) -> np.ndarray:
    """optax.warmup_cosine_decay_schedule(0.0, peak, warmup, decay), written out in NumPy."""
    progress = np.clip((steps - warmup) / (decay - warmup), 0.0, 1.0)
    cosine = peak * 0.5 * (1 + np.cos(np.pi * progress))
    return np.where(steps < warmup, peak * steps / warmup, cosine)


SCHEDULES = ((1e-3, 10, 50), (0.5, 4, 20))  # (peak_value, warmup_steps, decay_steps)


@exercise(LESSON, 3, "a warmup-cosine schedule")
def warmup_cosine(student_fn: Any) -> str:
    if not callable(student_fn):
        raise Mistake(_("expected a function warmup_cosine(step, peak_value, "
                        "warmup_steps, decay_steps); got {name}").format(
                          name=type(student_fn).__name__))
    for number, (peak, warmup, decay) in enumerate(SCHEDULES):
        (peak,) = scaled((peak,), 90 + number)
        steps = np.arange(60, dtype=np.int32)  # past the end of both schedules
        what = _("warmup_cosine(step, {peak}, {warmup}, {decay}) inside jax.jit").format(
                   peak=peak, warmup=warmup, decay=decay)
        try:  # optax calls a schedule with a traced step count, inside the jitted step
            got = call(transformed(beside(student_fn, _fixtures.first_given, student_fn, peak,
                                          warmup, decay), jax.jit), steps, what=what)
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
                            "Python's `if`").format(
                              len_steps=len(steps), shape=got.shape))
        want = _warmup_cosine_reference(steps, peak, warmup, decay)
        if np.allclose(got, want, rtol=1e-4, atol=1e-6 * peak):
            continue
        if np.any(got < -1e-6 * peak):
            raise Mistake("the rate goes negative: the cosine runs from 1 to -1, so use "
                          "0.5 * (1 + cos(pi * progress)), which runs from 1 to 0")
        after = steps >= warmup
        if not np.allclose(got[~after], want[~after], rtol=1e-4, atol=1e-6 * peak):
            raise Mistake(_("the warmup should rise linearly from 0 at step 0 to "
                            "peak_value at step warmup_steps: peak_value * step / "
                            "warmup_steps (it gave {got:.3g} at step 1 for "
                            "peak_value={peak}, warmup_steps={warmup})").format(
                              got=got[1], peak=peak, warmup=warmup))
        unclipped = peak * 0.5 * (1 + np.cos(np.pi * (steps - warmup) / (decay - warmup)))
        if np.allclose(got[after], unclipped[after], rtol=1e-4, atol=1e-6 * peak):
            raise Mistake("after decay_steps the rate rises again: clip the progress to at most "
                          "1 (jnp.clip or jnp.minimum) so that it stays at 0")
        if abs(got[warmup] - peak) > 1e-4 * peak:
            raise Mistake(_("at step warmup_steps the rate should be peak_value "
                            "({peak}); got {got:.3g}: the cosine starts where the "
                            "warmup ends, progress = (step - warmup_steps) / "
                            "(decay_steps - warmup_steps)").format(
                              peak=peak, got=got[warmup]))
        if got[decay] > 1e-3 * peak:
            raise Mistake(_("at step decay_steps the rate should have reached 0; got "
                            "{got:.3g}. As in Optax, decay_steps counts the warmup too: "
                            "progress = (step - warmup_steps) / (decay_steps - "
                            "warmup_steps)").format(got=got[decay]))
        worst = float(np.max(np.abs(got - want)))
        raise Mistake(_("off by up to {worst:.3g} for peak_value={peak}, "
                        "warmup_steps={warmup}, decay_steps={decay}: a linear warmup to "
                        "peak_value, then peak_value * 0.5 * (1 + cos(pi * progress))").format(
                          worst=worst, peak=peak, warmup=warmup, decay=decay))
    return (N_("equals optax.warmup_cosine_decay_schedule for two sets of peak_value, "
            "warmup_steps and decay_steps, all steps at once under jit"))


def _optimizers() -> tuple[tuple[str, Any, tuple, dict[str, Any]], ...]:
    """(name, its maker, args, keyword args) for 15.4: the rates differ, and AdamW's weight
    decay needs the params."""
    optax = _optax()
    return (("optax.sgd(0.2)", optax.sgd, (0.2,), {}), ("optax.adam(0.2)", optax.adam, (0.2,), {}),
            ("optax.adam(0.001)", optax.adam, (1e-3,), {}),
            ("optax.adamw(0.01, weight_decay=5.0)", optax.adamw, (1e-2,), {"weight_decay": 5.0}))


def _mean_abs(tree: Any, weights_only: bool = False) -> float:
    leaves = _leaves(tree)[::2] if weights_only else _leaves(tree)
    return float(np.mean(np.abs(np.concatenate([leaf.ravel() for leaf in leaves]))))


@exercise(LESSON, 4, "first_step_ratio")
def first_step_ratio(student_fn: Any) -> str:
    params = _network()[:1]  # one layer: two shapes, so few operations to compile
    rng = generator(7)  # gradients from 1e-3 to 10, some exactly 0, as on MNIST
    grads = [tuple((rng.normal(size=a.shape) * 10.0 ** rng.uniform(-3, 1, size=a.shape)
                    * (rng.uniform(size=a.shape) > 0.3)).astype(np.float32) for a in layer)
             for layer in params]
    for name, make, args, kwargs in _optimizers():
        what = f"first_step_ratio({name}, params, grads)"
        tx, handed = twins(student_fn, make, *args, **kwargs)
        got = call(student_fn, handed, params, grads, what=what, hints={
            "requires the current value of parameters": _("{what} called tx.update "
                                                          "without the params: AdamW's "
                                                          "weight decay needs them, "
                                                          "tx.update(grads, state, "
                                                          "params)").format(what=what)})
        if np.size(got) != 1:
            raise Mistake(_("{what} returned {summary_got}; it should return one "
                            "number, the mean over every parameter of every layer").format(
                              what=what, summary_got=summary(got)))
        got = float(np.asarray(got).ravel()[0])
        updates, _unused = tx.update(grads, tx.init(params), params)
        want = _mean_abs(updates) / _mean_abs(params)
        if np.isclose(got, want, rtol=1e-4):
            continue
        reject_known_wrong(got, {
            N_("the gradients are not the step: turn them into updates first, updates, _ = "
               "tx.update(grads, tx.init(params), params)"): _mean_abs(grads) / _mean_abs(params),
            N_("the ratio is upside down: the size of the step over the size of the parameters"):
                1 / want,
            N_("take the mean over every parameter, the b's as well as the W's"):
                _mean_abs(updates, True) / _mean_abs(params, True),
            N_("a size is never negative: take |update| and |parameter| (jnp.abs) before the "
               "mean"):
                float(np.mean(np.concatenate([u.ravel() for u in _leaves(updates)])))
                / float(np.mean(np.concatenate([p.ravel() for p in _leaves(params)]))),
        }, rtol=1e-4)
        raise Mistake(_("{what} gave {got:.4g}; the first step's mean |update| over the "
                        "mean |parameter| is {want:.4g}: updates, _ = tx.update(grads, "
                        "tx.init(params), params), then the two means").format(
                          what=what, got=got, want=want))
    return (N_("the first step's size for its parameters' size, with SGD, Adam and AdamW: Adam "
            "moves every parameter by about its learning rate, whatever its gradient"))
