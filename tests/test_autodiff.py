"""The scalar reverse-mode engine of lesson 03 (nn_from_scratch.autodiff), against jax.grad."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import autodiff
from nn_from_scratch.autodiff import Value, backward, grad, topological_order


def tanh(z):
    """tanh for a Value and for a JAX number alike."""
    return z.tanh() if isinstance(z, Value) else jnp.tanh(z)


FUNCTIONS = [
    (lambda x: x * x, (3.0,)),
    (lambda x, y: (x * y + x) * (x * y), (2.0, -1.5)),             # x * y used twice
    (lambda x, y: x * y - 3 * x * x + 2, (0.5, 4.0)),
    (lambda x1, x2, w1, w2, b: tanh(x1 * w1 + x2 * w2 + b), (2.0, 0.0, -3.0, 1.0, 0.7)),
    (lambda x, w: tanh(tanh(tanh(x * w + x) * w + x) * w + x), (0.5, -1.2)),
]


@pytest.mark.parametrize("f, point", FUNCTIONS)
def test_grad_equals_jax_grad(f, point):
    # The engine computes in Python floats (double precision), and so does the reference: in
    # float32, 1 - tanh(-5.3)**2 loses about three digits to cancellation, more or fewer with
    # XLA's optimisation level (conftest.py compiles at level 0).
    with jax.enable_x64(True):
        want = jax.grad(f, argnums=tuple(range(len(point))))(*point)
    np.testing.assert_allclose(grad(f)(*point), [float(g) for g in want], rtol=1e-9, atol=1e-12)
    assert float(f(*[Value(x) for x in point]).data) == pytest.approx(float(f(*point)), rel=1e-5)


def test_the_docstring_example():
    assert grad(lambda x, y: x * y + x)(2.0, 3.0) == (4.0, 2.0)


def test_local_grads_are_numbers_computed_in_the_forward_pass():
    a, b = Value(2.0), Value(-3.0)
    assert (a * b).local_grads == (-3.0, 2.0) and (a * b).parents == (a, b)
    assert (a + b).local_grads == (1.0, 1.0) and (a + b).data == -1.0
    t = a.tanh()
    assert t.parents == (a,) and t.local_grads == pytest.approx((1 - np.tanh(2.0) ** 2,))
    assert (2 * a).data == 4.0 and (a - 1).data == 1.0  # constants become Values


def test_topological_order_lists_every_value_once_after_its_parents():
    x, y = Value(2.0), Value(3.0)
    shared = x * y
    root = (shared + x) * shared
    order = topological_order(root)
    assert len(order) == len({id(v) for v in order}) == 5  # x, y, x*y, x*y + x, root
    position = {id(v): i for i, v in enumerate(order)}
    assert all(position[id(p)] < position[id(v)] for v in order for p in v.parents)
    assert order[-1] is root


def test_backward_sums_over_uses_and_grads_add_up_across_passes():
    x = Value(3.0)
    y = x * x
    backward(y)
    assert (x.grad, y.grad) == (6.0, 1.0)
    backward(y)  # a second pass on the same graph adds to the grads (reset them between steps)
    assert x.grad == 12.0


def test_the_rules_build_values_of_their_inputs_class():
    class Other(Value):
        """Another class with Value's constructor, like lesson 03's own Value."""

    a, b = Other(2.0), Other(0.5)
    for out in (autodiff.add(a, b), autodiff.mul(a, b), autodiff.tanh(a)):
        assert type(out) is Other
