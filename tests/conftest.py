import os

# Tests never touch the internet: "auto" must not even try, and plots need no screen.
os.environ.setdefault("NN_FROM_SCRATCH_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from nn_from_scratch.parallel import simulate_cpu_devices  # noqa: E402

# Before any JAX computation: 4 simulated CPU devices for the data-parallel tests.
# Everything else runs on device 0 as usual.
simulate_cpu_devices(4)

from nn_from_scratch import init_network_params, load_dataset  # noqa: E402


def assert_trees_close(a, b, rtol=1e-5, atol=1e-6):
    """Two pytrees of arrays (on any devices) agree leaf by leaf, up to float rounding."""
    a_leaves, b_leaves = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(a_leaves) == len(b_leaves)
    for x, y in zip(a_leaves, b_leaves):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


@pytest.fixture(scope="session")
def digits():
    return load_dataset("digits")


@pytest.fixture
def small_params():
    """A 3-layer net on 64 inputs, He init (non-trivial activations)."""
    return init_network_params([64, 32, 16, 10], jax.random.key(0), init="he")


def stub(*args, **kwargs):
    """What every function exercise starts as in the student edition."""
    raise NotImplementedError


def assert_result(result, status, *fragments):
    """A checker's result has ``status`` and its message contains every fragment (a hint)."""
    assert result.status == status, result.line
    for fragment in fragments:
        assert fragment in result.message, result.line
    assert result.line.startswith({"passed": "✓", "failed": "✗", "not done": "…"}[status])


def own(fn):
    """The library's ``fn`` as a student's own function (checkers refuse the library's object)."""
    def students_version(*args, **kwargs):
        return fn(*args, **kwargs)
    return students_version
