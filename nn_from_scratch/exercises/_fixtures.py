"""What the checkers hand to the student's code, made where that code runs.

In class a checker calls these directly. When the grader checks a submission,
the student's code runs in another process (its kernel), and what it is handed
must be made there: the checker names one of these (``beside(answer, graph, 2)``,
:mod:`._remote`), the kernel imports it from the package and calls it. So every
object here is plain: functions for the student's code to differentiate or time,
stand-ins that record how they were used, graphs of a lesson's Values. None of
them decides anything; what they record is read back and judged by the checker.
"""
import functools
import time
from typing import Any

import numpy as np

from .. import autodiff
from ..i18n import _
from ._calls import names_used
from ._core import Mistake
from ._hints import summary

__all__ = ["Bowl", "GRAPH_FUNCTIONS", "InFlight", "OPTIMIZER_MODULES", "QueuedWork", "StandInTimer",
           "Watched", "checking_key_reuse", "cube", "cubic", "deep", "diamond", "first_given",
           "graph", "lesson_jaxpr", "library_calls", "neuron", "poly", "printed_under_jit",
           "queued_work", "shared", "square", "summed", "tiny_step_inputs", "total", "traced_size",
           "weighted"]


def _tanh(z: Any) -> Any:
    """tanh for a Value (the student's or the library's) and for a JAX number alike."""
    import jax.numpy as jnp

    return z.tanh() if hasattr(z, "tanh") else jnp.tanh(z)


# Lesson 03's scalar functions, written once for Values and for jax.grad alike. Each is
# called "f", the name a student's error message shows.
def square(x: Any) -> Any:
    return x * x


def diamond(x: Any, y: Any) -> Any:
    a = x * y            # a is used twice below: its grad sums both uses
    return (a + x) * a


def neuron(x1: Any, x2: Any, w1: Any, w2: Any, b: Any) -> Any:
    return _tanh(x1 * w1 + x2 * w2 + b)


def deep(x: Any, w: Any) -> Any:
    h = x
    for _unused in range(3):   # x and w feed every layer
        h = _tanh(h * w + x)
    return h


def cubic(x: Any) -> Any:
    return x * x * x + 2 * x  # lesson 02's g: g'(2) = 14


def total(x: Any, y: Any) -> Any:
    return x + y


def poly(x: Any, y: Any) -> Any:
    return x * y - 3 * x * x


def shared(a: Any, x: Any) -> Any:
    b = a * a              # b is used twice, once through c: its grad is complete only once
    c = b + x              # c has passed its share back (a walk breadth-first from the root
    return b * c           # passes b on before that: a student's walk found it accepted)


def kinked(x: Any, y: Any) -> Any:
    """|x| * y, by a branch on ``x.data``: for Values only. A grad that hands f straight to
    jax.grad (no Value, no backward) gives it JAX's number, which has no ``.data``."""
    return x * y if x.data >= 0 else -1.0 * x * y


for _fn in (square, diamond, neuron, deep, shared, cubic, total, poly, kinked):
    _fn.__name__ = "f"  # its __qualname__ stays, so the kernel can import it by name

GRAPH_FUNCTIONS = (square, diamond, neuron, deep, shared)


def leaf(answer: Any, data: float) -> autodiff.Value:
    """A Value holding ``data`` for ``answer`` (a student's function), of a class that is both
    the library's Value and the answer's notebook's own ``Value``, where it has one: so that
    ``isinstance(x, Value)``, and the lesson's ``as_value``, hold in the answer as they do in
    the notebook (a student's walk: four right answers refused with "float() argument must be
    ... not 'Value'"). Its methods and rules stay the library's."""
    both = _both(answer)
    return both(data) if both is not None else autodiff.Value(data)


def _both(answer: Any) -> type | None:
    """The class that is both the library's Value and ``answer``'s notebook's own, if it has
    one the two can share."""
    own = getattr(answer, "__globals__", {}).get("Value")
    if isinstance(own, type) and not issubclass(autodiff.Value, own):
        try:
            return _both_of(own)
        except TypeError:  # a class the two cannot share (one that subclasses the library's)
            pass
    return None


@functools.cache
def _both_of(own: type) -> type:
    return type("Value", (autodiff.Value, own), {"__module__": own.__module__})


def graph(index: int, point: tuple[float, ...],
          answer: Any = None) -> tuple[list[autodiff.Value], autodiff.Value]:
    """A fresh graph of ``GRAPH_FUNCTIONS[index]`` at ``point``, made of the library's Values:
    ``(its inputs, its root)``; every Value of it also ``answer``'s notebook's own, as
    :func:`leaf`'s (a student's walk: ``isinstance(v, Value)`` in a topological order found
    none of the graph's Values)."""
    inputs = [autodiff.Value(v) for v in point]
    root = GRAPH_FUNCTIONS[index](*inputs)
    both = _both(answer)
    if both is not None:
        for value in autodiff.topological_order(root):
            value.__class__ = both
    return inputs, root


class InFlight:
    """Stands in for a JAX array whose work finishes a while after the call returned."""

    def __init__(self, delay: float) -> None:
        self._ready_at = time.perf_counter() + delay

    def block_until_ready(self) -> "InFlight":
        time.sleep(max(0.0, self._ready_at - time.perf_counter()))
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.block_until_ready()  # converting to NumPy waits too, as with a real jax.Array
        return np.zeros(2, dtype)

    def __repr__(self) -> str:
        return "Array([0., 0.], dtype=float32)"


class QueuedWork:
    """A call like :func:`queued_work` whose delay is not an argument: ``QueuedWork(d)(x)``,
    with an argument all the same (any), so that an answer that drops fn's arguments fails."""

    def __init__(self, delay: float) -> None:
        self._delay = delay

    def __call__(self, _x: Any) -> InFlight:
        return InFlight(self._delay)


def queued_work(delay: float) -> InFlight:
    """Like a JAX call: returns at once, with a result that is ready ``delay`` seconds later."""
    return InFlight(delay)


class StandInTimer:
    """A timer whose answers the check knows: ``np_seconds`` for np.add, ``jnp_seconds`` for
    jnp.add. Like the lesson's timer, ``timer(fn, *args)`` returns seconds; it records what it
    is handed, as ``calls``: ``[("np.add" or "jnp.add", operands), ...]``, instead of running
    anything, so the check costs no timing loop. Each operand is described, not kept
    (:func:`operand`): graded, ``calls`` crosses to the grader, and four arrays of a million
    float32 are 16 MB, the most one message may carry (lesson 00's own solution then lost its
    connection to the grader)."""

    def __init__(self, np_seconds: float, jnp_seconds: float) -> None:
        import jax.numpy as jnp

        self.seconds = {"np.add": (np.add, np_seconds), "jnp.add": (jnp.add, jnp_seconds)}
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __call__(self, fn: Any, *args: Any) -> float:
        for name, (known, seconds) in self.seconds.items():
            if fn is known:
                self.calls.append((name, tuple(operand(a) for a in args)))
                return seconds
        raise Mistake(_("timer(fn, *args) was handed {summary_fn} as fn: time np.add and "
                        "jnp.add themselves, the function first, e.g. timer(np.add, a, "
                        "a)").format(summary_fn=summary(fn)))


def operand(a: Any) -> dict[str, Any]:
    """What a check of a timed add needs of one operand ``a``, in a few bytes: ``kind``
    ("numpy", "jax" or its type's name), ``shape`` (a list, or None), ``dtype``, ``ones``
    (every entry 1) and ``summary`` (as a hint shows it)."""
    import jax

    kind = "jax" if isinstance(a, jax.Array) else "numpy" if isinstance(a, np.ndarray) else \
        type(a).__name__
    array = kind in ("jax", "numpy")
    try:
        ones = array and bool(np.all(np.asarray(a) == 1))
    except Exception:  # a traced value: no numbers to compare
        ones = False
    return {"kind": kind, "shape": [int(d) for d in a.shape] if array else None,
            "dtype": str(a.dtype) if array else "", "ones": ones, "summary": summary(a)}


def cube(x: float) -> float:
    """x**3: a function for lesson 02's central difference."""
    return x ** 3


class Bowl:
    """A quadratic loss with a known minimum, for a pytree ``theta`` of its own shape.

    loss = sum over leaves of curvature * (p - bottom)**2 / 2, plus a cross term that
    couples the first two leaves, so that every leaf and every sign matters. Called, it
    returns ``(loss, grads)``, as lesson 02's ``loss_and_grads`` does.
    """

    def __init__(self, bottom: Any, curvature: Any) -> None:
        self.bottom, self.curvature = bottom, curvature

    def __call__(self, theta: Any) -> tuple[float, Any]:
        import jax

        offsets = jax.tree.map(lambda p, m: np.asarray(p, np.float64) - m, theta, self.bottom)
        leaves = jax.tree.leaves(offsets)
        first, second = leaves[0].ravel()[0], leaves[1].ravel()[0]
        value = sum(float(np.sum(c * d * d)) / 2 for c, d in
                    zip(jax.tree.leaves(self.curvature), leaves)) + 0.3 * first * second
        grads = jax.tree.map(lambda c, d: c * d, self.curvature, offsets)
        grad_leaves = jax.tree.leaves(grads)
        grad_leaves[0].flat[0] += 0.3 * second
        grad_leaves[1].flat[0] += 0.3 * first
        return value, grads

    def descent(self, theta: Any, step_size: float, steps: int) -> list[float]:
        """The right answer: the loss before each of ``steps`` updates."""
        import jax

        losses = []
        for _unused in range(steps):
            value, grads = self(theta)
            theta = jax.tree.map(lambda p, g: np.asarray(p, np.float64) - step_size * g,
                                 theta, grads)
            losses.append(value)
        return losses


class Watched:
    """A small function that counts its traces, and refuses to run op by op (outside jit):
    called on a value that is not a tracer, it raises a Mistake with ``eager_hint``.

    Its first run after :meth:`compile_once` takes at least ``FIRST_RUN_SECONDS``, as the
    first call of a function that compiles does: the student's compile_time(fn, x) leaves
    the program in JAX's cache, so jax.jit(fn)'s real first call would be only a little
    slower than a warm one, and a "run time" that is the first call would pass on some
    machines and fail on others.
    """

    FIRST_RUN_SECONDS = 0.05

    def __init__(self, eager_hint: str) -> None:
        self.traces, self.eager_hint, self.ran = 0, eager_hint, False

    def __call__(self, x: Any) -> Any:
        import jax

        if not isinstance(x, jax.core.Tracer):  # say so now, before it compiles each op
            raise Mistake(self.eager_hint)
        self.traces += 1
        doubled = x * 2
        jax.debug.callback(self._first_run_waits)
        return doubled

    def _first_run_waits(self) -> None:
        if not self.ran:
            self.ran = True
            time.sleep(self.FIRST_RUN_SECONDS)

    def compile_once(self, x: Any) -> None:
        """Compile ``jax.jit(self)`` for ``x`` (so that only a cleared cache compiles anew),
        then count traces, and runs, from 0."""
        import jax

        jax.block_until_ready(jax.jit(self)(x))
        jax.effects_barrier()
        self.traces, self.ran = 0, False

    def warm_seconds(self, x: Any) -> tuple[float, float]:
        """The median and the fastest time of a warm call of ``jax.jit(self)(x)``, here (the
        fastest is what a busy machine cannot make longer, but by slowing every call)."""
        import jax

        from ..timing import time_fn

        timing = time_fn(jax.jit(self), x, repeats=5)
        return timing.median, timing.spread[0]


def summed(fn: Any) -> Any:
    """``lambda *args: jnp.sum(fn(*args))``: a function of one number out, for ``jax.grad``."""
    import jax.numpy as jnp

    def total_of(*args: Any) -> Any:
        return jnp.sum(fn(*args))
    return total_of


def weighted(fn: Any, weights: Any) -> Any:
    """``lambda *args: jnp.sum(fn(*args) * weights)``: one number out, for ``jax.grad``, whose
    gradient shows every output's (a plain sum of weights that sum to 1 has none)."""
    import jax.numpy as jnp

    def total_of(*args: Any) -> Any:
        return jnp.sum(fn(*args) * weights)
    return total_of


def printed_under_jit(fn: Any, *inputs: Any) -> tuple[list[Any], str]:
    """``jax.jit(lambda x: fn(x))`` on each input, traced afresh, and what it printed meanwhile
    (``jax.debug.print`` included)."""
    import contextlib
    import io

    import jax

    fresh = jax.jit(lambda x: fn(x))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        results = [fresh(x) for x in inputs]
        jax.block_until_ready(results)
        jax.effects_barrier()  # jax.debug.print runs asynchronously: wait for it
    return results, out.getvalue()


def traced_size(fn: Any, x: Any, *rest: Any) -> int:
    """How many operations the traced program of ``lambda v: fn(v, *rest)`` has, at ``x``."""
    import jax

    return len(jax.make_jaxpr(lambda v: fn(v, *rest))(x).eqns)


def tiny_step_inputs(layers: int = 3) -> tuple[Any, np.ndarray, np.ndarray]:
    """A network of ``layers`` layers (lesson 09's depth, 3, unless drawn for a grading), tiny
    widths, and a batch of 3: ``(params, x (3, 6), one-hot y (3, 4))``."""
    rng = np.random.default_rng(0)
    sizes = [6, *[5] * (layers - 1), 4]
    params = [(rng.normal(size=(n, m)).astype(np.float32), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.uniform(size=(3, 6)).astype(np.float32)
    return params, x, np.eye(4, dtype=np.float32)[[0, 2, 3]]


def lesson_jaxpr(name: str, layers: int = 3) -> Any:
    """A jaxpr of lesson 09's check: ``"step"``, one SGD step of a network of ``layers``
    layers; ``"loss"``, its loss (the forward pass); ``"none"``, a function with no matrix
    multiply at all. Tracing only: nothing is compiled."""
    import jax

    from .. import losses, train

    params, x, y = tiny_step_inputs(layers)
    if name == "step":
        return jax.make_jaxpr(train.update)(params, x, y, 0.1)
    if name == "loss":
        return jax.make_jaxpr(losses.loss)(params, x, y)
    return jax.make_jaxpr(lambda a: jax.numpy.sin(a) * 2)(x)


def checking_key_reuse(fn: Any) -> Any:
    """``fn``, run under ``jax.debug_key_reuse(True)``: a key used twice raises KeyReuseError."""
    import functools

    import jax

    @functools.wraps(fn)
    def checked(*args: Any) -> Any:
        with jax.debug_key_reuse(True):
            return fn(*args)
    return checked


def first_given(fn: Any, *rest: Any) -> Any:
    """``lambda first: fn(first, *rest)``: a function of its first argument alone, the rest
    given (a schedule of the step count, its settings fixed)."""
    def of_first(first: Any) -> Any:
        return fn(first, *rest)
    return of_first


# Where ready-made optimizers live: this package's optim and schedules, Optax, JAX's own.
OPTIMIZER_MODULES = ("nn_from_scratch.optim", "nn_from_scratch.schedules", "optax",
                     "jax.example_libraries.optimizers")


def derivative_sources(fn: Any, names: tuple[str, ...]) -> list[str]:
    """The names ``fn``'s code reads (its nested functions' too) that are in ``names``, or are
    bound in its globals (or its closure) to a function of the student's own (not a module,
    nor NumPy's, JAX's or Python's): what it may compute its numbers from, rather than from
    formulas typed in.
    ``["?"]`` where ``fn`` has no Python code to read (a compiled or built-in function)."""
    import inspect
    import types

    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return ["?"]
    read = names_used(code)
    namespace = getattr(inspect.unwrap(fn), "__globals__", {})

    def own(value: Any) -> bool:
        module = str(getattr(value, "__module__", "") or "")
        return callable(value) and not isinstance(value, types.ModuleType) and not \
            module.startswith(("numpy", "jax", "math", "builtins", "nn_from_scratch"))
    closure = dict(zip(code.co_freevars, (cell.cell_contents for cell in
                                           getattr(inspect.unwrap(fn), "__closure__", None) or ())))
    return sorted({name for name in read if name in names or own(namespace.get(name))} |
                  {name for name, value in closure.items() if name in names or own(value)})


def _another_g(x: Any) -> Any:
    """x**4 - x: derivatives 4x**3 - 1, 12x**2 and 24x (31, 48 and 48 at x = 2)."""
    return x ** 4 - x


def with_another_g(fn: Any, x: float) -> list[float] | None:
    """``fn(x)`` with the ``g`` its code reads swapped for :func:`_another_g` while it runs
    (put back after), as a list of floats; None if ``fn`` reads no global ``g`` itself."""
    import inspect

    raw = inspect.unwrap(fn)
    code, namespace = getattr(raw, "__code__", None), getattr(raw, "__globals__", None)
    if code is None or namespace is None or "g" not in namespace or "g" not in names_used(code):
        return None
    kept = namespace["g"]
    namespace["g"] = _another_g
    try:
        return [float(value) for value in raw(x)]
    finally:
        namespace["g"] = kept


def ready_made_calls(fn: Any, args: tuple[Any, ...], allowed: tuple[str, ...] = (),
                     modules: tuple[str, ...] = ("jax",)) -> list[str]:
    """:func:`library_calls`, but whoever calls them: handed to ``jax.tree.map``, ``jax.vmap``
    or ``jnp.vectorize``, JAX's ready-made functions are called by JAX's own code. For names
    that JAX's other functions never call (``softmax``, ``eye``)."""
    return _calls_of(fn, args, allowed, modules, by_anyone=True)


_TRANSFORMS = {"vmap_f": "vmap", "grad_f": "grad", "value_and_grad_f": "grad"}
_ONE_BY_ONE = 8  # past these many vmap and grad calls, the rest are changed together


def transforms_run(fn: Any, args: tuple[Any, ...]) -> dict[str, int]:
    """How many functions made by ``jax.vmap`` and ``jax.grad`` run while ``fn(*args)`` runs,
    and how many of them its result depends on: ``{"vmap": 2, "grad": 1, "vmap used": 2,
    "grad used": 1}`` (each ``vmap_f`` or ``grad_f`` call, whoever calls it: two nested vmaps
    run two, the inner one called by JAX while it maps the outer; JAX's own ``jacobian`` runs
    a vmap but no grad); ``{}`` if ``fn`` raised. Run without ``jit`` (a cached compile maps
    nothing).

    Used: ``fn`` runs again once per call with that call's inputs changed (:func:`_changed`,
    positional and keyword, written into its frame by the profiler, as Python lets a profiler
    do): a call whose result ``fn`` computes its result from changes it; a vmap run and
    thrown away beside einsum (or added times 0) does not. A call with no inputs to change
    (``axis_size``), and a changed run that raises, count as used: nothing shows otherwise.
    A vmap that does no work but feeds the result (``vmap(lambda v: v)``) counts as used:
    its change shows, and no data flow tells it from an honest one. Past the first eight
    calls, the rest are changed together, and count as used if the result changes; and all
    are changed at once, so that calls whose results cancel (``v - v``) count as unused."""
    kinds: list[str] = []

    def watch(frame: Any, event: str, _arg: Any) -> None:
        if kind := _transform_call(frame, event):
            kinds.append(kind)

    ran = _run_watched(fn, args, watch)
    if not ran:
        return {}
    count = {kind: kinds.count(kind) for kind in ("vmap", "grad")}
    used = dict(count)
    groups = [[index] for index in range(min(len(kinds), _ONE_BY_ONE))]
    if len(kinds) > _ONE_BY_ONE:
        groups.append(list(range(_ONE_BY_ONE, len(kinds))))
    if len(kinds) > 1:  # all at once: calls that cancel (v - v) change nothing together
        groups.append(list(range(len(kinds))))
    for group in groups:
        changeable, again = _run_changed(fn, args, set(group))
        if changeable and again and _same(again[0], ran[0]):  # changed; the result is not
            for index in group:
                used[kinds[index]] = max(0, used[kinds[index]] - 1)
    return {**count, **{f"{kind} used": n for kind, n in used.items()}}


def _transform_call(frame: Any, event: str) -> str:
    """``"vmap"`` or ``"grad"`` if the profiler's ``event`` is the call of a function made by
    ``jax.vmap`` or ``jax.grad`` (its ``vmap_f``, ``grad_f``), else ""."""
    if event == "call" and frame.f_globals.get("__name__") == "jax._src.api":
        return _TRANSFORMS.get(frame.f_code.co_name, "")
    return ""


def _changed(tree: Any) -> Any:
    """``tree`` with every number in it changed, finitely and across the usual thresholds
    (NaN would be masked by an honest ``nan_to_num`` and pass through a dishonest ``0 *``;
    ``1.5 x + 0.25`` keeps float flags of 0 and 1 on their sides of 0.5), and not back when
    changed twice (an inner vmap handed an outer one's changed inputs: ``0.37 - x`` twice is
    x): floats to ``0.37 - 1.5 x``; integers to 0, booleans to False (to 1 and True where
    all are so already: an index map that wraps around still moves); Python numbers alike;
    other leaves as they are."""
    import jax
    import jax.numpy as jnp

    def change(leaf: Any) -> Any:
        if isinstance(leaf, bool):
            return not leaf
        if isinstance(leaf, int):
            return 0 if leaf else 1
        if isinstance(leaf, float):
            return 0.37 - 1.5 * leaf
        if not hasattr(leaf, "dtype"):
            return leaf
        if leaf.dtype == jnp.bool_ or jnp.issubdtype(leaf.dtype, jnp.integer):
            return jnp.where(jnp.all(leaf == 0), jnp.ones_like(leaf), jnp.zeros_like(leaf))
        if jnp.issubdtype(leaf.dtype, jnp.inexact):
            return (0.37 - 1.5 * leaf).astype(leaf.dtype)
        return leaf
    return jax.tree.map(change, tree)


def _numbers_in(tree: Any) -> bool:
    """Whether ``tree`` holds anything :func:`_changed` changes (a vmap called with no
    inputs, ``axis_size=n``, holds none: its use cannot be seen by changing them)."""
    import jax

    return any(isinstance(leaf, (bool, int, float)) or hasattr(leaf, "dtype")
               for leaf in jax.tree.leaves(tree))


def _same(a: Any, b: Any) -> bool:
    """Two results with the same leaves, to float rounding (calls whose results cancel,
    ``e + v - v``, leave a rounding's trace; a call that reaches the result changes it by far
    more, its inputs changed by half of themselves)."""
    import jax

    def close(x: Any, y: Any) -> bool:
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return False
        if x.dtype == bool or y.dtype == bool or not np.issubdtype(x.dtype, np.number):
            return bool(np.array_equal(x, y))
        return bool(np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True))

    left, right = jax.tree.leaves(a), jax.tree.leaves(b)
    return len(left) == len(right) and all(close(x, y) for x, y in zip(left, right))


def _run_changed(fn: Any, args: tuple[Any, ...],
                 indices: set[int]) -> tuple[bool, list[Any]]:
    """``fn(*args)`` (:func:`_run_watched`) with the inputs of its vmap and grad calls
    numbered ``indices`` (in the order they run), positional and keyword, :func:`_changed`:
    ``(whether any of them had numbers to change, [what fn returned] or [])``."""
    seen, changeable = 0, False

    def change(frame: Any, event: str, _arg: Any) -> None:
        nonlocal seen, changeable
        if _transform_call(frame, event):
            if seen in indices:
                local = frame.f_locals  # once: in Python 3.11 each read of it syncs it anew
                for name in ("args", "kwargs"):
                    changeable |= _numbers_in(local[name])
                    local[name] = _changed(local[name])
            seen += 1

    out = _run_watched(fn, args, change)
    return changeable, out


def without_lax_add(fn: Any, args: tuple[Any, ...], allowed: tuple[str, ...] = (),
                    modules: tuple[str, ...] = ()) -> list[str]:
    """``["jnp.add"]`` if ``fn(*args)`` never calls ``lax.add`` but through ``jnp`` (``i + f``
    and ``jnp.add`` promote the dtypes for the student, calling ``lax.add`` from jnp's own
    code), or calls it and throws its result away (with the inputs of those calls changed,
    as :func:`transforms_run` does, the answer is the same); ``[]`` if its result comes from
    one (its own code, or ``jax.vmap(lax.add)``). For :func:`._compare.expect_own_code`'s
    ``calls``."""
    jnp_files = _library_files(("jax._src.numpy",))  # jnp.add and + call lax.add from here
    called, changing = False, False

    def watch(frame: Any, event: str, _arg: Any) -> None:
        nonlocal called
        if event == "call" and frame.f_code.co_name == "add" and \
                frame.f_globals.get("__name__") == "jax._src.lax.lax" and \
                frame.f_back is not None and \
                not frame.f_back.f_code.co_filename.startswith(jnp_files):
            called = True  # by the student's code, or by vmap or tree.map of lax.add
            if changing:
                local = frame.f_locals  # once: in Python 3.11 each read of it syncs it anew
                for name in ("x", "y"):
                    local[name] = _changed(local[name])

    ran = _run_watched(fn, args, watch)
    if not called:
        return ["jnp.add"]
    changing = True
    again = _run_watched(fn, args, watch)
    if ran and again and _same(again[0], ran[0]):
        return ["jnp.add"]  # lax.add ran, and its result was thrown away
    return []


def _library_files(modules: tuple[str, ...]) -> tuple[str, ...]:
    """The files of ``modules`` (each only if installed): a package's folder, a module's file."""
    import importlib.util
    import os

    found = []
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            # a package: everything under its folder; a module: its file alone
            found.append(os.path.dirname(spec.origin) + os.sep
                         if spec.submodule_search_locations else spec.origin)
    return tuple(found)


def library_calls(fn: Any, args: tuple[Any, ...], allowed: tuple[str, ...] = (),
                  modules: tuple[str, ...] = OPTIMIZER_MODULES) -> list[str]:
    """The functions of ``modules`` (by default the ready-made optimizers: ``optim``, Optax,
    ``jax.example_libraries``) that ``fn(*args)`` calls from code of its own, by name
    (``"optax.scale_by_adam"``, ``"nn_from_scratch.attention.softmax"``), except those named
    in ``allowed``. Run without ``jit`` (a cached compile calls nothing), under a profiler;
    what ``fn`` returns or raises is not looked at (the check judges that)."""
    return _calls_of(fn, args, allowed, modules, by_anyone=False)


def _calls_of(fn: Any, args: tuple[Any, ...], allowed: tuple[str, ...],
              modules: tuple[str, ...], by_anyone: bool) -> list[str]:
    """The functions of ``modules`` that run while ``fn(*args)`` runs, by name, called by the
    student's own code or (``by_anyone``) by any code, a library's included."""
    places = _library_files(tuple(modules))
    seen: list[str] = []

    def watch(frame: Any, event: str, _arg: Any) -> None:
        if event != "call" or not frame.f_code.co_filename.startswith(places):
            return
        caller = frame.f_back
        if not by_anyone and caller is not None and \
                caller.f_code.co_filename.startswith(places):
            return  # called by a library, not by the student's own code
        module = str(frame.f_globals.get("__name__", ""))
        name = f"{module.split('.')[0]}.{frame.f_code.co_name}"
        if module.startswith("nn_from_scratch."):
            name = f"{module}.{frame.f_code.co_qualname.split('.')[0]}"
        if frame.f_code.co_name.startswith("<"):
            return  # a module run by its import, a lambda: no name the student wrote
        if frame.f_code.co_name not in allowed and name not in seen:
            seen.append(name)

    called_back: list[str] = []

    def watch_shapes(frame: Any, event: str, arg: Any) -> None:
        watch(frame, event, arg)
        if event == "call" and frame.f_code.co_name in _CALLBACKS and \
                frame.f_code.co_filename.startswith(_library_files(("jax",))):
            called_back.append(frame.f_code.co_name)  # runs Python on numbers, unseen here

    if not _run_watched(fn, args, watch_shapes, abstract=True) or called_back:
        _run_watched(fn, args, watch)  # code that needs the numbers themselves: run on them
    return seen


# JAX's ways to run Python on an array's numbers (a callback), which a run on shapes never calls
_CALLBACKS = {"pure_callback", "io_callback", "debug_callback", "callback"}


def is_numbers(leaf: Any) -> bool:
    """Is ``leaf`` an array or a number, which becomes numbers without running any code of the
    student's own (an object whose ``__array__`` does, red team, round nine, is not)?"""
    import jax

    return isinstance(leaf, jax.Array | np.ndarray | np.generic | int | float | complex)


def _converted(out: Any) -> None:
    """Turn into numbers, as a check will, each part of ``out`` that is not numbers yet (an
    object of the student's own class): its ``__array__``, ``__float__`` or ``__int__`` runs
    now, watched, not later in the check (red team, round nine: one that called the library
    there earned the point)."""
    import jax

    for leaf in jax.tree.leaves(out):
        if is_numbers(leaf) or isinstance(leaf, str | bytes):
            continue
        for convert in (np.asarray, float, int):
            try:
                convert(leaf)
            except Exception:  # noqa: BLE001, S112 - only what it runs matters
                continue


def _run_watched(fn: Any, args: tuple[Any, ...], watch: Any,
                 abstract: bool = False) -> list[Any]:
    """``fn(*args)`` without ``jit`` (a cached compile runs nothing), with ``watch`` as
    Python's profiler meanwhile: ``[what it returned]``, or ``[]`` if it raised (what it
    raises is the check's to report, when it calls ``fn`` itself).

    ``abstract``: run it on the arrays' shapes and dtypes alone (``jax.eval_shape``, each
    time a new function, so that no trace is reused), not on their numbers: every line of
    Python runs as it does under ``jit``, and nothing is compiled, where running each
    operation on numbers compiles it anew for each shape a check draws. What is computed from
    no input (``jnp.tril(jnp.ones((t, t)))``) is computed on numbers all the same
    (``ensure_compile_time_eval``), so that a value the answer keeps (a mask cached per size)
    is no trace of this run. ``[None]`` when it ran and returned arrays and numbers only;
    ``[]`` when it raised, as code that needs the numbers does (``float(x)``), or returned
    something else (a string where the inputs are traced: its result on numbers is another
    run's, which must be watched)."""
    import sys

    import jax

    if abstract:
        leaves, tree = jax.tree.flatten(args)
        arrays = [isinstance(leaf, (jax.Array, np.ndarray)) for leaf in leaves]

        def on_shapes(*shaped: Any) -> Any:
            given = iter(shaped)
            with jax.ensure_compile_time_eval():
                return fn(*jax.tree.unflatten(tree, [next(given) if is_array else leaf
                                                     for leaf, is_array in zip(leaves, arrays)]))

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        with jax.disable_jit():
            if abstract:
                jax.eval_shape(on_shapes, *[leaf for leaf, is_array in zip(leaves, arrays)
                                            if is_array])
                out = None
            else:
                out = fn(*args)
                _converted(out)
    except Exception:
        return []
    finally:
        sys.setprofile(previous)
    return [out]
