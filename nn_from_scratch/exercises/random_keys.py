"""Checkers for lesson 01, random keys: every one of them is about using a key once.

They recompute what the student's code should have drawn and recognise the usual
slips by their numbers: two draws from the same key (equal numbers, ``3 * u`` for
``u + 2 * u``), a key used after it was split, ``fold_in`` into a key that was also
split (``fold_in(key, i)`` equals ``split(key, n)[i]`` with today's default
generator), and hidden global state such as ``np.random``.
"""
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from ._calls import call, generator, prng_key
from ._compare import as_array, expect_shape
from ._core import Mistake, exercise
from ._hints import summary

LESSON = "01_random_keys"


def _scalar(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise Mistake(_("{what} should return one number; got {summary_value}").format(
                          what=what, summary_value=summary(value))) from None


def _key_data(keys: Any, what: str) -> np.ndarray:
    """The raw bits of a key or of many keys: shape (..., 2) for the default generator."""
    dtype = getattr(keys, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return np.asarray(jax.random.key_data(keys))
    if isinstance(keys, (list, tuple)) and keys:
        return np.stack([_key_data(k, what) for k in keys])
    array = np.asarray(keys) if dtype is not None else None
    if array is not None and array.dtype == np.uint32 and array.shape[-1:] == (2,):
        return array  # legacy keys from jax.random.PRNGKey
    raise Mistake(_("{what} should be a JAX key (from jax.random.split or fold_in); got "
                    "{summary_keys}").format(what=what, summary_keys=summary(keys)))


def _draws(key: jax.Array, n: int) -> list[float]:
    """One uniform number from each key of split(key, n): for n = 2, the very operations a
    right foo has just run (compiled already), so checking a right answer costs no compile."""
    return [float(jax.random.uniform(k)) for k in jax.random.split(key, n)]


@functools.partial(jax.jit, static_argnums=2)
def _handed_out(key: jax.Array, init_key: jax.Array, num_steps: int) -> tuple[Any, Any]:
    """The raw bits of split(key, 64), and of fold_in(init_key, step) for every step."""
    folded = jax.vmap(jax.random.fold_in, (None, 0))(init_key, jnp.arange(num_steps))
    return jax.random.key_data(jax.random.split(key, 64)), jax.random.key_data(folded)


@exercise(LESSON, 1, "foo with split keys")
def foo(student_foo: Any) -> str:
    for seed in (0, 1, 2):
        key = prng_key(seed)
        what = _("foo(jax.random.key({seed}))").format(seed=seed)
        got = _scalar(call(student_foo, key, what=what), what)
        if _scalar(call(student_foo, key, what=what), what) != got:
            raise Mistake("foo gave two different results for the same key: draw only from the "
                          "key you are given (no np.random, no other hidden state)")
        u_key = float(jax.random.uniform(key))
        if np.isclose(got, 3 * u_key, atol=1e-6):
            raise Mistake("bar and baz drew with the same key, so foo(key) is 3 times ONE random "
                          "number, not bar + 2 * baz of two. Split first: bar_key, baz_key = "
                          "jax.random.split(key)")
        u, v = _draws(key, 2)
        if np.isclose(got, u + 2 * v, atol=1e-6) or np.isclose(got, v + 2 * u, atol=1e-6):
            continue
        draws = _draws(key, 3)  # split(key, 2)'s keys, and one more (any two of them will do)
        if any(np.isclose(got, u_key + 2 * d, atol=1e-6) or np.isclose(got, d + 2 * u_key,
                                                                          atol=1e-6)
               for d in draws):
            raise Mistake("one of bar and baz drew with `key` itself after you split it: a key "
                          "you split is spent; draw only with the subkeys")
        pairs = [(a, b) for i, a in enumerate(draws) for j, b in enumerate(draws) if i != j]
        if any(np.isclose(got, a + 2 * b, atol=1e-6) for a, b in pairs):
            continue
        if any(np.isclose(got, a + b, atol=1e-6) for a, b in pairs):
            raise Mistake("that is bar + baz; foo is bar(bar_key) + 2 * baz(baz_key)")
        raise Mistake(_("{what} = {got:.6g}; expected bar(bar_key) + 2 * baz(baz_key) "
                        "with bar_key, baz_key = jax.random.split(key)").format(
                          what=what, got=got))
    return N_("bar and baz draw from two subkeys of one split: same key, same foo; no reuse")


def _sizes(number: int, first: int, low: int, high: int) -> tuple[int, int]:
    """A check's two sizes: ``first`` (the lesson's, compiled already), then one drawn in
    [low, high] (``generator(number)``), so that a size written as a number passes one case
    at most (a student's walk: ``split(key, 3)``, ``range(5)``, ``(1000,)``)."""
    return first, int(generator(number).integers(low, high + 1))


@exercise(LESSON, 2, "one key per draw")
def uniform_per_key(student_fn: Any) -> str:
    # 3 keys first: the split the lesson made just before (compiled)
    return [_uniform_per_key(student_fn, n, prng_key(7)) for n in _sizes(72, 3, 4, 9)][0]


def _uniform_per_key(student_fn: Any, n: int, key: Any) -> str:
    what = f"uniform_per_key(key, {n})"
    out = call(student_fn, key, n, what=what)
    dtype = getattr(out, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        raise Mistake(_("{what} returned the {n} keys themselves; return one number drawn "
                        "from each, jax.random.uniform(k) for each k of "
                        "jax.random.split(key, n)").format(what=what, n=n))
    if isinstance(out, (list, tuple)):
        raise Mistake(_("{what} returned a {name} of {len_out} numbers; return ONE "
                        "array of shape ({n},): jnp.stack(the list)").format(
                          what=what, name=type(out).__name__, len_out=len(out), n=n))
    got = expect_shape(out, (n,), what)
    if np.allclose(got, got[0]):
        raise Mistake(_("all {n} numbers are equal: every draw used the same key. Split "
                        "key into n keys, one per draw: keys = jax.random.split(key, n)").format(
                          n=n))
    if any(np.allclose(got, np.asarray(jax.random.uniform(k, (n,))))
           for k in [*jax.random.split(key, n), *jax.random.split(key)]):
        # a second walk: uniform(split(key, n)[0], (n,)), all n numbers from one split key
        raise Mistake("these are n numbers drawn from ONE of the keys split from `key`: draw "
                      "one number from EACH of the n keys, jax.random.uniform(k) for k in "
                      "jax.random.split(key, n)")
    if np.allclose(got, np.asarray(jax.random.uniform(key, (n,)))):
        raise Mistake("these are n numbers drawn from ONE key: fine for one array of noise, but "
                      "here we want one number from each of n keys, jax.random.split(key, n): "
                      "the pattern that gives every example, step or device its own key")
    if np.any(np.isclose(got, float(jax.random.uniform(key)), rtol=0, atol=1e-7)):
        # a second walk: list(jax.random.split(key, n - 1)) + [key], the parent among its keys
        raise Mistake("one of the numbers was drawn from `key` itself, beside keys split from "
                      "it: a key is spent once it is split. Draw every number from the n keys "
                      "of jax.random.split(key, n)")
    if not np.array_equal(got, as_array(call(student_fn, key, n, what=what))):
        raise Mistake("the same key gave different numbers: draw only from keys split from "
                      "`key` (no np.random, no other hidden state)")
    other = as_array(call(student_fn, prng_key(8), n, what=what))
    if np.array_equal(other, got):
        raise Mistake("another key gave the same numbers: they must come from `key`, split "
                      "into n keys with jax.random.split(key, n)")
    if not (np.all((got >= 0) & (got < 1)) and len(np.unique(got)) == n):
        raise Mistake(_("expected {n} different numbers in [0, 1) from "
                        "jax.random.uniform; got values from {min:.3g} to {max:.3g}, "
                        "{len_unique_got} different").format(
                          n=n, min=got.min(), max=got.max(), len_unique_got=len(np.unique(got))))
    return _("{n} numbers in [0, 1), one from each of {n} keys (mean {mean:.2f})").format(
               n=n, mean=got.mean())


@exercise(LESSON, 3, "keys for init and steps")
def init_and_step_keys(student_fn: Any) -> str:
    return [_init_and_step_keys(student_fn, prng_key(2024), num_steps)
            for num_steps in _sizes(73, 5, 6, 12)][0]


def _init_and_step_keys(student_fn: Any, key: Any, num_steps: int) -> str:
    what = f"init_and_step_keys(key, {num_steps})"
    out = call(student_fn, key, num_steps, what=what)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise Mistake(_("return a pair (init_key, step_keys); got {summary_out}").format(
                          summary_out=summary(out)))
    init = _key_data(out[0], "init_key")
    steps = _key_data(out[1], "step_keys")
    if init.shape != (2,):
        raise Mistake(_("init_key should be ONE key; got {size} keys").format(
                          size=init.size // 2))
    if steps.shape != (num_steps, 2):
        raise Mistake(_("expected {num_steps} step keys for num_steps={num_steps}; got "
                        "{size}").format(num_steps=num_steps, size=steps.size // 2))
    rows = [tuple(row) for row in steps]
    if len(set(rows)) < num_steps:
        raise Mistake("some steps share a key: fold a different number into the base for each "
                      "step, jax.random.fold_in(step_base, step)")
    parent = tuple(_key_data(key, "key"))
    if tuple(init) == parent or parent in rows:
        raise Mistake("a key you return is `key` itself, which you also derive keys from: give "
                      "each job its own key, init_key, step_base = jax.random.split(key)")
    if tuple(init) in rows:
        step = rows.index(tuple(init))
        raise Mistake(_("init_key is the same key as step {step}'s: with today's JAX, "
                        "fold_in(key, {step}) equals split(key, n)[{step}], so folding "
                        "into a key you also split collides. Split first, init_key, "
                        "step_base = jax.random.split(key), and fold only into step_base").format(
                          step=step))
    split_bits, folded_bits = _handed_out(key, out[0], num_steps)
    if {tuple(row) for row in np.asarray(folded_bits)} & set(rows):
        raise Mistake("the step keys are folded into init_key itself, the key that will draw the "
                      "initial weights: a key is used for one thing. Split `key` into two, "
                      "init_key, step_base = jax.random.split(key), and fold into step_base only")
    # split(key, n) starts with the keys of split(key, m) for m < n: 64 keys cover every split
    # of key into up to 64, and so fold_in(key, i) for i < 64.
    family = {tuple(row) for row in np.asarray(split_bits)}
    handed_out = [step for step, row in enumerate(rows) if row in family]
    if handed_out:
        step = handed_out[0]
        raise Mistake(_("step {step}'s key is one that split(key, ...) hands out, so it "
                        "repeats a key of any split of `key` (remember: fold_in(key, i) "
                        "EQUALS split(key, n)[i] for every n > i). Fold only into a key "
                        "kept for folding: init_key, step_base = jax.random.split(key), "
                        "then jax.random.fold_in(step_base, step)").format(step=step))
    again = call(student_fn, key, num_steps, what=what)
    if not np.array_equal(_key_data(again[1], "step_keys"), steps):
        raise Mistake("the same key gave different step keys: derive them from `key` only")
    return (_("1 init key and {num_steps} step keys, all different, folded into a key "
              "kept for folding").format(num_steps=num_steps))


@exercise(LESSON, 4, "two independent normal vectors")
def two_normals(student_fn: Any) -> str:
    return [_two_normals(student_fn, n, prng_key(11)) for n in _sizes(74, 1000, 1200, 2400)][0]


def _two_normals(student_fn: Any, n: int, key: Any) -> str:
    what = f"two_normals(key, {n})"
    out = call(student_fn, key, n, what=what)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise Mistake(_("return a pair of vectors (a, b); got {summary_out}").format(
                          summary_out=summary(out)))
    a = expect_shape(out[0], (n,), "a")
    b = expect_shape(out[1], (n,), "b")
    correlation = float(np.corrcoef(a, b)[0, 1])
    if np.allclose(a, b):
        raise Mistake(_("a and b are the same numbers (correlation {correlation:.2f}): "
                        "both were drawn with the same key. Split it: key_a, key_b = "
                        "jax.random.split(key)").format(correlation=correlation))
    if np.array_equal(np.sort(a), np.sort(b)):  # a student's walk: a[::-1], roll, sort
        raise Mistake("b holds a's very numbers, rearranged: not an independent draw. Draw b "
                      "from a key of its own: key_a, key_b = jax.random.split(key)")
    direct = np.asarray(jax.random.normal(key, (n,)))
    children = [np.asarray(jax.random.normal(k, (n,))) for k in jax.random.split(key)]
    if any((np.allclose(u, direct) and any(np.allclose(v, c) for c in children))
           for u, v in ((a, b), (b, a))):
        raise Mistake("one vector was drawn with `key` itself and the other from a key split "
                      "from it: a key is spent once used, for a draw or for a split. Split "
                      "first, and draw both from the subkeys")
    for name, v in (("a", a), ("b", b)):
        if not (abs(v.mean()) < 0.15 and 0.85 < v.std() < 1.15):
            raise Mistake(_("{name} has mean {mean:.2f} and standard deviation "
                            "{std:.2f}; standard normal draws (jax.random.normal) have "
                            "0 and 1").format(name=name, mean=v.mean(), std=v.std()))
    if abs(correlation) > 0.15:
        raise Mistake(_("a and b are correlated ({correlation:+.2f}): independent draws "
                        "from two keys are not").format(correlation=correlation))
    again = call(student_fn, key, n, what=what)
    if not np.array_equal(np.asarray(again[0]), a):
        raise Mistake("the same key gave different vectors: draw only from `key` and its subkeys")
    return _("two standard normal vectors from two keys, correlation {correlation:+.3f}").format(
               correlation=correlation)


@exercise(LESSON, 5, "a new order every epoch")
def epoch_order(student_fn: Any) -> str:
    return [_epoch_order(student_fn, n, prng_key(5)) for n in _sizes(75, 20, 24, 40)][0]


def _epoch_order(student_fn: Any, n: int, key: Any) -> str:
    orders = []
    for epoch in range(4):  # 4: an order that repeats every 3rd epoch shows too
        what = f"epoch_order(key, {epoch}, {n})"
        order = expect_shape(call(student_fn, key, epoch, n, what=what), (n,), what)
        if sorted(order.tolist()) != list(range(n)):
            raise Mistake(_("{what} should be a permutation of 0..{n} "
                            "(jax.random.permutation(k, n)); got {summary_order}").format(
                              what=what, n=n - 1, summary_order=summary(order)))
        orders.append(order)
    if np.array_equal(orders[0], orders[1]) and np.array_equal(orders[1], orders[2]):
        raise Mistake("every epoch got the same order: all epochs shuffled with the same key. "
                      "Derive one key per epoch: jax.random.fold_in(key, epoch)")
    same = next(((a, b) for a in range(4) for b in range(a + 1, 4)
                 if np.array_equal(orders[a], orders[b])), None)
    if same:  # a student's walk: fold_in(key, epoch % 2) repeats every other epoch
        raise Mistake(_("epochs {a} and {b} got the same order: each epoch needs a key of its "
                        "own, jax.random.fold_in(key, epoch) with the epoch itself").format(
                            a=same[0], b=same[1]))
    if any(np.array_equal(orders[b], np.roll(orders[0], shift)) for b in range(1, 4)
           for shift in range(1, n)):  # a student's walk: one permutation, rolled by epoch
        raise Mistake("the epochs' orders are one order rotated: draw a new permutation each "
                      "epoch, jax.random.permutation(jax.random.fold_in(key, epoch), n)")
    again = call(student_fn, key, 1, n, what=_("epoch_order(key, 1, {n}) again").format(n=n))
    if not np.array_equal(np.asarray(again), orders[1]):
        raise Mistake("the same key and epoch gave another order: an epoch's order must follow "
                      "from (key, epoch) alone, so a run can be repeated or resumed")
    other = call(student_fn, prng_key(6), 1, n, what=_("epoch_order with another key"))
    if np.array_equal(np.asarray(other), orders[1]):
        raise Mistake("another key gave the same order: shuffle with a key derived from `key`")
    return N_("a different order each epoch, the same one again for the same (key, epoch)")
