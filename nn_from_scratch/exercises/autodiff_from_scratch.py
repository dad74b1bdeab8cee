"""Checkers for lesson 03, autodiff from scratch: the student completes a scalar reverse mode.

The library holds no autodiff engine: the lesson's ``Value`` is the student's
work. These checkers build their own small graphs (:class:`_Node`, with the
same attributes as the lesson's ``Value``: ``data``, ``grad``, ``parents``,
``local_grads``), hand them to the student's functions, and compare what comes
back with ``jax.grad`` of the same functions. To name a mistake they also run
the usual wrong versions (a swapped rule, ``=`` instead of ``+=``, the forward
order, a missing ``root.grad = 1``) and say which one the answer matches.
"""
import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._core import Mistake, NotDone, call, exercise

LESSON = "03_autodiff_from_scratch"


class _Node:
    """The checker's own scalar Value: the lesson's attributes, the right local rules."""

    def __init__(self, data: float, parents: tuple = (), local_grads: tuple = (), op: str = ""):
        self.data, self.grad = float(data), 0.0
        self.parents, self.local_grads, self.op = tuple(parents), tuple(local_grads), op

    def __add__(self, other: Any) -> "_Node":
        other = other if isinstance(other, _Node) else _Node(other)
        return _Node(self.data + other.data, (self, other), (1.0, 1.0), "+")

    def __mul__(self, other: Any) -> "_Node":
        other = other if isinstance(other, _Node) else _Node(other)
        return _Node(self.data * other.data, (self, other), (other.data, self.data), "*")

    __radd__, __rmul__ = __add__, __mul__

    def __sub__(self, other: Any) -> "_Node":
        return self + (-1.0) * other

    def tanh(self) -> "_Node":
        t = math.tanh(self.data)
        return _Node(t, (self,), (1 - t * t,), "tanh")


def _tanh(z: Any) -> Any:
    """tanh for a Value (the student's or ours) and for a JAX number alike."""
    return z.tanh() if hasattr(z, "tanh") else jnp.tanh(z)


def _diamond(x: Any, y: Any) -> Any:
    a = x * y            # a is used twice below: its grad sums both uses
    return (a + x) * a


def _neuron(x1: Any, x2: Any, w1: Any, w2: Any, b: Any) -> Any:
    return _tanh(x1 * w1 + x2 * w2 + b)


def _deep(x: Any, w: Any) -> Any:
    h = x
    for _ in range(3):   # x and w feed every layer
        h = _tanh(h * w + x)
    return h


# (name, function, point): scalar functions written once, run on Values and under jax.grad.
GRAPHS: list[tuple[str, Callable[..., Any], tuple[float, ...]]] = [
    ("x * x", lambda x: x * x, (3.0,)),
    ("(x*y + x) * (x*y)", _diamond, (2.0, -1.5)),
    ("the neuron tanh(x1 w1 + x2 w2 + b)", _neuron, (2.0, 0.0, -3.0, 1.0, 6.881373587019543)),
    ("three tanh layers", _deep, (0.5, -1.2)),
]


@functools.cache
def _jax_grads(index: int) -> np.ndarray:
    """jax.grad of GRAPHS[index] with respect to every argument, as float64 NumPy."""
    _, fn, point = GRAPHS[index]
    grads = jax.grad(fn, argnums=tuple(range(len(point))))(*point)
    return np.array([float(g) for g in grads])


def _graph(index: int) -> tuple[list[_Node], _Node]:
    """A fresh graph of GRAPHS[index] made of _Nodes: (its inputs, its root)."""
    inputs = [_Node(v) for v in GRAPHS[index][2]]
    return inputs, GRAPHS[index][1](*inputs)


def _all_nodes(root: _Node) -> list[_Node]:
    """Every node root depends on, each once, parents first (the reference order)."""
    order: list[_Node] = []
    seen: set[int] = set()

    def visit(v: _Node) -> None:
        if id(v) not in seen:
            seen.add(id(v))
            for parent in v.parents:
                visit(parent)
            order.append(v)

    visit(root)
    return order


def _reference_backward(root: _Node, mistake: str = "") -> None:
    """The backward pass, right (``mistake=""``) or with one of the usual mistakes."""
    order = _all_nodes(root)
    if mistake != "no seed":
        root.grad = 1.0
    for v in (order if mistake == "forward order" else reversed(order)):
        for parent, local in zip(v.parents, v.local_grads):
            if mistake == "assign":
                parent.grad = local * v.grad
            elif mistake == "no chain":
                parent.grad += local
            else:
                parent.grad += local * v.grad


def _as_numbers(values: Any, n: int, what: str) -> np.ndarray:
    """A tuple of n plain numbers from the student, or a Mistake that says what it got."""
    if values is Ellipsis:
        raise NotDone("local_grads is still `...`")
    if not isinstance(values, (tuple, list)):
        raise Mistake(f"{what} should be a tuple with one number per parent, e.g. "
                      f"{'(g,)' if n == 1 else '(ga, gb)'} (mind the comma); got "
                      f"{type(values).__name__} {values!r}")
    if len(values) != n:
        raise Mistake(f"{what} has {len(values)} entries; it needs one per parent: {n}")
    if any(hasattr(v, "data") for v in values):
        raise Mistake(f"{what} holds Values; local gradients are plain numbers: use .data "
                      f"(e.g. b.data, not b), or the graph would grow inside the rule")
    try:
        return np.array([float(v) for v in values])
    except (TypeError, ValueError):
        raise Mistake(f"{what} should hold numbers; got {values!r}") from None


def _output(out: Any, what: str) -> Any:
    for attribute in ("data", "parents", "local_grads"):
        if not hasattr(out, attribute):
            raise Mistake(f"{what} returned {type(out).__name__}, with no .{attribute}; "
                          f"return a Value(data, parents=..., local_grads=...)")
    return out


@exercise(LESSON, 1, "mul")
def mul(student_mul: Any) -> str:
    for a_data, b_data in ((2.0, -3.0), (0.5, 4.0), (-1.5, -0.25)):
        a, b = _Node(a_data), _Node(b_data)
        what = f"mul(a, b) with a.data = {a_data}, b.data = {b_data}"
        out = _output(call(student_mul, a, b, what=what), what)
        grads = _as_numbers(out.local_grads, 2, f"local_grads of {what}")
        parents = tuple(out.parents)
        if len(parents) != 2 or parents[0] is not a or parents[1] is not b:
            raise Mistake("parents should be (a, b), the two Values multiplied, so that "
                          "backward can reach them")
        want = np.array([float(g) for g in jax.grad(jnp.multiply, argnums=(0, 1))(a_data, b_data)])
        if np.allclose(grads, want[::-1]):
            raise Mistake(f"local_grads {tuple(grads)} are swapped: d(a*b)/da is b (b.data), "
                          f"and d(a*b)/db is a")
        if np.allclose(grads, 1.0):
            raise Mistake("local_grads (1, 1) is the rule of +; for a * b, d(a*b)/da = b "
                          "and d(a*b)/db = a")
        if not np.allclose(grads, want):
            raise Mistake(f"local_grads {tuple(grads)} for a = {a_data}, b = {b_data}; jax.grad "
                          f"says {tuple(want)}: d(a*b)/da = b and d(a*b)/db = a")
    return "d(a*b)/da = b and d(a*b)/db = a, as jax.grad says, at 3 points"


@exercise(LESSON, 2, "tanh")
def tanh(student_tanh: Any) -> str:
    for x in (0.5, -1.3, 2.0, 0.0):
        a = _Node(x)
        what = f"tanh(a) with a.data = {x}"
        out = _output(call(student_tanh, a, what=what), what)
        (got,) = _as_numbers(out.local_grads, 1, f"local_grads of {what}")
        if len(out.parents) != 1 or out.parents[0] is not a:
            raise Mistake("parents should be (a,): a tuple holding the one input")
        want = float(jax.grad(jnp.tanh)(x))
        if x != 0 and np.isclose(got, 1 - x * x):
            raise Mistake(f"got 1 - x² = {got:.4g} at x = {x}: the rule is 1 - tanh(x)², "
                          f"written with t = tanh(x), the output, not x")
        if np.isclose(got, 1 - math.tanh(x)) and x != 0:
            raise Mistake(f"got 1 - t = {got:.4g} at x = {x}: t must be squared, 1 - t²")
        if not np.isclose(got, want, rtol=1e-5, atol=1e-6):
            raise Mistake(f"local gradient {got:.6g} at x = {x}; jax.grad(jnp.tanh) says "
                          f"{want:.6g}. d tanh(x)/dx = 1 - tanh(x)², and t = tanh(x)")
    return "d tanh(a)/da = 1 - t², as jax.grad(jnp.tanh) says, at 4 points"


@exercise(LESSON, 3, "topological order")
def topological_order(student_fn: Any) -> str:
    for index, (name, _, _) in enumerate(GRAPHS):
        _, root = _graph(index)
        nodes = _all_nodes(root)
        what = f"topological_order(root) for {name}"
        got = call(student_fn, root, what=what)
        try:
            got = list(got)
        except TypeError:
            raise Mistake(f"{what} returned {type(got).__name__}; return a list of Values"
                          ) from None
        known = {id(v) for v in nodes}
        if any(id(v) not in known for v in got):
            raise Mistake(f"{what} holds things that are not Values of the graph: return the "
                          f"Values themselves (not their data)")
        if len({id(v) for v in got}) < len(got):
            raise Mistake(f"{what} lists a Value twice (there are {len(nodes)} Values, your "
                          f"list has {len(got)}): keep a set of the Values you have visited "
                          f"and skip them")
        if len(got) < len(nodes):
            raise Mistake(f"{what} has {len(got)} of the {len(nodes)} Values: visit every "
                          f"parent of every Value, recursively, inputs and constants included")
        if not _parents_first(got):
            if _parents_first(got[::-1]):
                raise Mistake(f"{what} is reversed: each Value must come AFTER its parents, "
                              f"root last (append a Value once all its parents are in); "
                              f"backward will walk it in reverse")
            raise Mistake(f"in {what} a Value comes before one of its parents: append a Value "
                          f"only after visiting all its parents")
    return f"every Value once, parents before children, on {len(GRAPHS)} graphs"


def _parents_first(order: list[Any]) -> bool:
    position = {id(v): i for i, v in enumerate(order)}
    return all(position[id(p)] < position[id(v)] for v in order for p in v.parents)


def _run_backward(student_fn: Any, root: _Node, what: str) -> None:
    """The student's backward(root), which fills in .grad and may return None."""
    if not callable(student_fn):
        raise Mistake(f"expected a function for {what}; got {type(student_fn).__name__}")
    try:
        student_fn(root)
    except (NotImplementedError, NotDone, Mistake):
        raise
    except Exception as err:
        text = str(err).strip().splitlines()
        raise Mistake(f"{what} raised {type(err).__name__}: {text[0] if text else ''} (does "
                      f"topological_order pass its check?)") from err


@exercise(LESSON, 4, "backward")
def backward(student_backward: Any) -> str:
    for index, (name, _, _) in enumerate(GRAPHS):
        inputs, root = _graph(index)
        what = f"backward(root) for {name}"
        _run_backward(student_backward, root, what)
        if root.grad != 1.0:
            raise Mistake(f"after {what}, root.grad is {root.grad!r}; start with root.grad = 1.0 "
                          f"(d root / d root = 1), or nothing flows back")
        got = np.array([float(v.grad) for v in inputs])
        want = _jax_grads(index)
        if np.allclose(got, want, rtol=1e-4, atol=1e-5):
            continue
        hints = {
            "assign": "a Value used twice got only one use's share: add with +=, never =; the "
                      "chain rule sums over every use",
            "forward order": "grads flowed in the forward order: walk reversed(topological_order"
                             "(root)), so each Value's grad is complete before it is passed on",
            "no chain": "multiply the local gradient by the Value's own grad: parent.grad += "
                        "local * v.grad (the chain rule)",
        }
        for mistake, hint in hints.items():
            wrong_inputs, wrong_root = _graph(index)
            _reference_backward(wrong_root, mistake)
            if np.allclose(got, [v.grad for v in wrong_inputs], rtol=1e-4, atol=1e-5):
                raise Mistake(f"{what}: {hint}")
        raise Mistake(f"{what} gives input grads {np.round(got, 4).tolist()}; jax.grad says "
                      f"{np.round(want, 4).tolist()}. In reverse topological order, add "
                      f"local * v.grad to each parent's grad")
    return f"input grads equal jax.grad's on {len(GRAPHS)} graphs, shared Values included"


def _grad_fn(student_grad: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    grad_fn = call(student_grad, fn, what="grad(f)")
    if not callable(grad_fn):
        raise Mistake(f"grad(f) returned {type(grad_fn).__name__}; it should return a FUNCTION "
                      f"of the same arguments as f, like jax.grad(f)")
    return grad_fn


def _student_grads(grad_fn: Callable[..., Any], point: tuple[float, ...], what: str) -> np.ndarray:
    try:
        out = grad_fn(*point)
    except (NotImplementedError, NotDone):
        raise
    except AttributeError as err:
        if "float" in str(err):
            raise Mistake(f"{what} raised AttributeError: {err}; wrap each number in a Value "
                          f"before calling f, so that f builds a graph") from err
        raise Mistake(f"{what} raised AttributeError: {err}") from err
    except Exception as err:
        raise Mistake(f"{what} raised {type(err).__name__}: {err}") from err
    if out is None:
        raise Mistake(f"{what} returned None: did you forget `return`?")
    if not isinstance(out, (tuple, list)):
        out = (out,)
    if any(hasattr(g, "data") for g in out):
        raise Mistake(f"{what} returned Values; return each input Value's .grad, a number")
    if len(out) != len(point):
        raise Mistake(f"{what} returned {len(out)} gradients for {len(point)} arguments: one "
                      f"per argument, in order")
    return np.array([float(g) for g in out])


@exercise(LESSON, 5, "your own grad")
def grad(student_grad: Any) -> str:
    cases: list[tuple[str, Callable[..., Any], tuple[float, ...], Any]] = [
        ("x + y", lambda x, y: x + y, (1.5, -2.0), (1.0, 1.0)),
        ("x * y - 3 * x * x", lambda x, y: x * y - 3 * x * x, (2.0, 0.5), None)]
    cases += [(name, fn, point, None) for name, fn, point in GRAPHS[1:]]
    for name, fn, point, expected in cases:
        what = f"grad(f)(*{point}) for f = {name}"
        grad_fn = _grad_fn(student_grad, fn)
        got = _student_grads(grad_fn, point, what)
        if expected is None:
            expected = jax.grad(fn, argnums=tuple(range(len(point))))(*point)
        want = np.array([float(g) for g in expected])
        if np.allclose(got, want, rtol=1e-4, atol=1e-5):
            again = _student_grads(grad_fn, point, what + ", called a second time")
            if not np.allclose(again, want, rtol=1e-4, atol=1e-5):
                raise Mistake(f"the second call of {what} gave {np.round(again, 4).tolist()}: "
                              f"grads add up, so make fresh Values on every call")
            continue
        if name == "x + y":
            raise Mistake(f"{what} gave {got.tolist()}, not (1, 1): make a Value per argument, "
                          f"run f on them, call backward on the result, return their .grad")
        raise Mistake(f"{what} gave {np.round(got, 4).tolist()}; jax.grad says "
                      f"{np.round(want, 4).tolist()} (do mul, tanh and backward pass their "
                      f"checks?)")
    return f"equals jax.grad(f, argnums=(0, 1, ...)) on {len(cases)} functions"
