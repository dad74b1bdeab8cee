"""Checkers for lesson 02, grad: derivatives the student composes, and checks them against.

Each compares with a formula worked out by hand, at points of its own, and knows the
usual slips: a derivative chain that starts one step early (``g`` instead of ``g'``),
numbers typed in for the one point of the lesson, ``grad`` of a function with many
outputs, a step up the gradient instead of down, a one-sided finite difference, the
gradient where the Hessian was asked for.
"""
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import Hints, call, generator, jittered, nudged
from ._compare import expect_close, expect_own_code, expect_shape, reject_known_wrong
from ._core import Mistake, exercise
from ._draws import draw_sizes
from ._hints import summary
from ._remote import beside

LESSON = "02_grad"


def _call_jitted(fn: Any, *args: Any, what: str, hints: Hints | None = None) -> Any:
    """``jax.jit(fn)(*args)``: one compile instead of one per operation; eagerly if jit fails.

    A derivative built with ``grad`` or ``hessian`` and run eagerly compiles each of its
    many small operations on first use; under ``jit`` it is one program, so the check
    stays well under a second.
    """
    try:
        return call(beside(fn, jax.jit, fn), *args, what=what)
    except Mistake:  # e.g. Python control flow on a traced value: let the plain call speak
        return call(fn, *args, what=what, hints=hints)


def _numbers(values: Any, count: int, what: str) -> list[float]:
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise Mistake(_("{what} should return {count} numbers; got {name}").format(
                          what=what, count=count, name=type(values).__name__)) from None
    if len(numbers) != count:
        raise Mistake(_("{what} should return {count} numbers; got {len_numbers}").format(
                          what=what, count=count, len_numbers=len(numbers)))
    return numbers


@exercise(LESSON, 1, "higher derivatives")
def derivatives_at(student_fn: Any) -> str:
    for x in (2.0, *nudged((-1.0, 0.5), 20)):  # g(x) = x**3 + 2x: g' = 3x**2 + 2, g'' = 6x
        what = f"derivatives_at({x})"
        got = np.array(_numbers(_call_jitted(student_fn, x, what=what, hints={
            "real- or complex-valued": N_("jax.grad differentiates with respect to a float: "
                                          "keep x as it is given (no int(x), no rounding)")}),
            3, what))
        want = np.array([3 * x ** 2 + 2, 6 * x, 6.0])
        if np.allclose(got, want, rtol=1e-5):
            continue
        if np.allclose(got, [x ** 3 + 2 * x, 3 * x ** 2 + 2, 6 * x], rtol=1e-5):
            raise Mistake(_("got {tolist} = (g(x), g'(x), g''(x)) at x = {x}: one step "
                            "too early. Start from jax.grad(g), then grad that, then "
                            "grad again").format(tolist=got.tolist(), x=x))
        if x != 2.0 and np.allclose(got, [14, 12, 6]):
            raise Mistake(_("at x = {x} you still return (14, 12, 6), the values at x = "
                            "2: compute them with jax.grad instead of typing them").format(
                              x=x))
        raise Mistake(_("at x = {x} expected (g', g'', g''') = {tuple_tolist}; got "
                        "{tuple_tolist2}. Compose grad: d2g = jax.grad(jax.grad(g))").format(
                          x=x, tuple_tolist=tuple(want.tolist()),
                          tuple_tolist2=tuple(got.tolist())))
    # right numbers from formulas typed in (a student's walk, A16): its code reads neither g,
    # nor jax.grad (or another of JAX's derivatives), nor a function of the student's own
    if callable(student_fn) and beside(student_fn, _fixtures.derivative_sources, student_fn,
                                       _DERIVATIVE_NAMES) == []:
        raise Mistake(_("derivatives_at gives the right numbers but reads neither g nor "
                        "jax.grad: the exercise asks for them from g, by composing jax.grad "
                        "(d2g = jax.grad(jax.grad(g))), not from formulas typed in"))
    # formulas for some of the three, g read for the others (jax.grad(g)(x), 6 * x, 6.0: a
    # second walk): with another g in its place, every number must follow it
    other = beside(student_fn, _fixtures.with_another_g, student_fn, 2.0)
    if other is not None and not np.allclose(other, [31.0, 48.0, 48.0], rtol=1e-4):
        raise Mistake(_("derivatives_at reads g, but with another g in its place (x**4 - x) "
                        "it gave {other} at x = 2, not that g's (31, 48, 48): compute all "
                        "three from g with jax.grad, none typed in").format(
                            other=[round(v, 4) for v in other]))
    return N_("14, 12 and 6 at x = 2, and right at two other points too")  # drawn when graded


# What a derivatives_at that differentiates g reads: g, or one of JAX's derivatives
_DERIVATIVE_NAMES = ("g", "grad", "value_and_grad", "hessian", "jacfwd", "jacrev", "jvp", "vjp",
                     "linearize")


@exercise(LESSON, 2, "gradient of an array function")
def grad_sum_tanh(student_fn: Any) -> str:
    x = jittered(np.linspace(-2, 2, 6, dtype=np.float32), 21, 0.2)
    for v in (x, x.reshape(2, 3)):
        what = _("grad_sum_tanh(x) for x of shape {v_shape}").format(v_shape=v.shape)
        got = _call_jitted(student_fn, jnp.asarray(v), what=what, hints={
            "scalar-output": N_("jax.grad needs a function with ONE number out; tanh(x) has one "
                                "per element. Differentiate their sum: lambda v: "
                                "jnp.sum(jnp.tanh(v))")})
        if np.shape(got) == ():
            raise Mistake(_("returned one number for x of shape {shape}: the gradient "
                            "has x's shape, one partial derivative per element").format(
                              shape=v.shape))
        got = expect_shape(got, v.shape, what)
        t = np.tanh(v)
        if np.allclose(got, t, atol=1e-6):
            raise Mistake("returned tanh(x) itself; the gradient of sum(tanh(x)) is "
                          "1 - tanh(x)**2")
        if np.allclose(got, 1 - t, atol=1e-6):
            raise Mistake("1 - tanh(x) is not the derivative: it is 1 - tanh(x)**2")
        expect_close(got, 1 - t ** 2, what,
                     hint=_("the gradient of sum(tanh(x)) is 1 - tanh(x)**2"))
    return N_("equals 1 - tanh(x)**2, elementwise, for a vector and a matrix")


def _trees() -> list[tuple[Any, Any]]:
    rng = generator(2)

    def array(*shape: int) -> np.ndarray:
        return rng.normal(size=shape).astype(np.float32)

    line = ({"w": array(), "b": array()}, {"w": array(), "b": array()})
    network = ([(array(3, 4), array(3)), (array(2, 3), array(2))],
               [(array(3, 4), array(3)), (array(2, 3), array(2))])
    return [line, network]


@exercise(LESSON, 3, "an SGD step on any pytree")
def sgd_step(student_fn: Any) -> str:
    # a step size of its own for each tree, never the lesson's 0.1: one written in fails
    step_sizes = generator(3).choice(np.arange(0.15, 0.55, 0.05), size=2, replace=False)
    for (params, grads), step_size in zip(_trees(), (round(float(v), 2) for v in step_sizes)):
        kind = _("a dict {'w', 'b'}") if isinstance(params, dict) else _("a list of (W, b)")
        what = _("sgd_step(params, grads, {step_size}) for params {kind}").format(
            step_size=step_size, kind=kind)
        try:
            out = call(student_fn, params, grads, step_size, what=what)
        except Mistake as err:
            if isinstance(err.__cause__, TypeError):
                raise Mistake(_("{err}. Arithmetic and indexing on a dict, list or "
                                "tuple do not reach the arrays inside it, whatever its "
                                "nesting; jax.tree.map(lambda p, g: p - step_size * g, "
                                "params, grads) does").format(err=err)
                              ) from None
            raise
        expect_own_code(student_fn, (params, grads, step_size), what, "nn_from_scratch.optim")
        if str(jax.tree.structure(out)) != str(jax.tree.structure(params)):
            raise Mistake(_("for params {kind}, returned {structure_out}; the new "
                            "parameters must have the same structure as params "
                            "(jax.tree.map keeps it)").format(
                              kind=kind, structure_out=jax.tree.structure(out)))
        for p, g, new in zip(jax.tree.leaves(params), jax.tree.leaves(grads),
                             jax.tree.leaves(out)):
            new = expect_shape(new, np.shape(p), _("a leaf of {what}").format(what=what))
            if np.allclose(new, p + step_size * g, atol=1e-6):
                raise Mistake("moved UP the gradient, where the loss grows: subtract it, "
                              "p - step_size * g")
            if np.allclose(new, p - g, atol=1e-6):
                raise Mistake("took a whole gradient step: multiply the gradient by step_size")
            if np.allclose(new, p - 0.1 * g, atol=1e-6):
                raise Mistake(_("{what} stepped by 0.1, a number written in your code; use "
                                "the argument step_size").format(what=what))
            expect_close(new, p - step_size * g, what, hint=_("each leaf is p - step_size * g"))
    return N_("p - step_size * g on every leaf, for a dict and for a list of (W, b) tuples")


@exercise(LESSON, 4, "central difference")
def central_difference(student_fn: Any) -> str:
    points = nudged((1.0, 0.3), 22)
    for f, name, x, h in ((_fixtures.cube, "x**3", points[0], 1e-3),
                          (math.sin, "math.sin", points[1], 1e-4)):
        what = f"central_difference(f, {x}, {h}) for f = {name}"
        try:
            got = float(call(student_fn, f, x, h, what=what))
        except (TypeError, ValueError):
            raise Mistake(_("{what} should return one number").format(what=what)) from None
        expect_own_code(student_fn, (f, x, h), what, "nn_from_scratch.gradcheck")
        want = (f(x + h) - f(x - h)) / (2 * h)
        one_sided = ((f(x + h) - f(x)) / h, (f(x) - f(x - h)) / h)
        if any(math.isclose(got, d, rel_tol=1e-9) for d in one_sided):
            raise Mistake("that is a one-sided difference, with an error that shrinks only like "
                          "h; the central one, (f(x + h) - f(x - h)) / (2 * h), errs like h**2")
        if math.isclose(got, 2 * want, rel_tol=1e-6):
            raise Mistake("twice too big: divide by 2 * h, the distance between x - h and x + h")
        if math.isclose(got, want * h * h, rel_tol=1e-6):
            raise Mistake(_("{what} = {got:.10g}: / 2 * h divides by 2, then MULTIPLIES by h; "
                            "put the brackets in, / (2 * h)").format(what=what, got=got))
        for other in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6):
            if other != h and math.isclose(got, (f(x + other) - f(x - other)) / (2 * other),
                                           rel_tol=1e-12):
                raise Mistake(_("{what} used h = {other:g}, a number written in your code; "
                                "use the argument h").format(what=what, other=other))
        if not math.isclose(got, want, rel_tol=1e-7):
            raise Mistake(_("{what} = {got:.10g}; expected (f(x + h) - f(x - h)) / (2 * "
                            "h) = {want:.10g}").format(what=what, got=got, want=want))
    return N_("(f(x + h) - f(x - h)) / 2h, on x**3 and sin")


@exercise(LESSON, 5, "a Hessian")
def hessian_at(student_fn: Any) -> str:
    for x, y in ((1.0, 2.0), nudged((-0.5, 3.0), 23), nudged((2.0, -1.0), 24)):  # x**2 y + y**3
        what = f"hessian_at(jnp.array([{x}, {y}]))"
        got = _call_jitted(student_fn, jnp.array([x, y], jnp.float32), what=what)
        if np.shape(got) == (2,):
            raise Mistake("returned 2 numbers, the gradient; the Hessian is the (2, 2) matrix of "
                          "second derivatives: jax.hessian(f)(p)")
        got = expect_shape(got, (2, 2), what)
        if np.asarray(got).dtype.itemsize < 4:
            raise Mistake(_("{what} is {dtype}, which keeps about 3 digits: the Hessian is "
                            "float32, as jax.hessian(f)(p) gives it").format(
                              what=what, dtype=np.asarray(got).dtype))
        want = np.array([[2 * y, 2 * x], [2 * x, 6 * y]])
        if (x, y) != (1.0, 2.0) and np.allclose(got, [[4, 2], [2, 12]]):
            raise Mistake(_("at ({x}, {y}) you still return the Hessian at (1, 2): "
                            "compute it with jax.hessian instead of typing it").format(
                              x=x, y=y))
        expect_close(got, want, what, hint=_("the Hessian of x**2 y + y**3 is "
                                             "[[2y, 2x], [2x, 6y]]"))
    return N_("[[2y, 2x], [2x, 6y]] at three points")


BIG_STEPS = 10  # the steps the lesson's next cell asks of descent_losses


def _bowl_cases() -> list[tuple[tuple[Any, Any], Any, float, int]]:
    """((bottom, curvature), start, step size, steps) of each bowl (:class:`._fixtures.Bowl`):
    converging, diverging (2 / 1.5 < largest curvature) for the lesson's BIG_STEPS, and a
    tuple of arrays as the pytree; the other two take a number of steps drawn."""
    bottom = nudged((-1.0, 3.0), 25)
    line = ({"b": np.array(bottom[0]), "w": np.array(bottom[1])},
            {"b": np.array(2.0), "w": np.array(0.7)})
    arrays = ((np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.2])),
              (np.array([1.0, 2.0, 0.5]), np.array([3.0, 1.5])))
    first, third = (s["steps"] for s in draw_sizes(generator(26), 2, steps=(3, 9)))
    return [(line, {"w": 0.0, "b": 0.0}, 0.1, first), (line, {"w": 0.5, "b": 1.0}, 1.5, BIG_STEPS),
            (arrays, (np.zeros(3), np.ones(2)), 0.3, third)]


def _losses(got: Any, what: str) -> list[float]:
    try:
        return [float(value) for value in got]
    except (TypeError, ValueError):
        raise Mistake(_("{what} should return a list of losses, one per step; got "
                        "{summary_got}").format(what=what, summary_got=summary(got))) from None


@exercise(LESSON, 6, "gradient descent's losses, for any step size")
def descent_losses(student_fn: Any) -> str:
    for shape, start, step_size, steps in _bowl_cases():
        bowl = _fixtures.Bowl(*shape)  # the reference, here; the student's, beside their code
        what = f"descent_losses(loss_and_grads, theta, {step_size}, {steps})"
        handed = beside(student_fn, _fixtures.Bowl, *shape)
        got = _losses(call(student_fn, handed, start, step_size, steps, what=what, hints={
            "TypeError": _("{what} raised TypeError for theta = {summary_start}: theta "
                           "can be any pytree; jax.tree.map(lambda p, g: p - step_size "
                           "* g, theta, grads) updates every leaf of it").format(
                             what=what, summary_start=summary(start))}), what)
        want = bowl.descent(start, step_size, steps)
        if len(got) != steps:
            raise Mistake(_("{what} returned {len_got} losses; expected one per step, "
                            "{steps}").format(what=what, len_got=len(got), steps=steps))
        reject_known_wrong(got, {
            N_("moved UP the gradient, where the loss grows: subtract it, p - step_size * g"):
                bowl.descent(start, -step_size, steps),
            N_("took whole gradient steps: multiply the gradient by step_size"):
                bowl.descent(start, 1.0, steps),
            _("used another step size than the argument, {step_size}: use step_size, "
              "not BIG_STEP_SIZE or FIT_STEP_SIZE").format(step_size=step_size):
                bowl.descent(start, 1.5 if step_size != 1.5 else 0.1, steps),
            N_("each loss is measured after its step's update; record the loss that "
               "loss_and_grads(theta) returns, before you update theta"):
                bowl.descent(start, step_size, steps + 1)[1:],
        }, want=want)
        expect_close(got, want, what, rtol=1e-5, atol=1e-8,
                     hint=_("start from theta; at each step record the loss, then move every leaf "
                            "by -step_size * its gradient (jax.tree.map)"))
    shape, start, step_size, steps = _bowl_cases()[1]
    grown = _fixtures.Bowl(*shape).descent(start, step_size, steps)
    return (_("right losses on three bowls; on one of them, at step size {step_size}, the "
              "last of {steps} recorded losses is {grown:.0f}x the first: each step "
              "overshoots the bottom").format(
                step_size=step_size, grown=grown[-1] / grown[0], steps=steps))
