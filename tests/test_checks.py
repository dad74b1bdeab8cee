"""The argument checks every layer shares, and the error types the command line relies on."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch._checks import (
    InputError,
    InputTypeError,
    check_choice,
    check_key,
    check_positive_int,
    check_step_size,
)


def test_error_types_keep_the_builtin_ones():
    assert issubclass(InputError, ValueError)
    assert issubclass(InputTypeError, InputError) and issubclass(InputTypeError, TypeError)


@pytest.mark.parametrize("key", [jax.random.key(0), jax.random.PRNGKey(0)])
def test_both_key_styles_pass(key):
    assert check_key(key) is key


@pytest.mark.parametrize("bad, shown", [(0, "int 0"), (jnp.zeros(2), "shape (2,)"),
                                        (jax.random.split(jax.random.key(0)), "shape (2,)")])
def test_non_keys_name_what_they_are(bad, shown):
    with pytest.raises(InputTypeError, match=rf"key must be a JAX PRNG key; got .*{shown[-4:]}"):
        check_key(bad)


@pytest.mark.parametrize("good", [0.1, 2, np.float32(0.5), np.int64(3), jnp.float32(0.2),
                                  np.array(0.3)])
def test_step_sizes_of_every_scalar_kind(good):
    assert check_step_size(good) is good


def test_step_size_under_jit_checks_only_what_it_can():
    @jax.jit
    def f(s):
        check_step_size(s)  # a tracer: value unknown, shape () fine
        return s * 2
    assert float(f(0.5)) == 1.0


@pytest.mark.parametrize("bad, error", [(True, InputTypeError), (np.bool_(True), InputTypeError),
                                        (np.ones(2), InputTypeError), ("1", InputTypeError),
                                        (0, InputError), (-1.0, InputError),
                                        (float("nan"), InputError)])
def test_bad_step_sizes(bad, error):
    with pytest.raises(error, match="step_size"):
        check_step_size(bad)


def test_positive_ints():
    assert check_positive_int(np.int32(3), "epochs") == 3
    for bad in (True, 2.0, "3", None):
        with pytest.raises(InputTypeError, match="epochs must be a whole number >= 1"):
            check_positive_int(bad, "epochs")
    with pytest.raises(InputError, match="got 0"):
        check_positive_int(0, "epochs")


def test_choices_are_listed():
    assert check_choice("he", "init", ("normal", "he")) == "he"
    with pytest.raises(InputError, match="init must be one of 'normal', 'he'; got 'xavier'"):
        check_choice("xavier", "init", ("normal", "he"))
