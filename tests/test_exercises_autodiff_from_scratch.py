"""Lesson 03's checkers: each accepts the lesson's solution, says "not done" to the stub, and
catches the typical mistakes of a first autodiff engine with a hint that names the fix, and
blames an earlier exercise (not the one in front) when that is where the mistake is.

The reference engine is the library's (nn_from_scratch.autodiff); checkers refuse the library's
own objects, so it is handed in wrapped, as a student's own (`own`).
"""
import math
import re
import textwrap

import jax
import numpy as np
import pytest
from conftest import assert_result, own, stub

from nn_from_scratch.autodiff import Value, backward, grad, mul, tanh, topological_order
from nn_from_scratch.exercises import _fixtures
from nn_from_scratch.exercises import autodiff_from_scratch as check


def notebook(*sources):
    """The functions of ``sources`` as a notebook defines them: their globals are one namespace,
    where the library's engine stands in for every exercise the sources do not define."""
    ns = {"Value": Value, "mul": mul, "tanh": tanh, "topological_order": topological_order,
          "backward": backward, "math": math}
    for source in sources:
        exec(textwrap.dedent(source), ns)
    return ns


def test_mul():
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), (b.data, a.data), "*")),
                  "passed")
    assert_result(check.mul(mul), "failed", "library's own mul")
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
    # the case: the right rule, the wrong forward pass
    assert_result(check.mul(lambda a, b: Value(a.data / b.data, (a, b), (b.data, a.data))),
                  "failed", "data", "the forward pass computes a.data * b.data =")


def tanh_with(rule, forward=math.tanh):
    def wrong(a):
        t = forward(a.data)
        return Value(t, (a,), rule(a.data, t), "tanh")
    return wrong


def test_tanh():
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - t ** 2,))), "passed")
    # the library's tanh behind a def or a lambda (red team, round four, W1)
    assert_result(check.tanh(own(tanh)), "failed", "tanh")
    assert_result(check.tanh(lambda a: tanh(a)), "failed", "tanh")
    assert_result(check.tanh(stub), "not done")
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - x ** 2,))), "failed", "1 - x²",
                  "the output")
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - t,))), "failed", "squared")
    assert_result(check.tanh(tanh_with(lambda x, t: 1 - t ** 2)), "failed", "a tuple",
                  "mind the comma")
    assert_result(check.tanh(tanh_with(lambda x, t: (t,))), "failed", "jax.grad(jnp.tanh)")
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - t ** 2,), forward=lambda x: x)),
                  "failed", "data")
    assert_result(check.tanh(lambda a: math.tanh(a.data)), "failed", "no .data")


POST_ORDER = """
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
"""
PRE_ORDER = """
def topological_order(root):
    order, visited = [], set()

    def visit(v):
        if v not in visited:
            visited.add(v)
            order.append(v)  # before its parents: the reverse order
            for parent in v.parents:
                visit(parent)
    visit(root)
    return order
"""


def test_topological_order():
    assert_result(check.topological_order(notebook(POST_ORDER)["topological_order"]), "passed")
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
    assert_result(check.topological_order(notebook(PRE_ORDER)["topological_order"]), "failed",
                  "reversed", "root last")

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
    assert_result(check.topological_order(lambda root: iter(topological_order(root))), "failed",
                  "return a list")


BACKWARD = """
def backward(root):
    root.grad = 1.0
    for v in reversed(topological_order(root)):
        for parent, local in zip(v.parents, v.local_grads):
            {update}
"""


def backward_with(mistake):
    def wrong(root):
        if mistake != "no seed":
            root.grad = 1.0
        order = topological_order(root)
        for v in (order if mistake == "forward order" else reversed(order)):
            pairs = zip(v.parents, v.local_grads)
            if mistake == "first parent":  # a student's walk: v.parents[0] only
                pairs = list(pairs)[:1]
            elif mistake == "merged parents":  # the walk's dict(zip(...)): x * x keeps one x
                pairs = dict(pairs).items()
            for parent, local in pairs:
                if mistake == "assign":
                    parent.grad = local * v.grad
                elif mistake == "no chain":
                    parent.grad += local
                else:
                    parent.grad += local * v.grad
    return wrong


@pytest.mark.parametrize("mistake, hint", [
    ("assign", "+="), ("forward order", "reversed("), ("no chain", "local * v.grad"),
    ("no seed", "root.grad = 1.0"), ("first parent", "every parent"),
    ("merged parents", "x * x has x twice")])
def test_backward_mistakes(mistake, hint):
    assert_result(check.backward(backward_with(mistake)), "failed", hint)


def test_backward():
    assert_result(check.backward(notebook(BACKWARD.format(update="parent.grad += local * v.grad")
                                          )["backward"]), "passed")
    assert_result(check.backward(stub), "not done")

    def without_topological_order(root):
        raise AttributeError("'list' object has no attribute 'parents'")
    assert_result(check.backward(without_topological_order), "failed", "AttributeError")
    swapped = notebook(BACKWARD.format(update="parent.grad += local * v.grad"
                                       ).replace("zip(v.parents, v.local_grads)",
                                                 "zip(v.local_grads, v.parents)"))
    assert_result(check.backward(swapped["backward"]), "failed", "(parent, local) pairs")
    # a student's walk: the names of the pair swapped, the zip right
    named = notebook(BACKWARD.format(update="parent.grad += local * v.grad").replace(
        "for parent, local in", "for local, parent in"))
    assert_result(check.backward(named["backward"]), "failed", "(parent, local) pairs")
    # a student's walk (A23): += seeds the root, wrong once root.grad is not 0 (run twice)
    seeded = notebook(BACKWARD.format(update="parent.grad += local * v.grad").replace(
        "root.grad = 1.0", "root.grad += 1.0"))
    assert_result(check.backward(seeded["backward"]), "failed", "twice", "+=")
    # the walk's: intermediate grads set back to 0 once passed on (the root's too)
    freed = BACKWARD.format(update="parent.grad += local * v.grad\n        if v.parents:\n"
                                   "            v.grad = 0.0")
    assert_result(check.backward(notebook(freed)["backward"]), "failed", "in place")
    # the walk's: the grads returned in a dict, the Values' .grad never set
    returned = BACKWARD.format(update="grads[parent] = grads.get(parent, 0.0) + local * "
                                      "grads[v]").replace(
        "    root.grad = 1.0\n", "    grads = {root: 1.0}\n") + "    return grads\n"
    assert_result(check.backward(notebook(returned)["backward"]), "failed", "returned dict",
                  "store each grad in its Value")


def test_backward_blames_the_topological_order_it_uses():
    right = BACKWARD.format(update="parent.grad += local * v.grad")
    assert_result(check.backward(notebook(right)["backward"]), "passed")
    # the cases: 03.3 still a stub, or written in pre-order, under a right backward
    unfinished = notebook(right, "def topological_order(root):\n    raise NotImplementedError")
    assert_result(check.backward(unfinished["backward"]), "not done", "finish 03.3")
    assert_result(check.backward(notebook(right, PRE_ORDER)["backward"]), "failed",
                  "fix 03.3", "reversed")
    # a wrong backward over the right topological order is backward's own mistake
    assert_result(check.backward(notebook(BACKWARD.format(update="parent.grad = local * v.grad")
                                          )["backward"]), "failed", "+=")


GRAD = """
def grad(f):
    def grad_f(*numbers):
        values = [Value(number) for number in numbers]
        backward(f(*values))
        return tuple(v.grad for v in values)
    return grad_f
"""


def test_grad():
    assert_result(check.grad(notebook(GRAD)["grad"]), "passed", "8 functions")
    # the library's grad behind a def, called at once or by the function handed back (W1)
    assert_result(check.grad(own(grad)), "failed", "library's grad")
    assert_result(check.grad(lambda f: lambda *xs: grad(f)(*xs)), "failed", "library's grad")
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
    assert_result(check.grad(lambda f: lambda *xs: list(grad(f)(*xs))), "failed", "a list",
                  "tuple")


def test_grad_wants_a_tuple_and_never_names_the_checkers_insides():
    # the case: a bare number where a tuple is asked for (one argument)
    bare = own(lambda f: lambda *xs: grad(f)(*xs)[0] if len(xs) == 1 else grad(f)(*xs))
    assert_result(check.grad(bare), "failed", "tuple", "(14.0,)")

    def generator(f):
        def grad_f(*numbers):
            values = [Value(x) for x in numbers]
            backward(f(*values))
            return (v.grad for v in values)
        return grad_f
    assert_result(check.grad(generator), "failed", "generator", "tuple(v.grad")

    def one_argument(f):
        def grad_f(x):
            value = Value(x)
            backward(f(value))
            return (value.grad,)
        return grad_f
    result = check.grad(one_argument)
    assert_result(result, "failed", "same numbers as f")
    assert "<locals>" not in result.message and "<lambda>" not in result.message


def test_grad_blames_the_backward_it_uses():
    source = GRAD
    assert_result(check.grad(notebook(source)["grad"]), "passed")
    unfinished = notebook(source, "def backward(root):\n    raise NotImplementedError")
    assert_result(check.grad(unfinished["grad"]), "not done", "finish 03.4")
    wrong = notebook(source, BACKWARD.format(update="parent.grad = local * v.grad"))
    assert_result(check.grad(wrong["grad"]), "failed", "fix 03.4")


def test_the_new_value_records_its_op_for_printing():
    assert_result(check.mul(lambda a, b: Value(a.data * b.data, (a, b), (b.data, a.data))),
                  "failed", "op=\"*\"")
    assert_result(check.tanh(tanh_with(lambda x, t: (1 - t ** 2,), forward=math.tanh)), "passed")


def test_a_grad_that_hands_f_to_jax_grad_fails():
    """Red team: 03.5's grad written as jax.grad over f (no Value, no backward) passed the six
    functions that JAX can trace; |x| * y branches on x's number, which a Value has."""
    def by_jax(f):
        def grad_f(*numbers):
            out = jax.grad(f, argnums=tuple(range(len(numbers))))(*map(float, numbers))
            return tuple(float(g) for g in out)
        return grad_f

    assert_result(check.grad(by_jax), "failed")
    x, y = check._point(len(check.GRAD_CASES) - 1, check.GRAD_CASES)
    assert x < 0  # the branch that a kink makes
    np.testing.assert_allclose(check._right_grads(_fixtures.kinked, (x, y)), [-y, -x])


@pytest.mark.parametrize("name, fn, point", [case for case in check.GRAD_CASES + check.GRAPHS[:1]
                                             if case[1] is not _fixtures.kinked])
def test_the_checkers_reference_grads_are_jax_grads(name, fn, point):
    """The checkers take the right grads from the library's engine: they are jax.grad's."""
    want = jax.grad(fn, argnums=tuple(range(len(point))))(*point)
    np.testing.assert_allclose(check._right_grads(fn, point), [float(g) for g in want],
                               rtol=1e-5, atol=1e-6)


def test_the_library_behind_a_def_or_a_lambda_is_refused_in_class():
    """The walk's A20-A22: the grader refused them (the exercise cell's imports), class did not."""
    from nn_from_scratch import autodiff as ad

    def wrapped_mul(a, b):
        return ad.mul(a, b)

    def wrapped_backward(root):
        ad.backward(root)
    assert_result(check.mul(wrapped_mul), "failed", "mul")
    assert_result(check.topological_order(lambda root: ad.topological_order(root)), "failed",
                  "topological_order")
    assert_result(check.backward(wrapped_backward), "failed", "backward")


def test_the_library_values_doing_the_work_earn_nothing():
    """Red team, round twelve: the Values a check hands over are the library's, so their
    operators and methods run the library's rules; each exercise's rule, called by anyone while
    the answer runs, is refused (graded, these earned 5/5 with no note)."""
    import inspect

    def ordered_by_the_library(root):  # right, and the library's backward ran alongside
        inspect.getmodule(type(root)).backward(root)
        order = []

        def visit(v):
            if v not in order:
                for parent in v.parents:
                    visit(parent)
                order.append(v)
        visit(root)
        return order

    assert_result(check.mul(lambda a, b: a * b), "failed", "mul")
    assert_result(check.tanh(lambda a: a.tanh()), "failed", "tanh")
    assert_result(check.topological_order(ordered_by_the_library), "failed",
                  "topological_order")
    assert_result(check.backward(lambda root: inspect.getmodule(type(root)).grad(
        lambda: root)()), "failed", "backward")


def test_numpy_numbers_are_plain_numbers_not_values():
    """A student's walk (round twelve): local grads as NumPy scalars, which have a .data of
    their own, were refused as "holds Values"."""
    ns = notebook("""
        import numpy as np
        def mul(a, b):
            return Value(np.multiply(a.data, b.data), parents=(a, b),
                         local_grads=(np.float64(b.data), np.float64(a.data)), op="*")
        def tanh(a):
            t = np.tanh(a.data)
            return Value(t, parents=(a,), local_grads=(1 - t ** 2,), op="tanh")
        """)
    assert_result(check.mul(ns["mul"]), "passed")
    assert_result(check.tanh(ns["tanh"]), "passed")


def test_the_swapped_local_grads_are_shown_as_plain_numbers():
    """The walk's C13: the hint showed np.float64(2.0)."""
    result = check.mul(lambda a, b: Value(a.data * b.data, (a, b), (a.data, b.data), "*"))
    assert_result(result, "failed", "swapped")
    assert "np.float64" not in result.line, result.line


LESSON_VALUE = """
    class Value:
        def __init__(self, data, parents=(), local_grads=(), op=""):
            self.data = float(data)
            self.grad = 0.0
            self.parents = parents
            self.local_grads = local_grads
            self.op = op

    def as_value(x):
        return x if isinstance(x, Value) else Value(x)
    """


def test_answers_that_recognise_the_notebooks_own_values_pass():
    """A student's walk (round twelve): the lesson's own as_value, or isinstance(x, Value),
    in a right answer was refused with "float() argument must be ... not 'Value'", since the
    check handed over the library's Values. They are now of a class that is both."""
    ns = notebook(LESSON_VALUE, """
        def mul(a, b):
            a, b = as_value(a), as_value(b)
            return Value(a.data * b.data, parents=(a, b), local_grads=(b.data, a.data), op="*")

        def tanh(a):
            assert isinstance(a, Value), "not a Value"
            t = math.tanh(a.data)
            return Value(t, parents=(a,), local_grads=(1 - t ** 2,), op="tanh")
        """)
    assert_result(check.mul(ns["mul"]), "passed")
    assert_result(check.tanh(ns["tanh"]), "passed")
    # their operators are still the library's: a * b does the work of the library's mul
    ns = notebook(LESSON_VALUE, """
        def mul(a, b):
            return as_value(a) * b
        """)
    assert_result(check.mul(ns["mul"]), "failed", "mul")
    # a notebook whose Value is the library's own, or none at all: as before
    assert_result(check.mul(notebook("""
        def mul(a, b):
            return Value(a.data * b.data, parents=(a, b), local_grads=(b.data, a.data), op="*")
        """)["mul"]), "passed")


def test_a_float32_forward_value_passes_and_a_wrong_one_shows_where_it_differs():
    """The walk's jnp.tanh: t in float32, 1.7e-8 from math.tanh's, was refused with the two
    numbers printed alike. Now float32's precision passes; a value off by 3e-6 does not, and
    the hint prints both numbers as far as they differ."""
    ns = notebook("""
        import jax.numpy as jnp
        def tanh(a):
            t = float(jnp.tanh(a.data))
            return Value(t, parents=(a,), local_grads=(1 - t ** 2,), op="tanh")
        """)
    assert_result(check.tanh(ns["tanh"]), "passed")
    result = check.tanh(tanh_with(lambda x, t: (1 - t ** 2,),
                                  forward=lambda x: math.tanh(x) * (1 + 3e-6)))
    assert_result(result, "failed", "data")
    got, want = re.findall(r"\d\.\d{4,}", result.line)[-2:]  # (in either language)
    assert got != want, result.line


def test_a_walk_of_the_graph_that_keeps_the_notebooks_own_values_passes_03_3_and_03_4():
    """A student's walk (round fourteen): 03.3 and 03.4 built their graphs of the library's
    Values, so a topological order that kept ``isinstance(v, Value)`` nodes found none ("0 of
    the 2 Values"), and ``as_value`` wrapped them again. Every Value of the graphs handed over
    is now also the notebook's own."""
    ns = notebook(LESSON_VALUE, """
        def topological_order(root):
            seen = {}
            def go(v):
                if isinstance(v, Value) and id(v) not in seen:
                    for p in v.parents:
                        go(p)
                    seen[id(v)] = v
            go(root)
            return list(seen.values())

        def backward(root):
            root = as_value(root)
            root.grad = 1.0
            for v in reversed(topological_order(root)):
                for parent, local in zip(v.parents, v.local_grads):
                    if isinstance(parent, Value):
                        parent.grad += local * v.grad
        """)
    assert_result(check.topological_order(ns["topological_order"]), "passed", "5 graphs")
    assert_result(check.backward(ns["backward"]), "passed", "5 graphs")


def test_a_breadth_first_backward_is_refused_and_told_why():
    """The walk's breadth-first backward passed every graph until one had a Value used twice,
    once through a Value made later (b * (b + x), b = a*a: da 20 where it is 36)."""
    ns = notebook("""
        def backward(root):
            root.grad = 1.0
            queue, seen = [root], {id(root)}
            while queue:
                v = queue.pop(0)
                for p, local in zip(v.parents, v.local_grads):
                    p.grad += local * v.grad
                    if id(p) not in seen:
                        seen.add(id(p))
                        queue.append(p)
        """)
    assert_result(check.backward(ns["backward"]), "failed", "breadth-first",
                  "reversed(topological_order(root))")


def test_a_grad_that_reads_only_its_first_calls_numbers_is_refused():
    """The walk: a grad_f that made its Values at its first call (or kept its first result)
    passed a second call at the same numbers; the second call is now at other numbers."""
    for source in ("""
        def grad(f):
            values = []
            def grad_f(*numbers):
                if not values:
                    values.extend(Value(n) for n in numbers)
                for v in values:
                    v.grad = 0.0
                backward(f(*values))
                return tuple(v.grad for v in values)
            return grad_f
        """, """
        def grad(f):
            cache = {}
            def grad_f(*numbers):
                if "g" not in cache:
                    values = [Value(n) for n in numbers]
                    backward(f(*values))
                    cache["g"] = tuple(v.grad for v in values)
                return cache["g"]
            return grad_f
        """):
        assert_result(check.grad(notebook(source)["grad"]), "failed", "second time",
                      "fresh Values")


def test_grads_as_numpy_numbers_pass_03_5():
    """The walk: NumPy's numbers have a .data, and were refused as "returned Values"."""
    ns = notebook("""
        import numpy as np
        def grad(f):
            def grad_f(*numbers):
                values = [Value(n) for n in numbers]
                backward(f(*values))
                return tuple(np.array([v.grad for v in values]))
            return grad_f
        """)
    assert_result(check.grad(ns["grad"]), "passed")


def test_a_forward_pass_that_changes_its_inputs_is_refused():
    """The walk: 03.1 and 03.2 never looked at the inputs after the call."""
    ns = notebook("""
        def tanh(a):
            a.data = math.tanh(a.data)
            return Value(a.data, parents=(a,), local_grads=(1 - a.data ** 2,), op="tanh")

        def mul(a, b):
            a.grad += b.data
            b.grad += a.data
            return Value(a.data * b.data, parents=(a, b), local_grads=(b.data, a.data), op="*")
        """)
    assert_result(check.tanh(ns["tanh"]), "failed", "a.data", "new Value")
    assert_result(check.mul(ns["mul"]), "failed", "a.grad", "backward")
