"""Lesson 01's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix: above all, a key used twice."""
import jax
import jax.numpy as jnp
import numpy as np
from conftest import assert_result, stub

from nn_from_scratch.exercises import random_keys as check


def bar(key):
    return jax.random.uniform(key)


def baz(key):
    return jax.random.uniform(key)


def test_foo():
    def foo(key):
        bar_key, baz_key = jax.random.split(key)
        return bar(bar_key) + 2 * baz(baz_key)
    assert_result(check.foo(foo), "passed")

    def foo_three_keys(key):  # other subkeys of one split are fine too
        _, bar_key, baz_key = jax.random.split(key, 3)
        return bar(bar_key) + 2 * baz(baz_key)
    assert_result(check.foo(foo_three_keys), "passed")
    assert_result(check.foo(stub), "not done")

    # the classic: bar and baz draw with the same key
    assert_result(check.foo(lambda key: bar(key) + 2 * baz(key)), "failed", "same key", "split")

    def parent_reused(key):
        _, baz_key = jax.random.split(key)
        return bar(key) + 2 * baz(baz_key)
    assert_result(check.foo(parent_reused), "failed", "after you split it")

    def no_two(key):
        bar_key, baz_key = jax.random.split(key)
        return bar(bar_key) + baz(baz_key)
    assert_result(check.foo(no_two), "failed", "bar + baz")
    assert_result(check.foo(lambda key: np.random.uniform() + 2 * np.random.uniform()), "failed",
                  "np.random")
    assert_result(check.foo(lambda key: (bar(key), baz(key))), "failed", "one number")


def test_uniform_per_key():
    def reference(key, n):
        return jax.vmap(jax.random.uniform)(jax.random.split(key, n))
    assert_result(check.uniform_per_key(reference), "passed")

    def loop(key, n):
        return jnp.stack([jax.random.uniform(k) for k in jax.random.split(key, n)])
    assert_result(check.uniform_per_key(loop), "passed")
    assert_result(check.uniform_per_key(stub), "not done")

    def one_key(key, n):  # every draw with the same key
        return jnp.stack([jax.random.uniform(key) for _ in range(n)])
    assert_result(check.uniform_per_key(one_key), "failed", "all 3 numbers are equal",
                  "split(key, n)")
    assert_result(check.uniform_per_key(lambda key, n: jax.random.uniform(key, (n,))), "failed",
                  "ONE key")
    assert_result(check.uniform_per_key(lambda key, n: np.random.uniform(size=n)), "failed",
                  "different numbers")
    assert_result(check.uniform_per_key(lambda key, n: reference(key, n)[:, None]), "failed",
                  "shape (3, 1)")

    def parent_among_them(key, n):  # a second walk: the spent parent key beside its children
        keys = list(jax.random.split(key, n - 1)) + [key]
        return jnp.stack([jax.random.uniform(k) for k in keys])
    assert_result(check.uniform_per_key(parent_among_them), "failed", "`key` itself", "spent")


def reference_keys(key, num_steps):
    init_key, step_base = jax.random.split(key)
    return init_key, [jax.random.fold_in(step_base, step) for step in range(num_steps)]


def test_init_and_step_keys():
    assert_result(check.init_and_step_keys(reference_keys), "passed")

    def as_key_array(key, num_steps):
        init_key, step_base = jax.random.split(key)
        return init_key, jax.vmap(jax.random.fold_in, (None, 0))(step_base, jnp.arange(num_steps))
    assert_result(check.init_and_step_keys(as_key_array), "passed")
    assert_result(check.init_and_step_keys(stub), "not done")

    def collides(key, num_steps):  # split AND fold_in on the same key: step 0 == init_key
        init_key, _ = jax.random.split(key)
        return init_key, [jax.random.fold_in(key, step) for step in range(num_steps)]
    assert_result(check.init_and_step_keys(collides), "failed", "same key as step 0",
                  "fold_in(key, 0) equals split(key, n)[0]")

    def near_miss(key, num_steps):  # no collision among these, by luck of the indices
        init_key = jax.random.split(key)[0]
        return init_key, [jax.random.fold_in(key, step + 1) for step in range(num_steps)]
    assert_result(check.init_and_step_keys(near_miss), "failed", "EQUALS", "step_base")

    def init_not_split(key, num_steps):  # no split at all, yet the step keys are split(key)'s
        return jax.random.fold_in(key, 999), [jax.random.fold_in(key, s) for s in range(num_steps)]
    assert_result(check.init_and_step_keys(init_not_split), "failed", "hands out", "step_base")

    def split_not_folded(key, num_steps):  # one split, but the step keys are that split's keys
        keys = jax.random.split(key, num_steps + 1)
        return keys[0], list(keys[1:])
    assert_result(check.init_and_step_keys(split_not_folded), "failed", "step 0's key",
                  "fold_in(step_base, step)")

    def parent_as_init(key, num_steps):
        return key, [jax.random.fold_in(key, step) for step in range(num_steps)]
    assert_result(check.init_and_step_keys(parent_as_init), "failed", "`key` itself")

    def same_step_key(key, num_steps):
        init_key, step_base = jax.random.split(key)
        return init_key, [jax.random.fold_in(step_base, 0)] * num_steps
    assert_result(check.init_and_step_keys(same_step_key), "failed", "share a key")
    assert_result(check.init_and_step_keys(lambda key, n: (key, 3)), "failed", "JAX key")
    assert_result(check.init_and_step_keys(lambda key, n: reference_keys(key, n)[1]), "failed",
                  "a pair")


def test_two_normals():
    def reference(key, n):
        key_a, key_b = jax.random.split(key)
        return jax.random.normal(key_a, (n,)), jax.random.normal(key_b, (n,))
    assert_result(check.two_normals(reference), "passed", "correlation")
    assert_result(check.two_normals(lambda key, n: tuple(jax.random.normal(key, (2, n)))),
                  "passed")  # one draw of shape (2, n) is fine
    assert_result(check.two_normals(stub), "not done")

    def same_key(key, n):  # the bug this lesson is about
        return jax.random.normal(key, (n,)), jax.random.normal(key, (n,))
    assert_result(check.two_normals(same_key), "failed", "same numbers (correlation 1.00)",
                  "split")

    def parent_then_split(key, n):
        return jax.random.normal(key, (n,)), jax.random.normal(jax.random.split(key)[0], (n,))
    assert_result(check.two_normals(parent_then_split), "failed", "spent")

    def uniform(key, n):
        key_a, key_b = jax.random.split(key)
        return jax.random.uniform(key_a, (n,)), jax.random.uniform(key_b, (n,))
    assert_result(check.two_normals(uniform), "failed", "standard deviation")


def test_epoch_order():
    def reference(key, epoch, n):
        return jax.random.permutation(jax.random.fold_in(key, epoch), n)
    assert_result(check.epoch_order(reference), "passed")
    assert_result(check.epoch_order(stub), "not done")
    assert_result(check.epoch_order(lambda key, epoch, n: jax.random.permutation(key, n)),
                  "failed", "same order", "fold_in(key, epoch)")
    assert_result(check.epoch_order(lambda key, epoch, n: np.random.permutation(n)), "failed",
                  "another order")
    assert_result(check.epoch_order(lambda key, epoch, n: jnp.arange(n) + epoch), "failed",
                  "permutation of 0..19")


def test_uniform_per_key_wants_one_array_that_depends_on_key():
    keys = jax.random.split(jax.random.key(99), 20)
    assert_result(check.uniform_per_key(
        lambda key, n: [jax.random.uniform(k) for k in jax.random.split(key, n)]), "failed",
        "list of 3", "jnp.stack")
    assert_result(check.uniform_per_key(  # a key from elsewhere in the notebook, not `key`
        lambda key, n: jnp.stack([jax.random.uniform(k) for k in keys[:n]])), "failed",
        "another key gave the same numbers")


def test_init_and_step_keys_keeps_init_key_apart_from_the_folding():
    def init_is_the_base(key, num_steps):
        init_key, _ = jax.random.split(key)
        return init_key, [jax.random.fold_in(init_key, step) for step in range(num_steps)]
    assert_result(check.init_and_step_keys(init_is_the_base), "failed", "folded into init_key")

    def base_returned_as_init(key, num_steps):
        _, step_base = jax.random.split(key)
        return step_base, [jax.random.fold_in(step_base, step) for step in range(num_steps)]
    assert_result(check.init_and_step_keys(base_returned_as_init), "failed",
                  "folded into init_key")


def test_sizes_written_as_numbers_and_epochs_that_repeat_fail():
    """A student's walk of lesson 01: each check had one size, so the lesson's numbers typed
    in passed (split(key, 3), range(5), (1000,), permutation(..., 20)); and an order that
    repeats every other epoch passed, since only three equal orders were refused."""
    def three_keys(key, n):
        return jnp.stack([jax.random.uniform(k) for k in jax.random.split(key, 3)])

    def five_steps(key, num_steps):
        init_key, step_base = jax.random.split(key)
        return init_key, jnp.stack([jax.random.fold_in(step_base, s) for s in range(5)])

    def a_thousand(key, n):
        key_a, key_b = jax.random.split(key)
        return jax.random.normal(key_a, (1000,)), jax.random.normal(key_b, (1000,))

    def twenty(key, epoch, n):
        return jax.random.permutation(jax.random.fold_in(key, epoch), 20)

    def every_other(key, epoch, n):
        return jax.random.permutation(jax.random.fold_in(key, epoch % 2), n)
    for checker, answer in ((check.uniform_per_key, three_keys),
                            (check.init_and_step_keys, five_steps),
                            (check.two_normals, a_thousand), (check.epoch_order, twenty)):
        assert checker(answer).status == "failed", checker.__name__
    assert_result(check.epoch_order(every_other), "failed", "0", "2", "fold_in(key, epoch)")


def test_the_second_walks_answers_fail_with_a_hint():
    """A second walk of lesson 01: b as a's numbers rearranged, one permutation rolled by
    epoch, an order repeating every third epoch, and the keys returned for numbers."""
    def rearranged(key, n):
        a = jax.random.normal(key, (n,))
        return a, a[::-1]

    def rolled(key, epoch, n):
        return jnp.roll(jax.random.permutation(key, n), epoch)

    def every_third(key, epoch, n):
        return jax.random.permutation(jax.random.fold_in(key, epoch % 3), n)
    assert_result(check.two_normals(rearranged), "failed", "rearranged")
    assert_result(check.epoch_order(rolled), "failed", "rotated")
    assert_result(check.epoch_order(every_third), "failed", "fold_in(key, epoch)")
    assert_result(check.uniform_per_key(lambda key, n: jax.random.split(key, n)), "failed",
                  "keys themselves")


def test_n_numbers_from_one_split_key_fail():
    """A second walk: all n numbers drawn from one of the split keys passed."""
    assert_result(check.uniform_per_key(
        lambda key, n: jax.random.uniform(jax.random.split(key, n)[0], (n,))), "failed",
        "ONE of the keys split")
    assert_result(check.uniform_per_key(
        lambda key, n: jax.random.uniform(jax.random.split(key)[1], (n,))), "failed",
        "ONE of the keys split")
