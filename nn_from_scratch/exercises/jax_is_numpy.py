"""Checkers for lesson 00, JAX is NumPy: the course's first exercises.

They know the slips of someone coming from NumPy: ``np.exp`` where ``jnp.exp`` was
meant (the result silently becomes a NumPy array), an ``.at[...].set`` whose new
array is dropped, a clock stopped when a JAX call *returns* rather than when its
work is done, a speed-up upside down, floats cast to int to please ``lax.add``.
"""
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from ..timing import format_seconds
from . import _fixtures
from ._calls import Hints, call, fast_call, generator, graded, jittered, scaled
from ._compare import expect_close, expect_own_code, expect_shape, reject_known_wrong
from ._core import Mistake, exercise
from ._draws import draw_sizes
from ._hints import summary
from ._remote import beside

LESSON = "00_jax_is_numpy"
DELAY = 0.1  # seconds of "work" behind the fake JAX call that wall_time must wait for


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """The reference, in the float64 it is handed (exp(-x) may be inf: 1 / inf is 0)."""
    return 1 / (1 + np.exp(-x))


@exercise(LESSON, 1, "sigmoid with jnp")
def sigmoid(student_sigmoid: Any) -> str:
    draw = generator(0)
    rows, cols = draw_sizes(draw, 1, rows=(2, 5), cols=(2, 7))[0].values()
    matrix = np.linspace(-6, 6, rows * cols, dtype=np.float32).reshape(rows, cols)
    # and numbers whose exp overflows float32 (exp(89) is inf): exp(x) / (1 + exp(x)) is NaN
    large = np.array([-100.0, -40.0, 0.5, 40.0, 100.0], np.float32) * np.float32(
        draw.uniform(0.95, 1.05))
    for x in (jittered(matrix, 0, 0.4), large, np.float32(0.0)):
        what = _("sigmoid(x) for x of shape {shape_x}").format(shape_x=np.shape(x))
        got = fast_call(student_sigmoid, jnp.asarray(x), what=what, needs_jit=_(
            "{what} works as written, but not under jax.jit: NumPy (np.exp, np.asarray), "
            ".tolist() and float() want numbers, and a traced value has none yet, so grad and "
            "jit (lessons 02 and 04) cannot follow your sigmoid. Write it with jnp alone and "
            "return the jax.Array it gives: 1 / (1 + jnp.exp(-x))").format(what=what), hints={
            ("to Python scalars", "must be real number"): N_("math.exp takes ONE number; "
                                                             "jnp.exp works elementwise on a "
                                                             "whole array: 1 / (1 + jnp.exp(-x))"),
            "cannot reshape": _("{what} failed to reshape: a shape written as a number? "
                                "The sigmoid works elementwise, on x of any shape, with no "
                                "reshape").format(what=what)})
        if isinstance(got, np.ndarray):
            raise Mistake("returned a NumPy array: a NumPy function such as np.exp turned the JAX "
                          "array into a NumPy one. Use jnp.exp: grad and jit (lessons 02 and 04) "
                          "can only follow jnp")
        if not isinstance(got, jax.Array):
            raise Mistake(_("{what} returned a {kind}: return the jax.Array that jnp computes, "
                            "as it is (no .tolist(), no float())").format(
                              what=what, kind=type(got).__name__))
        got = expect_shape(got, np.shape(x), what)
        x64 = np.asarray(x, np.float64)
        want = _sigmoid(x64)
        if np.isnan(got).any() and not np.isnan(want).any():
            raise Mistake(_("{what} gave NaN for x = {x:g}: exp({x:g}) overflows float32 to inf, "
                            "and inf / inf is NaN. 1 / (1 + jnp.exp(-x)) only ever divides "
                            "1 by inf, which is 0").format(
                              what=what, x=float(np.asarray(x).ravel()[np.isnan(
                                  np.asarray(got).ravel())][0])))
        if np.allclose(got, _sigmoid(-x64), atol=1e-6) and x.ndim:
            raise Mistake("sigmoid(6) should be close to 1 and sigmoid(-6) close to 0; yours is "
                          "the other way round: 1 / (1 + jnp.exp(-x)), with a minus sign")
        expect_close(got, want, what, hint=_("sigmoid(x) = 1 / (1 + exp(-x)), elementwise"))
    expect_own_code(student_sigmoid, (jnp.asarray(matrix),),
                    _("sigmoid(x) for x of shape {shape_x}").format(shape_x=matrix.shape), "jax",
                    ("sigmoid", "expit", "logistic", "log_sigmoid", "softplus", "softmax"),
                    calls=_fixtures.ready_made_calls, message=_(
                        "{what} calls {name}, JAX's own sigmoid: the exercise wants the formula "
                        "written with jnp, 1 / (1 + jnp.exp(-x))"))
    return N_("1 / (1 + exp(-x)) on a matrix, large numbers and a scalar, as a jax.Array")


@exercise(LESSON, 2, "set the diagonal with .at")
def set_diagonal(student_fn: Any) -> str:
    rng = generator(1)
    # three sizes (each costs a dozen compiles), small, larger and past the lesson's own
    # MATRIX_SIZE of 1000, so that a size written as a number fails (.at[] drops indices out
    # of bounds: a fixed 7 on a 5x5 is 5, so only a size above the number written shows it)
    sizes = (int(rng.integers(3, 7)), int(rng.integers(11, 25)), int(rng.integers(1001, 1301)))
    for value, n in zip((-2.0, 1.0, 0.5), sizes):  # -2 first: .multiply(1) changes nothing
        x = rng.normal(size=(n, n)).astype(np.float32)
        what = _("set_diagonal(x, {value}) for x of shape ({n}, {n})").format(value=value, n=n)
        got = call(student_fn, jnp.asarray(x), value, what=what, hints={
            "immutable": N_("JAX arrays are immutable, so x[i, i] = v fails: use x.at[i, "
                            "i].set(v), which returns a NEW array")})
        if isinstance(got, np.ndarray):
            raise Mistake(_("{what} returned a NumPy array: NumPy's copy and fill_diagonal "
                            "are not the exercise. Use x.at[idx, idx].set(value), which keeps "
                            "a jax.Array").format(what=what))
        got = expect_shape(got, (n, n), what)
        want = x.copy()
        np.fill_diagonal(want, value)
        if np.array_equal(got, x):
            raise Mistake("returned x unchanged: x.at[...].set(v) does not change x, it returns a "
                          "new array. Keep it (y = x.at[...].set(v)) and return y")
        off = ~np.eye(n, dtype=bool)
        if not np.allclose(got[off], x[off]):
            if np.allclose(got, value):
                raise Mistake("set every entry: index only the diagonal, the entries (i, i): "
                              "idx = jnp.arange(n); x.at[idx, idx].set(v)")
            if np.allclose(got, want.T):
                raise Mistake("returned the transpose of x, its diagonal set: the entries off "
                              "the diagonal must stay where they are. Return x.at[idx, "
                              "idx].set(value) itself, with no .T")
            if np.allclose(np.fliplr(got).diagonal(), value):
                raise Mistake(_("set the other diagonal, the entries (i, n - 1 - i): the "
                                "diagonal is (i, i), x.at[idx, idx] with the same idx twice"))
            raise Mistake("changed entries off the diagonal: x.at[i] is the whole row i. Index "
                          "with two arrays, x.at[idx, idx] with idx = jnp.arange(n), to reach only "
                          "the entries (i, i)")
        diagonal = np.diag(got)
        if not np.allclose(diagonal, value):
            done = np.isclose(diagonal, value)
            if np.allclose(diagonal, np.diag(x) + value):
                hint = _("the diagonal should be {value}, not {value} added to it: "
                         ".set(value), not .add(value)").format(value=value)
            elif np.allclose(diagonal, np.diag(x) * value):
                hint = _("the diagonal should be {value}, not multiplied by it: "
                         ".set(value), not .multiply(value)").format(value=value)
            elif done[1:].all():
                hint = _("the diagonal entry 0 was missed: off by one? jnp.arange(n) runs "
                         "over 0, 1, ..., n - 1")
            elif done.any() and done[:int(done.sum())].all():
                hint = _("only {done} of {n} diagonal entries are {value}: take n from x "
                         "(x.shape[0]), not a number written in the code, nor one less").format(
                           done=int(done.sum()), n=n, value=value)
            else:
                hint = _("the diagonal should be all {value} (the value argument)").format(
                    value=value)
            raise Mistake(_("for a {n}x{n} x, {hint}").format(n=n, hint=hint))
    expect_own_code(student_fn, (jnp.asarray(x), 1.0), what, ("jax", "numpy"),
                    ("eye", "identity", "fill_diagonal", "diagflat", "diag", "tri"),
                    calls=_fixtures.ready_made_calls, message=_(
                        "{what} calls {name}: the exercise is indexing, x.at[idx, idx].set(value) "
                        "with idx = jnp.arange(n), not a ready-made diagonal"))
    return N_("a new array with its diagonal set, the rest untouched, for three sizes and "
              "values")


def _seconds(value: Any, what: str, kind: str = N_("a number of seconds")) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Mistake(_("{what} should return {kind}; got {summary_value}").format(
                          what=what, kind=_(kind), summary_value=summary(value))) from None


def _work(student_fn: Any, delay: float) -> tuple[Any, tuple[Any, ...], str]:
    """``(fn, args, what)`` for a call whose work takes ``delay`` seconds: in class
    ``queued_work`` and the delay as its argument; when graded, a stand-in whose delay, drawn
    for the grading, is no argument the student's code could return."""
    if not graded():
        what = (_("wall_time(fn, {delay:g}) for an fn whose work takes {delay:g} s").format(
            delay=delay) if delay else _("wall_time(fn, 0.0) for an fn with no work"))
        return _fixtures.queued_work, (delay,), what
    return (beside(student_fn, _fixtures.QueuedWork, delay), (int(generator(31).integers(9)),),
            _("wall_time(fn, x) for an fn whose work takes {delay:.3g} s").format(delay=delay))


@exercise(LESSON, 3, "time a call with block_until_ready")
def wall_time(student_fn: Any) -> str:
    # long enough that two calls (2 * delay) are past one call's bound, 1.4 * delay + 40 ms
    delay = float(generator(30).uniform(0.12, 0.2)) if graded() else DELAY
    fn, args, what = _work(student_fn, delay)
    hints: Hints = {"required positional argument": _(
        "{what}: fn was called without its arguments; call it with those wall_time was "
        "handed, fn(*args)").format(what=what)}
    # the shorter of two measurements: a busy machine may wake one sleep late, seldom both
    seconds = min(_seconds(call(student_fn, fn, *args, what=what, hints=hints), what)
                  for _unused in range(2))
    if seconds < 0:
        raise Mistake(_("measured {seconds:.3g} s, a negative time: subtract the earlier "
                        "reading of the clock from the later one, end - start").format(
                          seconds=seconds))
    if seconds > 1000 or abs(seconds - time.perf_counter()) < 60:
        raise Mistake(_("got {seconds:.3g}, not a duration but a reading of the clock: "
                        "return time.perf_counter() - start").format(seconds=seconds))
    if seconds > 200 * delay:
        raise Mistake(_("got {seconds:.3g} for a call that takes {delay:.3g} s: return "
                        "seconds, not milliseconds").format(seconds=seconds, delay=delay))
    if seconds < 0.5 * delay:
        raise Mistake(_("measured {seconds:.2g} ms for a call whose work takes {delay:.0f} ms: "
                        "the clock stopped when fn RETURNED, before its work was done. "
                        "Wait for the result before reading the clock: "
                        "jax.block_until_ready(fn(*args)); and read a clock that counts the "
                        "waiting, time.perf_counter() (time.process_time() counts only the "
                        "CPU's work)").format(
                          seconds=seconds * 1e3, delay=delay * 1e3))
    if seconds > 1.4 * delay + 0.04:  # two calls take 2 * delay, or more
        raise Mistake(_("measured {seconds:.2f} s for one call whose work takes {delay:.3g} s: "
                        "time ONE call of fn(*args), once").format(seconds=seconds, delay=delay))
    quick_fn, quick_args, what_quick = _work(student_fn, 0.0)
    quick = min(_seconds(call(student_fn, quick_fn, *quick_args, what=what_quick), what_quick)
                for _unused in range(2))  # the quicker of two: a busy machine may pause one
    if not 0 <= quick < 0.5 * seconds:
        raise Mistake(_("measured {quick:.3g} s for a call with no work: return the "
                        "time of fn(*args), measured with time.perf_counter()").format(
                          quick=quick))
    expect_own_code(student_fn, (_fixtures.queued_work, 0.01), what, "nn_from_scratch.timing",
                    message=_("{what} calls the library's {name}: the exercise is the clock "
                              "itself, time.perf_counter() around jax.block_until_ready("
                              "fn(*args))"))
    return _("measured {seconds:.0f} ms for {delay:.0f} ms of queued work: you waited for "
             "it").format(seconds=seconds * 1e3, delay=delay * 1e3)


def _check_operands(fn: str, args: tuple[dict[str, Any], ...], n: int) -> None:
    """The two operands of a timed add, as the stand-in timer describes them
    (:func:`_fixtures.operand`): n float32 ones, NumPy's for np.add, JAX's for jnp.add."""
    numpy = fn == "np.add"
    name, kind, make = (("np.add", "numpy", _("np.ones(n, np.float32)")) if numpy else
                        ("jnp.add", "jax", "jnp.ones(n)"))
    if len(args) != 2 or not all(a["kind"] == kind for a in args):
        if not numpy and args and all(a["kind"] == "numpy" for a in args):
            raise Mistake("timer(jnp.add, ...) got NumPy arrays: time it on JAX arrays, "
                          "jnp.ones(n), or its time includes copying them to the device")
        raise Mistake(_("timer({name}, ...) got {join_value}; time it on two arrays "
                        "{make}").format(
                          name=name, join_value=', '.join(a["summary"] for a in args), make=make))
    for a in args:
        if tuple(a["shape"]) != (n,) or a["dtype"] != "float32" or not a["ones"]:
            if a["dtype"] == "float64":
                raise Mistake(_("timer({name}, ...) got {summary_a} for n = {n}; time two "
                                "float32 arrays of n ones: np.ones is float64 unless you say "
                                "np.ones(n, np.float32)").format(
                                  name=name, summary_a=a["summary"], n=n))
            raise Mistake(_("timer({name}, ...) got {summary_a} for n = {n}; time two "
                            "float32 arrays of n ones").format(
                              name=name, summary_a=a["summary"], n=n))


# n -> the stand-in's seconds for (np.add, jnp.add): JAX slower at 100, faster at 10**6
_STAND_IN_SECONDS = {100: (1e-6, 5e-6), 10 ** 6: (6e-4, 4e-4)}


@exercise(LESSON, 4, "JAX's speed-up on an add")
def add_speedup(student_fn: Any) -> str:
    for n, times in _STAND_IN_SECONDS.items():
        t_np, t_jnp = scaled(times, n % 97)
        timer = beside(student_fn, _fixtures.StandInTimer, t_np, t_jnp)
        what = f"add_speedup({n}, timer)"
        got = call(student_fn, n, timer, what=what, hints={
            "attribute 'median'": N_("timer(fn, *args) returns seconds, a number (as your "
                                     "wall_time does): no .median")})
        calls = timer.calls  # [("np.add" or "jnp.add", its operands), ...]
        if not calls:
            raise Mistake(_("{what} never called the timer it was handed: time np.add "
                            "and jnp.add with it, timer(fn, *args)").format(what=what))
        missing = [name for name in ("np.add", "jnp.add") if all(f != name for f, _unused in calls)]
        if missing:
            raise Mistake(_("{what} never timed {missing}: time both np.add and jnp.add").format(
                              what=what, missing=missing[0]))
        for fn, args in calls:
            _check_operands(fn, args, n)
        seconds = _seconds(got, what, _("a ratio, NumPy's time / JAX's time"))
        want = t_np / t_jnp
        if not np.isclose(seconds, want, rtol=1e-6):
            reject_known_wrong(seconds, {
                N_("upside down: the speed-up is NumPy's time / JAX's time"): t_jnp / t_np,
                N_("multiplied the times: the speed-up is NumPy's time DIVIDED by JAX's"):
                    t_np * t_jnp,
                N_("that is one of the two times: return NumPy's time / JAX's time"): t_np,
                N_("that is JAX's time alone: return NumPy's time / JAX's time"): t_jnp,
                N_("subtracted the times: the speed-up is a ratio, NumPy's time / JAX's"):
                    t_np - t_jnp,
            }, rtol=1e-6, atol=0)
            raise Mistake(_("{what} returned {seconds:.4g} when np.add took "
                            "{format_seconds_t_np} and jnp.add {format_seconds_t_jnp}; "
                            "the speed-up is NumPy's time / JAX's time = {want:.4g}").format(
                              what=what, seconds=seconds,
                              format_seconds_t_np=format_seconds(t_np),
                              format_seconds_t_jnp=format_seconds(t_jnp), want=want))
    return (N_("NumPy's time / JAX's time, with two float32 arrays of n ones each, for n = 100 "
            "and 10**6"))


@exercise(LESSON, 5, "lax.add with mixed types")
def add_with_lax(student_fn: Any) -> str:
    draw = generator(50)
    n = int(draw.integers(3, 10))
    ints = jnp.arange(n) + int(draw.choice([-3, -2, -1, 1, 2, 3]))  # int32, not arange(n)
    floats = jnp.asarray((draw.integers(-40, 40, size=n) / 4 + 0.5).astype(np.float32))
    what = _("add_with_lax(i, f) for {n} int32s and {n} float32s").format(n=n)
    got = call(student_fn, ints, floats, what=what, hints={
        "same dtypes": N_("lax.add takes two operands of ONE dtype and converts nothing, as you "
                          "saw: convert the ints to the floats' dtype, float32, first, "
                          "lax.convert_element_type(i, jnp.float32)"),
        ("incompatible shapes", "broadcast"): _("{what} failed on shapes: a size written as a "
                                                "number? Add i and f themselves, whatever "
                                                "their length").format(what=what)})
    got = expect_shape(got, (n,), what)
    if np.issubdtype(got.dtype, np.integer):
        raise Mistake(_("got {dtype} {tolist}: the floats were cast to int and lost "
                        "their fractions (0.5 became 0). Convert the ints to float32 "
                        "instead").format(dtype=got.dtype, tolist=got.tolist()))
    if got.dtype != np.float32:
        raise Mistake(_("got dtype {dtype}; int32 + float32 should give float32, as "
                        "jnp.add does").format(dtype=got.dtype))
    if np.allclose(got, np.arange(n) + np.asarray(floats)):
        raise Mistake(_("{what}: the result is jnp.arange(n) + f, not i + f: add the ints "
                        "you are given, i, whatever they are").format(what=what))
    expect_close(got, np.asarray(ints) + np.asarray(floats), what,
                 hint=_("convert the ints to float32, then lax.add"))
    expect_own_code(student_fn, (ints, floats), what, (), calls=_fixtures.without_lax_add,
                    message=_("{what} never calls lax.add, or its result is not what it "
                              "returns: i + f and jnp.add convert the ints for you. The "
                              "exercise is that conversion written out, "
                              "lax.add(lax.convert_element_type(i, jnp.float32), f)"))
    return N_("int32 + float32 -> float32, with the conversion written out")
