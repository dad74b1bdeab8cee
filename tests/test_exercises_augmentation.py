"""Lesson 10's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
import pytest
from conftest import assert_result, stub
from jax import lax

from nn_from_scratch.augment import (
    augment_images,
    flip_left_right,
    flip_up_down,
    identity,
    random_rotate,
    rotate_90,
)
from nn_from_scratch.exercises import augmentation as check


def reference_transpose(img, flag):
    return lax.cond(flag, lambda im: jnp.swapaxes(im, 0, 1), lambda im: im, img)


def test_random_transpose():
    assert_result(check.random_transpose(reference_transpose), "passed")
    assert_result(check.random_transpose(stub), "not done", "NotImplementedError")

    def where_version(img, flag):  # also right: jnp.where computes both and picks
        return jnp.where(flag, jnp.swapaxes(img, 0, 1), img)
    assert_result(check.random_transpose(where_version), "passed")

    def python_if(img, flag):
        return jnp.swapaxes(img, 0, 1) if flag else img
    assert_result(check.random_transpose(python_if), "failed", "Python `if`", "lax.cond")

    def dot_t(img, flag):
        return lax.cond(flag, lambda im: im.T, lambda im: im, img)
    assert_result(check.random_transpose(dot_t), "failed", "ALL the axes", "swapaxes")

    def swapped(img, flag):
        return lax.cond(flag, lambda im: im, lambda im: jnp.swapaxes(im, 0, 1), img)
    assert_result(check.random_transpose(swapped), "failed", "wrong way round")

    def always(img, flag):
        return jnp.swapaxes(img, 0, 1)
    assert_result(check.random_transpose(always), "failed", "with flag False")

    def rotates(img, flag):
        return random_rotate(img, flag)
    assert_result(check.random_transpose(rotates), "failed", "swapaxes")


def test_one_to_many():
    assert_result(check.one_to_many(jax.vmap(random_rotate, in_axes=(None, 0))), "passed")
    assert_result(check.one_to_many(...), "not done", "`...`")
    assert_result(check.one_to_many(stub), "not done")

    def loop(img, flags):  # the right numbers, but the exercise is vmap (as 06's are)
        return jnp.stack([random_rotate(img, f) for f in flags])
    assert_result(check.one_to_many(loop), "failed", "without jax.vmap")
    for wrong in (jax.vmap(random_rotate), jax.vmap(random_rotate, in_axes=(0, 0))):
        assert_result(check.one_to_many(wrong), "failed", "in_axes=(None, 0)")

    def flips(img, flags):
        return jax.vmap(lambda f: lax.cond(f, flip_left_right, identity, img))(flags)
    assert_result(check.one_to_many(flips), "failed", "turned a quarter")


def reference_epoch_flags(key, epochs, n):
    rows = []
    for _ in range(epochs):
        key, subkey = jax.random.split(key)
        rows.append(jax.random.bernoulli(subkey, shape=(n,)))
    return jnp.stack(rows)


def test_epoch_flags():
    assert_result(check.epoch_flags(reference_epoch_flags), "passed", "debug_key_reuse")
    assert_result(check.epoch_flags(stub), "not done")

    def other_order(key, epochs, n):  # also right: which half is drawn from does not matter
        rows = []
        for _ in range(epochs):
            subkey, key = jax.random.split(key)
            rows.append(jax.random.bernoulli(subkey, shape=(n,)))
        return jnp.stack(rows)
    assert_result(check.epoch_flags(other_order), "passed")

    def split_once(key, epochs, n):  # also right
        return jnp.stack([jax.random.bernoulli(k, shape=(n,))
                          for k in jax.random.split(key, epochs)])
    assert_result(check.epoch_flags(split_once), "passed")

    def seed_bug(key, epochs, n):  # the seed tutorial's bug
        rows = []
        for _ in range(epochs):
            key, subkey = jax.random.split(key)
            rows.append(jax.random.bernoulli(key, shape=(n,)))
        return jnp.stack(rows)
    assert_result(check.epoch_flags(seed_bug), "failed", "bug is still there", "subkey")

    def frozen(key, epochs, n):
        rows = []
        for _ in range(epochs):
            _, subkey = jax.random.split(key)
            rows.append(jax.random.bernoulli(subkey, shape=(n,)))
        return jnp.stack(rows)
    assert_result(check.epoch_flags(frozen), "failed", "same flags", "keep the new key")

    def no_split(key, epochs, n):
        return jnp.stack([jax.random.bernoulli(key, shape=(n,)) for _ in range(epochs)])
    assert_result(check.epoch_flags(no_split), "failed", "same flags")

    def a_list(key, epochs, n):  # the rows never stacked into one array
        return list(reference_epoch_flags(key, epochs, n))
    assert_result(check.epoch_flags(a_list), "failed", "items, not one array", "jnp.stack")

    def transposed(key, epochs, n):
        return reference_epoch_flags(key, epochs, n).T
    assert_result(check.epoch_flags(transposed), "failed", "has shape", "expected (")


def reference_p(images, key, p, keys=None, turn=rotate_90):
    """10.4's answer; keys: a count of image keys written in; turn: rotate_90's stand-in."""
    def one(img, k):
        rotate_key, lr_key, ud_key = jax.random.split(k, 3)
        img = lax.cond(jax.random.bernoulli(rotate_key, p), turn, identity, img)
        img = lax.cond(jax.random.bernoulli(lr_key, p), flip_left_right, identity, img)
        return lax.cond(jax.random.bernoulli(ud_key, p), flip_up_down, identity, img)
    return jax.vmap(one)(images, jax.random.split(key, keys or images.shape[0]))


def with_flags(images, key, rotate, lr, ud):
    """Apply the transforms where the (n,) flags say so."""
    def one(img, r, h, v):
        img = lax.cond(r, rotate_90, identity, img)
        img = lax.cond(h, flip_left_right, identity, img)
        return lax.cond(v, flip_up_down, identity, img)
    return jax.vmap(one)(images, rotate, lr, ud)


@pytest.mark.parametrize("wrong, hints", [
    (lambda images, key, p: augment_images(images, key), ("about half", "bernoulli(key, p)")),
    (lambda images, key, p: reference_p(images, key, 1 - p), ("1 - p",)),
    (lambda images, key, p: images, ("no image was turned",)),
    (lambda images, key, p: with_flags(images, key,
                                       *[jax.random.bernoulli(key, p, (len(images),))] * 3),
     ("applied together", "one per transform")),
    (lambda images, key, p: reference_p(images[:1], key, p).repeat(len(images), axis=0),
     ("same transforms", "its own key")),
    (lambda images, key, p: images + 1, ("not a quarter turn or flip",)),
])
def test_augment_images_p_mistakes(wrong, hints):
    assert_result(check.augment_images_p(wrong), "failed", *hints)


def test_augment_images_p():
    assert_result(check.augment_images_p(reference_p), "passed", "probability p")
    assert_result(check.augment_images_p(stub), "not done")

    def rotate_and_lr_share_a_key(images, key, p):
        keys = jax.random.split(key, (2, len(images)))
        rotate = jax.vmap(lambda k: jax.random.bernoulli(k, p))(keys[0])
        ud = jax.vmap(lambda k: jax.random.bernoulli(k, p))(keys[1])
        return with_flags(images, key, rotate, rotate, ud)
    assert_result(check.augment_images_p(rotate_and_lr_share_a_key), "failed",
                  "both rotated and flipped", "its own key")


def shares_a_key(which):
    """reference_p with one transform drawing from another's key, or from the image's own."""
    def augment(images, key, p):
        def one(img, k):
            keys = dict(zip(("rotate", "lr", "ud"), jax.random.split(k, 3)), image=k)
            rotate, lr, ud = (keys[which.get(name, name)] for name in ("rotate", "lr", "ud"))
            img = lax.cond(jax.random.bernoulli(rotate, p), rotate_90, identity, img)
            img = lax.cond(jax.random.bernoulli(lr, p), flip_left_right, identity, img)
            return lax.cond(jax.random.bernoulli(ud, p), flip_up_down, identity, img)
        return jax.vmap(one)(images, jax.random.split(key, images.shape[0]))
    return augment


@pytest.mark.parametrize("which", [{"rotate": "image"}, {"ud": "lr"}, {"ud": "rotate"}])
def test_augment_images_p_key_used_twice(which):
    assert_result(check.augment_images_p(shares_a_key(which)), "failed", "KeyReuseError",
                  "one per transform")


def test_walk_nine_sizes_and_flags_are_drawn():
    """A student's walk of lesson 10: the images were always 3x3, the flags always
    [T, F, F, T, T], epoch_flags always (key, 4, 8): sizes typed in, and flags ignored, passed."""
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs

    def loop_of_three(img, flag):
        return lax.cond(flag, lambda im: jnp.stack([im[:, i] for i in range(3)]), identity, img)

    def reshaped(img, flag):
        return lax.cond(flag, lambda im: jnp.swapaxes(im.reshape(3, 3, -1), 0, 1).reshape(im.shape),
                        identity, img)

    def five_flags(img, flags):
        return jnp.stack([random_rotate(img, flags[i]) for i in range(5)])

    def flags_ignored(img, flags):
        return jax.vmap(random_rotate, in_axes=(None, 0))(img, jnp.array([True, False, False,
                                                                          True, True]))

    def typed(epochs_typed, n_typed):
        def epoch_flags(key, epochs, n):
            rows = []
            for _ in range(epochs_typed or epochs):
                key, subkey = jax.random.split(key)
                rows.append(jax.random.bernoulli(subkey, shape=(n_typed or n,)))
            return jnp.stack(rows)
        return epoch_flags
    for seed in (None, 1, 2, 3):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            for answer in (loop_of_three, reshaped):
                assert check.random_transpose(answer).status == "failed"
            for answer in (five_flags, flags_ignored):
                assert check.one_to_many(answer).status == "failed"
            for answer in (typed(4, None), typed(None, 8)):
                assert check.epoch_flags(answer).status == "failed"
            assert_result(check.random_transpose(reference_transpose), "passed")
            assert_result(check.one_to_many(jax.vmap(random_rotate, in_axes=(None, 0))),
                          "passed")
            assert_result(check.epoch_flags(reference_epoch_flags), "passed")


def test_walk_nine_hints():
    """A student's walk of lesson 10: raw errors, and hints that named another mistake."""
    import numpy as np
    assert_result(check.random_transpose(
        lambda img, flag: lax.cond(flag, lambda im: jnp.transpose(im, (1, 0, 2)), identity, img)),
        "failed", "one number of axes", "jnp.swapaxes(img, 0, 1)")
    assert_result(check.random_transpose(
        lambda img, flag: np.where(flag, np.swapaxes(img, 0, 1), img)), "failed",
        "NumPy cannot work on a traced value")
    assert_result(check.random_transpose(
        lambda img, flag: lax.cond(img, lambda im: jnp.swapaxes(im, 0, 1), identity, flag)),
        "failed", "lax.cond(flag, if_true, if_false, img)")
    assert_result(check.random_transpose(
        lambda img, flag: lax.cond(flag, lambda im: jnp.swapaxes(im, -1, -2), identity, img)),
        "failed", "swapaxes(-1, -2)")
    assert_result(check.one_to_many(
        lambda img, flags: jnp.stack([rotate_90(img) if f else img for f in flags])), "failed",
        "Python `if`")
    assert_result(check.one_to_many(jax.vmap(random_rotate, in_axes=(None, None))), "failed",
                  "nothing was mapped")
    assert_result(check.one_to_many(lambda img, flags: jnp.where(flags, rotate_90(img), img)),
                  "failed", "jnp.where(flags, ...)")
    assert_result(check.one_to_many(random_rotate), "failed", "library's own random_rotate")

    assert_result(check.augment_images_p(lambda images, key, p: reference_p(
        images, key, p, keys=2000)), "failed", "batch size written as a number")


def one_flag_for_two(first, second):
    """10.4 with two of the three transforms driven by one flag (a copy-paste slip)."""
    def answer(images, key, p):
        def one(img, k):
            flags = [jax.random.bernoulli(part, p) for part in jax.random.split(k, 3)]
            flags[second] = flags[first]
            img = lax.cond(flags[0], rotate_90, identity, img)
            img = lax.cond(flags[1], flip_left_right, identity, img)
            return lax.cond(flags[2], flip_up_down, identity, img)
        return jax.vmap(one)(images, jax.random.split(key, images.shape[0]))
    return answer


@pytest.mark.parametrize("first, second, names", [
    (0, 2, ("rotated", "flipped up-down")), (1, 2, ("flipped left-right", "flipped up-down"))])
def test_walk_nine_every_pair_of_transforms_is_independent(first, second, names):
    """A student's walk of lesson 10: only (rotate, left-right) was tested, so the up-down flip
    on the rotation's or the left-right flip's flag passed."""
    assert_result(check.augment_images_p(one_flag_for_two(first, second)), "failed", *names,
                  "its own key")


def test_walk_nine_a_p_a_little_off_is_not_called_dependent():
    def off_by(delta):
        return lambda images, key, p: reference_p(images, key, p + delta)
    for seed in range(1, 6):
        from nn_from_scratch.exercises._calls import fresh_inputs
        with fresh_inputs(seed):
            result = check.augment_images_p(off_by(0.04))
            assert "independent choices" not in result.message, result.line


def test_walk_ten_epoch_flags_transposed_fails_on_every_draw():
    """A third walk: an (n, epochs) output passed when the draw made epochs equal to n."""
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs
    for seed in (None, *range(1, 8)):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.epoch_flags(
                lambda key, epochs, n: reference_epoch_flags(key, epochs, n).T).status == "failed"


def test_walk_ten_one_to_many_wants_vmap():
    """A third walk: a Python loop over the flags, no vmap, passed 10.2 ("with jax.vmap")."""
    assert_result(check.one_to_many(lambda img, flags: jnp.stack(
        [random_rotate(img, flags[i]) for i in range(flags.shape[0])])), "failed",
        "without jax.vmap")


def test_walk_ten_random_transpose_typed_sizes_get_a_hint():
    """A third walk: range(3) and reshape(3, 3, -1) ended in raw cond and reshape errors."""
    assert_result(check.random_transpose(lambda img, flag: lax.cond(
        flag, lambda im: jnp.stack([im[:, i] for i in range(3)]), identity, img)), "failed",
        "a size written as a number")
    assert_result(check.random_transpose(lambda img, flag: lax.cond(  # other numbers: the
        flag, lambda im: jnp.swapaxes(im.reshape(3, 3, -1), 0, 1).reshape(im.shape),  # hint
        identity, img)), "failed", "jnp.swapaxes(img, 0, 1)")  # shows the whole fix


def test_augment_images_p_draws_its_image_side():
    """The audit of issue 36: 10.4's images were always 2 x 2, so a turn written for that side
    (pixels moved by hand) passed; each p now has images of another drawn side."""
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs

    def two_by_two_turn(img):  # a quarter turn written out for a 2 x 2 image only
        return jnp.array([[img[0, 1], img[1, 1]], [img[0, 0], img[1, 0]]])

    def typed_side(images, key, p):
        return reference_p(images, key, p, turn=two_by_two_turn)
    for seed in (None, 1, 2, 3):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            assert check.augment_images_p(typed_side).status == "failed"
            assert check.augment_images_p(reference_p).status == "passed"


def test_augment_images_p_a_half_turn_is_named():
    """Walk 9b: rotate_90 written as jnp.rot90(img, 2), a half turn (both flips), got the
    generic "fractions ... should be about p"."""
    def half_turn(images, key, p):
        return reference_p(images, key, p, turn=lambda im: jnp.rot90(im, 2))
    assert_result(check.augment_images_p(half_turn), "failed", "QUARTER turn", "half turn")


def test_epoch_flags_wants_a_fair_coin():
    """Walk 10: flags drawn with p = 0.1 (or any p far from the default) passed 10.3; a large
    call now measures the fraction, far enough from its bound that the verdict never flips."""
    import contextlib

    from nn_from_scratch.exercises._calls import fresh_inputs

    def with_p(p):
        def answer(key, epochs, n):
            rows = []
            for _unused in range(epochs):
                key, subkey = jax.random.split(key)
                rows.append(jax.random.bernoulli(subkey, p, shape=(n,)))
            return jnp.stack(rows)
        return answer
    for seed in (None, 1, 2, 3):
        with fresh_inputs(seed) if seed else contextlib.nullcontext():
            for p in (0.1, 0.4, 0.45, 0.55, 0.65):  # walk 12: 0.45 passed on some draws
                assert_result(check.epoch_flags(with_p(p)), "failed", "probability 0.5")
            assert_result(check.epoch_flags(with_p(0.5)), "passed")


def test_augment_images_p_mapped_over_indices():
    """Walk 11: the lesson's answer mapped over indices (images[i], keys[i] inside the vmap)
    met NumPy images and ended in a raw TracerArrayConversionError; the check hands JAX's."""
    def over_indices(images, key, p):
        keys = jax.random.split(key, images.shape[0])

        def one(i):
            rotate_key, lr_key, ud_key = jax.random.split(keys[i], 3)
            img = lax.cond(jax.random.bernoulli(rotate_key, p), rotate_90, identity, images[i])
            img = lax.cond(jax.random.bernoulli(lr_key, p), flip_left_right, identity, img)
            return lax.cond(jax.random.bernoulli(ud_key, p), flip_up_down, identity, img)
        return jax.vmap(one)(jnp.arange(images.shape[0]))
    assert_result(check.augment_images_p(over_indices), "passed")


@pytest.mark.parametrize("turn", [lambda im: jnp.rot90(im, -1), lambda im: im.T])
def test_augment_images_p_a_turn_the_other_way_is_named(turn):
    """Walk 11: a clockwise turn or a transpose in place of rotate_90 was told to draw each
    flag with bernoulli(its_key, p), though the flags were right."""
    def answer(images, key, p):
        return reference_p(images, key, p, turn=turn)
    assert_result(check.augment_images_p(answer), "failed", "jnp.rot90(img)", "a flip")


def test_augment_images_p_a_side_written_in_gets_a_hint():
    """Walk 11: a reshape to the side of the walk's own images ended in a raw error."""
    def four_by_four(images, key, p):
        return reference_p(images.reshape(-1, 4, 4), key, p)
    assert_result(check.augment_images_p(four_by_four), "failed", "side written as a number")


def test_one_to_many_with_float_flags_is_used():
    """Walk 13: flags made floats and compared with 0.5 inside the vmap were called unused
    (a change of 1.5 f + 0.25 kept 0 and 1 on their sides of 0.5)."""
    assert_result(check.one_to_many(lambda img, flags: jax.vmap(
        lambda f: jnp.where(f > 0.5, rotate_90(img), img))(jnp.asarray(flags, jnp.float32))),
        "passed")
