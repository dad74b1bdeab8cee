"""Lesson 03's checkers: each accepts the lesson's solution, says "not done" to the stub, and
catches the typical mistakes of a first autodiff engine with a hint that names the fix.

The lesson's engine lives in the lesson, not in the library, so this file carries a copy of
it (the solution) and of its usual wrong versions.
"""
import math

import pytest
from conftest import assert_result, stub

from nn_from_scratch.exercises import autodiff_from_scratch as check


class Value:
    """The lesson's Value, with its operators calling the solutions below."""

    def __init__(self, data, parents=(), local_grads=(), op=""):
        self.data, self.grad = float(data), 0.0
        self.parents, self.local_grads, self.op = parents, local_grads, op

    def __add__(self, other):
        return add(self, as_value(other))

    def __mul__(self, other):
        return mul(self, as_value(other))

    __radd__, __rmul__ = __add__, __mul__

    def __sub__(self, other):
        return self + (-1.0) * other

    def tanh(self):
        return tanh(self)


def as_value(x):
    return x if isinstance(x, Value) else Value(x)


def add(a, b):
    return Value(a.data + b.data, (a, b), (1.0, 1.0), "+")


def mul(a, b):
    return Value(a.data * b.data, (a, b), (b.data, a.data), "*")


def tanh(a):
    t = math.tanh(a.data)
    return Value(t, (a,), (1 - t ** 2,), "tanh")


def topological_order(root):
    order, visited = [], set()

    def visit(v):
        if v not in visited:
            visited.add(v)
            for parent in v.parents:
                visit(parent)
            order.append(v)

    visit(root)
    return order


def backward(root):
    root.grad = 1.0
    for v in reversed(topological_order(root)):
        for parent, local in zip(v.parents, v.local_grads):
            parent.grad += local * v.grad


def grad(f):
    def grad_f(*numbers):
        values = [Value(x) for x in numbers]
        backward(f(*values))
        return tuple(v.grad for v in values)
    return grad_f


def test_mul():
    assert_result(check.mul(mul), "passed")
    assert_result(check.mul(stub), "not done")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), ..., "*")), "not done",
                  "`...`")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), (a.data, b.data))),
                  "failed", "swapped", "b.data")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), (1.0, 1.0))), "failed",
                  "rule of +")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), (b, a))), "failed",
                  "plain numbers", ".data")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (), (b.data, a.data))), "failed",
                  "parents should be (a, b)")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), (b.data,))), "failed",
                  "1 entries", "one per parent")
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (b, a), (a.data, b.data))),
                  "failed", "parents should be (a, b)")
    assert_result(check.mul(lambda a, b: a.data * b.data), "failed", "no .data")


def test_tanh():
    assert_result(check.tanh(tanh), "passed")
    assert_result(check.tanh(stub), "not done")

    def tanh_with(rule):
        def wrong(a):
            t = math.tanh(a.data)
            return Value(t, (a,), rule(a.data, t), "tanh")
        return wrong
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - x ** 2,))), "failed", "1 - x²",
                  "the output")
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - t,))), "failed", "squared")
    assert_result(check.tanh(tanh_with(lambda x, t: 1 - t ** 2)), "failed", "a tuple",
                  "mind the comma")
    assert_result(check.tanh(tanh_with(lambda x, t: (t,))), "failed", "jax.grad(jnp.tanh)")


def test_topological_order():
    assert_result(check.topological_order(topological_order), "passed")
    assert_result(check.topological_order(stub), "not done")

    def no_visited_set(root):
        order = []

        def visit(v):
            for parent in v.parents:
                visit(parent)
            order.append(v)
        visit(root)
        return order
    assert_result(check.topological_order(no_visited_set), "failed", "twice", "visited")

    def children_first(root):
        order, visited = [], set()

        def visit(v):
            if v not in visited:
                visited.add(v)
                order.append(v)  # before its parents: the reverse order
                for parent in v.parents:
                    visit(parent)
        visit(root)
        return order
    assert_result(check.topological_order(children_first), "failed", "reversed", "root last")

    def first_parent_only(root):
        order, v = [], root
        while True:
            order.append(v)
            if not v.parents:
                return order[::-1]
            v = v.parents[0]
    assert_result(check.topological_order(first_parent_only), "failed", "every parent")
    assert_result(check.topological_order(lambda root: [v.data for v in topological_order(root)]),
                  "failed", "not Values")


def backward_with(mistake):
    def wrong(root):
        if mistake != "no seed":
            root.grad = 1.0
        order = topological_order(root)
        for v in (order if mistake == "forward order" else reversed(order)):
            for parent, local in zip(v.parents, v.local_grads):
                if mistake == "assign":
                    parent.grad = local * v.grad
                elif mistake == "no chain":
                    parent.grad += local
                else:
                    parent.grad += local * v.grad
    return wrong


@pytest.mark.parametrize("mistake, hint", [
    ("assign", "+="), ("forward order", "reversed("), ("no chain", "local * v.grad"),
    ("no seed", "root.grad = 1.0")])
def test_backward_mistakes(mistake, hint):
    assert_result(check.backward(backward_with(mistake)), "failed", hint)


def test_backward():
    assert_result(check.backward(backward), "passed")
    assert_result(check.backward(stub), "not done")

    def without_topological_order(root):
        raise AttributeError("'list' object has no attribute 'parents'")
    assert_result(check.backward(without_topological_order), "failed", "AttributeError",
                  "topological_order")


def test_grad():
    assert_result(check.grad(grad), "passed", "5 functions")
    assert_result(check.grad(stub), "not done")

    def no_values(f):
        def grad_f(*numbers):
            out = f(*numbers)
            backward(out)
        return grad_f
    assert_result(check.grad(no_values), "failed", "wrap each number in a Value")

    def returns_values(f):
        def grad_f(*numbers):
            values = [Value(x) for x in numbers]
            backward(f(*values))
            return tuple(values)
        return grad_f
    assert_result(check.grad(returns_values), "failed", ".grad")

    def reused_values(f):
        values = {}

        def grad_f(*numbers):
            vs = [values.setdefault(i, Value(x)) for i, x in enumerate(numbers)]
            backward(f(*vs))
            return tuple(v.grad for v in vs)
        return grad_f
    assert_result(check.grad(reused_values), "failed", "fresh Values")
    assert_result(check.grad(lambda f: grad(f)(1.0, 2.0)), "failed", "FUNCTION")
    assert_result(check.grad(lambda f: lambda *xs: grad(f)(*xs)[:1]), "failed",
                  "one per argument")
