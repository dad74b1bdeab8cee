"""Reverse-mode automatic differentiation of scalar code, micrograd-sized: lesson 03's engine.

A :class:`Value` is one number of a computation that remembers how it was made:
the Values it was computed from (``parents``) and the local derivatives
d(self)/d(parent) (``local_grads``), computed in the forward pass while the
numbers are at hand. :func:`backward` walks the graph in reverse
:func:`topological_order` from the root and applies the chain rule, summing
over every use of a Value; :func:`grad` wraps it all up like ``jax.grad``::

    >>> grad(lambda x, y: x * y + x)(2.0, 3.0)      # (y + 1, x)
    (4.0, 2.0)

The rules (:func:`add`, :func:`mul`, :func:`tanh`) build their result with the
class of their input, ``type(a)``: they serve any class with Value's
constructor and attributes, so lesson 03's own ``Value`` (which the student
completes) goes on with them where an exercise is not done yet. One Python
object per number: a teaching engine, not one for arrays (``jax.grad`` is).
"""
import math
from collections.abc import Callable
from typing import Any

__all__ = ["Value", "add", "as_value", "backward", "grad", "mul", "tanh", "topological_order"]


class Value:
    """One number in a computation, and how it was made.

    Attributes:
      data: the number (a Python float).
      grad: d(root)/d(self) for the root of the last :func:`backward`; 0.0 until then.
      parents: the Values this one was computed from (none for an input or a constant).
      local_grads: d(self)/d(parent), one plain number per parent.
      op: ``"+"``, ``"*"``, ``"tanh"``, or ``""`` for an input: for printing.
    """

    def __init__(self, data: float, parents: tuple["Value", ...] = (),
                 local_grads: tuple[float, ...] = (), op: str = "") -> None:
        self.data = float(data)
        self.grad = 0.0
        self.parents = parents
        self.local_grads = local_grads
        self.op = op

    def __repr__(self) -> str:
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"

    # a + b runs a.__add__(b) and 2 * a runs a.__rmul__(2): each operator calls its rule
    def __add__(self, other: Any) -> "Value":
        return add(self, as_value(other))

    def __mul__(self, other: Any) -> "Value":
        return mul(self, as_value(other))

    __radd__ = __add__
    __rmul__ = __mul__

    def __sub__(self, other: Any) -> "Value":
        return self + (-1.0) * other

    def tanh(self) -> "Value":
        return tanh(self)


def as_value(x: Any) -> Value:
    """``x`` if it is a Value already; otherwise a constant Value with no parents."""
    return x if isinstance(x, Value) else Value(x)


def add(a: Value, b: Value) -> Value:
    """a + b, remembering d(a+b)/da = 1 and d(a+b)/db = 1."""
    return type(a)(a.data + b.data, parents=(a, b), local_grads=(1.0, 1.0), op="+")


def mul(a: Value, b: Value) -> Value:
    """a * b, remembering d(a*b)/da = b and d(a*b)/db = a (their numbers, not Values)."""
    return type(a)(a.data * b.data, parents=(a, b), local_grads=(b.data, a.data), op="*")


def tanh(a: Value) -> Value:
    """tanh(a), remembering d tanh(a)/da = 1 - t², written with the output t = tanh(a)."""
    t = math.tanh(a.data)
    return type(a)(t, parents=(a,), local_grads=(1 - t ** 2,), op="tanh")


def topological_order(root: Value) -> list[Value]:
    """Every Value ``root`` depends on, root included: each once, each after its parents.

    Depth first: a Value is appended once all its parents are in. Values hash by
    identity, so equal numbers in different Values stay apart.
    """
    order: list[Value] = []
    visited: set[Value] = set()

    def visit(v: Value) -> None:
        if v not in visited:
            visited.add(v)
            for parent in v.parents:
                visit(parent)
            order.append(v)  # after all its parents

    visit(root)
    return order


def backward(root: Value) -> None:
    """Fill in ``v.grad = d(root)/d(v)`` for every Value ``v`` that ``root`` depends on.

    The chain rule, one Value at a time: walking the topological order in reverse
    (children before parents), each Value passes ``local * v.grad`` to each parent,
    and a parent used several times sums what it receives. Grads add up, so run
    it once per graph (or reset them first, as ``zero_grad`` does elsewhere).
    """
    root.grad = 1.0                                # d(root)/d(root)
    for v in reversed(topological_order(root)):    # each grad complete before it is passed on
        for parent, local in zip(v.parents, v.local_grads):
            parent.grad += local * v.grad          # summed over every use of parent


def grad(f: Callable[..., Value]) -> Callable[..., tuple[float, ...]]:
    """A function giving the gradient of ``f`` for every argument, like ``jax.grad(f, argnums)``.

    ``grad(f)(x1, x2, ...)`` wraps each number in a fresh :class:`Value`, runs ``f``
    on them, runs :func:`backward` on the result and returns the inputs' grads, a
    tuple with one float per argument.
    """
    def grad_f(*numbers: float) -> tuple[float, ...]:
        values = [Value(number) for number in numbers]  # fresh Values: grads start at 0
        backward(f(*values))
        return tuple(v.grad for v in values)
    return grad_f
