"""Checkers for lesson 10, augmentation with vmap: transforms chosen by a flag, batched with keys.

Every input is a small square image whose pixels all differ, made with NumPy,
so that each of the 8 turns and flips of the square gives a different array and
an output can be decoded back into the transforms that made it. The checkers
know the usual mistakes: a Python ``if`` on a traced flag, ``.T`` on an image
with channels, an image mapped by ``vmap`` although it is shared, a key used
twice (caught with ``jax.debug_key_reuse``), a probability that is ignored or
inverted, one key shared by every transform or every image.
"""
import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..i18n import N_, _
from . import _fixtures
from ._calls import Hints, call, generator, library_name, prng_key, wrapped
from ._compare import as_array, expect_shape, expect_vmap
from ._core import Mistake, exercise
from ._draws import draw_sizes
from ._hints import summary
from ._remote import transformed

LESSON = "10_augmentation"


def _images() -> tuple[np.ndarray, np.ndarray]:
    """A gray image (H, H) and a colour one (H', H', C), their sizes drawn (no two alike, none
    3, the lesson's), every pixel different and in an order of the draw's."""
    draw = generator(104)
    side, color_side, channels = draw_sizes(draw, 1, side=(4, 7), color_side=(4, 7),
                                            channels=(2, 4))[0].values()
    gray, color = (draw.permutation(np.arange(np.prod(shape), dtype=np.float32)).reshape(shape)
                   for shape in ((side, side), (color_side, color_side, channels)))
    return gray, color


# errors of code that is not lax.cond on JAX arrays, as hints (10.1 and 10.2)
_TRACED_HINTS: Hints = {
    "TracerArrayConversionError": N_("NumPy cannot work on a traced value (under jit and vmap "
                                     "the image and the flag are tracers): use jnp and "
                                     "lax.cond, not np"),
    "Pred must be a scalar": N_("lax.cond takes ONE flag first and the image last, "
                                "lax.cond(flag, if_true, if_false, img); a whole array of "
                                "flags (or the image) in the flag's place is refused"),
}


def _every_transform(img: np.ndarray) -> dict[tuple[bool, ...], np.ndarray]:
    """``{(rotate, flip_lr, flip_ud): image}``, applied in ``augment_image``'s order."""
    out: dict[tuple[bool, ...], np.ndarray] = {}
    for chosen in itertools.product((False, True), repeat=3):
        result = img
        for use, fn in zip(chosen, (lambda a: np.rot90(a, 1, axes=(0, 1)),
                                    lambda a: np.flip(a, 1), lambda a: np.flip(a, 0))):
            result = fn(result) if use else result
        out[chosen] = result
    return out


def _decode(images: np.ndarray, original: np.ndarray) -> np.ndarray:
    """``(n, 3)`` booleans: which transforms turn ``original`` into each of ``images``.

    Raises :class:`Mistake` naming the first image that is no turn or flip of ``original``.
    """
    lookup = {img.tobytes(): flags for flags, img in _every_transform(original).items()}
    decoded = []
    for i, img in enumerate(np.ascontiguousarray(images, dtype=original.dtype)):
        if img.tobytes() not in lookup:
            raise Mistake(_("image {i} of the output is not a quarter turn or flip of "
                            "the input: move pixels with rotate_90 and the flips, never "
                            "change them").format(i=i))
        decoded.append(lookup[img.tobytes()])
    return np.array(decoded)


@exercise(LESSON, 1, "random_transpose")
def random_transpose(student_fn: Any) -> str:
    jitted = transformed(student_fn, jax.jit)  # the flag traced, as in a training step
    gray, color = _images()
    for img in (gray, color):
        want = np.swapaxes(img, 0, 1)
        name = str(img.shape)
        what = _("random_transpose(img, True) for img of shape {name}").format(name=name)
        try:
            got = as_array(call(jitted, img, True, what=what, hints={
                **_TRACED_HINTS,
                ("cannot reshape", "branches must have equal output types",
                 "true_fun and false_fun output"): _(
                    "{what} failed: a size written as a number (range(3), reshape(3, 3, -1))? "
                    "This image is {name}: swap its axes 0 and 1 whatever their size, "
                    "jnp.swapaxes(img, 0, 1)").format(what=what, name=name),
                "out of bounds": _("{what} failed: a transpose written for one number of "
                                   "axes? Swap only H and W, axes 0 and 1, "
                                   "jnp.swapaxes(img, 0, 1), which works with and without "
                                   "channels").format(what=what)}))
        except Mistake as err:
            if isinstance(err.__cause__, jax.errors.TracerBoolConversionError):
                raise Mistake("under jit the flag is a tracer, which a Python `if` cannot read; "
                              "choose with lax.cond(flag, lambda im: jnp.swapaxes(im, 0, 1), "
                              "lambda im: im, img)") from None
            if img is color and "lax.cond" not in str(err):
                raise Mistake(_("{what} failed, although {gray} worked: swap only H and "
                                "W, jnp.swapaxes(img, 0, 1). img.T and jnp.transpose(img) reverse "
                                "ALL the axes, channels too, and swapaxes(-1, -2) moves the "
                                "channels").format(
                                  what=what, gray=gray.shape)) from None
            raise
        if img is color and got.shape == img.shape[::-1]:
            raise Mistake(_("returned shape {shape} for a {name} image: img.T and "
                            "jnp.transpose reverse ALL the axes; swap only H and W with "
                            "jnp.swapaxes(img, 0, 1)").format(shape=got.shape, name=name))
        unchanged = as_array(call(jitted, img, False,
                                    what=_("random_transpose(img, False) for shape "
                                           "{name}").format(
                                             name=name)))
        if np.array_equal(got, img) and np.array_equal(unchanged, want):
            raise Mistake("the branches are the wrong way round: lax.cond(flag, if_true, "
                          "if_false, img) runs its FIRST function when flag is True")
        if np.array_equal(got, img):
            raise Mistake(_("{what} returned the image unchanged: with flag True, swap "
                            "H and W").format(what=what))
        if np.array_equal(unchanged, want):
            raise Mistake("random_transpose(img, False) transposed the image: with flag False, "
                          "return it unchanged")
        expect_shape(got, want.shape, what)
        if not np.array_equal(got, want) or not np.array_equal(unchanged, img):
            raise Mistake(_("{what} is not the image with H and W swapped: "
                            "jnp.swapaxes(img, 0, 1)").format(what=what))
    flags = _flags(105)
    try:
        batch = np.asarray(transformed(student_fn, (jax.vmap, {"in_axes": (None, 0)}),
                                       jax.jit)(gray, flags))
    except Exception as err:
        raise Mistake(_("jax.vmap(random_transpose, in_axes=(None, 0)) raised {name}: "
                        "choose with lax.cond so that it works under vmap").format(
                          name=type(err).__name__)) from None
    want = np.stack([gray.T if f else gray for f in flags])
    if batch.shape != want.shape or not np.array_equal(batch, want):
        raise Mistake("under vmap, each flag must choose for its own image")
    return N_("swaps H and W (channels stay last) when the flag is True, under jit and vmap too")


def _flags(n: int) -> np.ndarray:
    """4 to 9 flags in an order of the draw's, both kinds among them."""
    draw = generator(n)
    count = int(draw.integers(4, 10))
    trues = int(draw.integers(1, count))
    return draw.permutation(np.arange(count) < trues)


@exercise(LESSON, 2, "one_to_many")
def one_to_many(student_fn: Any) -> str:
    if library_name(student_fn):  # random_rotate itself: say so before jit hides it
        call(student_fn, what="one_to_many")
    jitted = transformed(student_fn, jax.jit) if callable(student_fn) else student_fn
    for number, img in enumerate(_images()):
        flags = _flags(106 + number)
        what = _("one_to_many(img, flags) for img {name} and {count} flags").format(
            name=img.shape, count=len(flags))
        got = call(jitted, img, flags, what=what, hints={
            **_TRACED_HINTS,
            "TracerBoolConversionError": N_("a Python `if` (or `x if flag else y`) cannot read "
                                            "a traced flag: map random_rotate, which chooses "
                                            "with lax.cond, over the flags with jax.vmap"),
            "at least one non-None": N_("nothing was mapped: the flags are, one per output "
                                        "image, and the image is shared: "
                                        "jax.vmap(random_rotate, in_axes=(None, 0))"),
            ("Incompatible shapes", "broadcast"): N_("jnp.where(flags, ...) lines the flags up "
                                                     "with the image's pixels, not with copies "
                                                     "of it: map random_rotate over the flags, "
                                                     "jax.vmap(random_rotate, in_axes=(None, "
                                                     "0))"),
            ("inconsistent sizes", "vmap"): N_("vmap tried to map over the image as well as the "
                                               "flags: ONE image is shared by every flag, so "
                                               "give it in_axes None: jax.vmap(random_rotate, "
                                               "in_axes=(None, 0))")})
        got = expect_shape(got, (len(flags), *img.shape), what)
        want = np.stack([np.rot90(img, 1, axes=(0, 1)) if f else img for f in flags])
        if not np.array_equal(got, want):
            raise Mistake(_("{what}: image i must be the input turned a quarter if "
                            "flags[i], else unchanged").format(what=what))
    expect_vmap(student_fn, (img, flags), what, "jax.vmap(random_rotate, in_axes=(None, 0))")
    return N_("one image and n flags give n images, each turned or not by its own flag")


def _is_key_reuse(err: BaseException) -> bool:
    cause = err.__cause__ if isinstance(err, Mistake) else err
    return isinstance(cause, jax.errors.KeyReuseError)


def _buggy_epoch_flags(key: jax.Array, epochs: int, n: int, *, keep_new_key: bool) -> np.ndarray:
    """The two classic mistakes: draw with the key that is split again, or never advance it."""
    rows = []
    for _unused in range(epochs):
        new_key, subkey = jax.random.split(key)
        rows.append(jax.random.bernoulli(new_key if keep_new_key else subkey, shape=(n,)))
        if keep_new_key:
            key = new_key
    return np.asarray(jnp.stack(rows))


@exercise(LESSON, 3, "epoch_flags without a reused key")
def epoch_flags(student_fn: Any) -> str:
    # never the lesson's own (4 epochs, 8 images), and never as many epochs as images, so that
    # (n, epochs) is another shape than (epochs, n)
    draw = generator(107)
    epochs, n, seed = int(draw.choice([3, 5, 6, 7])), int(draw.choice([9, 10, 11, 12])), 10
    key = prng_key(seed)  # a fresh key object for every call: the checker marks it used
    what = f"epoch_flags(key, {epochs}, {n})"
    checked = wrapped(student_fn, _fixtures.checking_key_reuse)
    try:
        got = call(checked, key, epochs, n, what=what)
    except Mistake as err:
        if not _is_key_reuse(err):
            raise
        reused = _buggy_epoch_flags(prng_key(seed), epochs, n, keep_new_key=True)
        frozen = _buggy_epoch_flags(prng_key(seed), epochs, n, keep_new_key=False)
        plain = as_array(call(student_fn, prng_key(seed), epochs, n, what=what))
        if plain.shape == reused.shape and np.array_equal(plain, reused):
            raise Mistake("the bug is still there: you draw with `key`, and the next epoch "
                          "splits that same key again. Draw with subkey, keep key for "
                          "splitting: key, subkey = jax.random.split(key)") from None
        if (plain.shape == frozen.shape and np.array_equal(plain, frozen)) or (
                plain.ndim == 2 and all(np.array_equal(row, plain[0]) for row in plain)):
            raise Mistake("every epoch uses the same key, so every epoch draws the same "
                          "flags: keep the new key, key, subkey = jax.random.split(key)"
                          ) from None
        raise Mistake("a key was used twice (JAX's key-reuse checker raised "
                      "KeyReuseError): use each key once, either to draw or to split"
                      ) from None
    if not hasattr(got, "shape"):
        raise Mistake(_("{what} returned a {summary_got}, not one array: stack the "
                        "rows into an (epochs, n) array with jnp.stack(rows)").format(
                          what=what, summary_got=summary(got)))
    got = expect_shape(got, (epochs, n), what)
    if got.dtype != bool and not np.isin(got, (0, 1)).all():
        raise Mistake(_("{what} should hold flags (True/False, or 0/1); got values "
                        "such as {ravel}: draw them with jax.random.bernoulli").format(
                          what=what, ravel=got.ravel()[:3]))
    if all(np.array_equal(row, got[0]) for row in got):
        raise Mistake("every epoch has the same flags: draw each epoch's flags with a new "
                      "subkey")
    again = as_array(call(checked, prng_key(seed), epochs, n,
                            what=_("{what} again").format(what=what)))
    if not np.array_equal(again, got):
        raise Mistake("the same key gave different flags: draw only from the key you are "
                      "given (no np.random)")
    other = as_array(call(checked, prng_key(seed + 1), epochs, n,
                            what=_("{what} with another key").format(what=what)))
    if np.array_equal(other, got):
        raise Mistake("another key gave the same flags: draw from the key you are given")
    # Flags like epoch_flags_buggy's are True half the time. Of 45,000 or more, the fraction's
    # standard error is 0.0024 at most: 0.02 off is 8.5 of them (a right answer never fails),
    # and a p of 0.45 or 0.55 (walk 12: 0.45 passed one grading in four at a bound of 0.05)
    # is 12 of them beyond that (it always fails)
    many = (int(draw.integers(30, 41)), int(draw.integers(1500, 2501)))
    fraction = float(np.mean(as_array(call(student_fn, prng_key(seed + 2), *many,
                                           what=f"epoch_flags(key, {many[0]}, {many[1]})"))))
    if abs(fraction - 0.5) > 0.02:
        raise Mistake(_("with {epochs} epochs of {n} images, {fraction:.0%} of the flags "
                        "are True; like epoch_flags_buggy's, each is True with probability "
                        "0.5: jax.random.bernoulli(subkey, shape=(n,)), its p left at the "
                        "default").format(epochs=many[0], n=many[1], fraction=fraction))
    return N_("a new subkey per epoch, no key used twice (jax.debug_key_reuse agrees)")


@exercise(LESSON, 4, "augment_images_p")
def augment_images_p(student_fn: Any) -> str:
    # A batch for each p, of other sizes (so that a batch size or an image side written as a
    # number fails), each of enough images that a fraction is within 0.05 of p (4 standard
    # errors): copies of one square image (side, side) whose pixels all differ, in an order
    # of the draw's, so that its 8 turns and flips all differ
    source = generator(103)
    sizes = dict(zip((0.2, 0.7), draw_sizes(source, 2, n=(1800, 2400), side=(2, 6))))
    squares = {p: source.permutation(s["side"] ** 2).astype(np.float32).reshape(2 * [s["side"]])
               for p, s in sizes.items()}
    batches = {p: np.broadcast_to(squares[p], (s["n"], *squares[p].shape)).copy()
               for p, s in sizes.items()}  # (n, side, side)

    def draw(p: float, what: str) -> np.ndarray:
        """The student's batch for p, decoded: (n, 3) flags. Eager, not jitted: JAX compiles
        each operation once, so a second attempt (another function) compiles nothing."""
        try:
            checked = wrapped(student_fn, _fixtures.checking_key_reuse)
            images = batches[p]
            out = call(checked, jnp.asarray(images), prng_key(20), p, what=what, hints={
                ("cannot reshape", "Incompatible shapes"): _(
                    "{what}: an image side written as a number? The images here are {side} x "
                    "{side}, other than the lesson's: read the side from the image, "
                    "img.shape").format(what=what, side=images.shape[1]),
                "inconsistent sizes": _("{what}: vmap got a key for each of a number of images "
                                        "other than the batch's: a batch size written as a "
                                        "number? keys = jax.random.split(key, "
                                        "images.shape[0])").format(what=what)})
        except Mistake as err:
            if _is_key_reuse(err):
                raise Mistake("a key was used twice (JAX's key-reuse checker raised "
                              "KeyReuseError): split each image's key into three, one per "
                              "transform, and use each key once, to draw or to split"
                              ) from None
            raise
        return _decode(expect_shape(out, images.shape, what), squares[p])

    results = {p: draw(p, _("augment_images_p(images, key, {p}) for images of shape "
                            "{images_shape}").format(
                              p=p, images_shape=batches[p].shape)) for p in batches}
    if not any(flags.any() for flags in results.values()):
        raise Mistake("no image was turned or flipped: apply each transform when its flag, "
                      "jax.random.bernoulli(key, p), is True")
    if all(len({row.tobytes() for row in flags}) == 1 for flags in results.values()):
        raise Mistake("every image got the same transforms: give each image its own key, "
                      "keys = jax.random.split(key, len(images)), and vmap over them")
    for p, flags in results.items():
        fractions = flags.mean(axis=0)
        if np.all(flags[:, 0] == flags[:, 1]) and np.all(flags[:, 1] == flags[:, 2]):
            raise Mistake("the three transforms are always applied together: they share one "
                          "key. Split each image's key into three, one per transform")
        if np.all(np.abs(fractions - 0.5) < 0.05) and abs(p - 0.5) > 0.15:
            raise Mistake(_("with p = {p} each transform was applied to about half the "
                            "images ({round_fractions}): pass p on, "
                            "jax.random.bernoulli(key, p)").format(
                              p=p, round_fractions=np.round(fractions, 2)))
        if np.all(np.abs(fractions - (1 - p)) < 0.05):
            raise Mistake(_("with p = {p} the transforms were applied with probability "
                            "1 - p ({round_fractions}): bernoulli(key, p) is True with "
                            "probability p, so apply the transform when it is True").format(
                              p=p, round_fractions=np.round(fractions, 2)))
        if fractions[0] < 0.01:  # a half turn is both flips: it decodes as no turn at all
            raise Mistake(_("with p = {p} no image came out turned by a quarter: when the "
                            "rotate flag is True apply rotate_90, a QUARTER turn "
                            "(jnp.rot90(img) turns once; jnp.rot90(img, 2) is a half turn, "
                            "the same as both flips)").format(p=p))
        flipped_by_turn = 2 * p * (1 - p)  # a flag XOR the rotate flag: True that often
        if abs(fractions[0] - p) <= 0.05 and abs(flipped_by_turn - p) > 0.1 and np.any(
                np.abs(fractions[1:] - flipped_by_turn) <= 0.05):
            raise Mistake(_("with p = {p} about {p} of the images were rotated, but each "
                            "rotation came out with a flip of its own: rotate_90 should be "
                            "jnp.rot90(img), a quarter turn counter-clockwise (a clockwise "
                            "turn, jnp.rot90(img, -1), or a transpose, img.T, is that turn "
                            "and a flip)").format(p=p))
        if np.any(np.abs(fractions - p) > 0.05):
            raise Mistake(_("with p = {p} the fractions of rotated, left-right and "
                            "up-down flipped images are {round_fractions}; each should "
                            "be about {p}: draw each flag with "
                            "jax.random.bernoulli(its_key, p)").format(
                              p=p, round_fractions=np.round(fractions, 2)))
        # every pair of transforms, each against the fractions it was itself applied with
        # (a flag shared by two transforms, or tied to another's, shows; a p a little off
        # does not pass for dependence)
        names = (N_("rotated"), N_("flipped left-right"), N_("flipped up-down"))
        for i, j in ((0, 1), (0, 2), (1, 2)):
            both = np.mean(flags[:, i] & flags[:, j])
            independent = fractions[i] * fractions[j]
            if abs(both - independent) > 0.05:
                raise Mistake(_("with p = {p}, {both:.2f} of the images were both {first} "
                                "and {second}; independent choices give about "
                                "{independent:.2f}: draw each transform's flag from its own "
                                "key").format(p=p, both=both, first=_(names[i]),
                                              second=_(names[j]), independent=independent))
    if not np.array_equal(draw(0.2, "augment_images_p again"), results[0.2]):
        raise Mistake("the same key gave a different batch: draw only from the key you are given")
    rotated = results[0.2][:, 0].mean()
    return (_("each transform applied independently with probability p; with p = 0.2, "
              "{rotated:.1%} of {n} images were rotated").format(rotated=rotated,
                                                                  n=len(batches[0.2])))
