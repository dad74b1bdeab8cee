"""How a check draws its inputs: the sizes, and the values where the wrong way breaks.

Every checker draws the sizes of its inputs as well as their values, from the
generator it is handed (:func:`._calls.generator`: the same in class, fresh for
each grading), so that no answer right for one shape only passes::

    for s in draw_sizes(generator(140), 3, d=(2, 9), t=(3, 8), d_v=(2, 6)):
        query, keys = source.normal(size=s["d"]), source.normal(size=(s["t"], s["d"]))

Across a check's cases every size takes another value (a size written as a
number, ``jnp.sqrt(4)`` for ``jnp.sqrt(query.shape[0])``, is right for one case
at most), and within a case no two sizes are equal (an axis swapped, or an
answer right only for square shapes, gets another shape).

Sizes are not enough where a wrong way differs from the right one only in
its rounding: a softmax that does not subtract the largest score, or a layer
norm with the wrong eps. :func:`extreme_scores` and :func:`with_variance` make
the inputs where those break at any draw, so that a check's verdict on an
answer never depends on the draw.
"""
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["EXP_LIMIT", "draw_sizes", "extreme_scores", "labelled_batch", "layer_sizes",
           "network", "with_variance"]

EXP_LIMIT = 709.79  # exp overflows above this in float64 (log of its largest); float32: 88.72
_TRIES = 1000


def draw_sizes(source: np.random.Generator, cases: int, *, apart: bool = True,
               keep: Callable[[dict[str, int]], bool] | None = None,
               **ranges: tuple[int, int]) -> list[dict[str, int]]:
    """Sizes for ``cases`` cases of a check: one dict of ``{name: size}`` per case.

    Args:
      source: the check's generator (``generator(n)``); the same one draws the same sizes.
      cases: how many cases (dicts) to draw.
      apart: no two sizes of one case are equal (``t != d``), so that a swapped axis or a
        square-only answer is seen; ``False`` where two sizes may coincide.
      keep: a condition every case meets, for sizes that follow from others:
        ``keep=lambda s: s["t"] != s["heads"] * s["d_k"]``.
      **ranges: each size's name and its range ``(low, high)``, both ends included,
        e.g. ``d=(2, 9)``.

    Returns:
      ``[{"d": 5, "t": 3}, {"d": 2, "t": 7}, ...]``: each size takes ``cases`` different
      values, one per case, so no size is constant across the cases and no two cases share
      every size. Sizes that follow from others (``d = heads * d_k``) are the caller's.

    Raises:
      ValueError: a range holds fewer than ``cases`` sizes, or the ranges are too narrow for
        ``apart`` (a checker's own mistake, met when it is written).
    """
    for name, (low, high) in ranges.items():
        if high - low + 1 < cases:
            raise ValueError(f"draw_sizes: {name}=({low}, {high}) holds {high - low + 1} sizes, "
                             f"fewer than the {cases} cases that each need another one; "
                             f"widen the range")
    for _attempt in range(_TRIES):
        columns = {name: source.choice(np.arange(low, high + 1), size=cases, replace=False)
                   for name, (low, high) in ranges.items()}
        drawn = [{name: int(column[i]) for name, column in columns.items()}
                 for i in range(cases)]
        if all((not apart or len(set(case.values())) == len(case))
               and (keep is None or keep(case)) for case in drawn):
            return drawn
    raise ValueError(f"draw_sizes: found no {cases} cases whose sizes all differ (apart) and "
                     f"that keep what keep asks, within ranges {ranges}; widen them, or pass "
                     f"apart=False")


def extreme_scores(source: np.random.Generator, size: int, *, near: int = 2,
                   high: bool = True) -> np.ndarray:
    """``size`` scores (float32) beyond what ``exp`` holds, in float32 and float64 alike.

    ``near`` of them (at least 2, so that the right softmax is no one-hot) lie within 4 of
    the largest, which is drawn in [750, 1000] (``high``) or in [-1000, -750]; the others lie
    2300 to 3000 below it. In a softmax that subtracts the largest score, nothing overflows:
    the far scores get weight 0 and the near ones share it. Without that subtraction, exp
    overflows to inf (or, ``high=False``, every exp is 0) and the answer is NaN; subtracting
    the mean or the smallest score instead overflows too (the largest lies at least
    ``EXP_LIMIT`` above both, as long as ``near <= size - near``). Positions are shuffled.
    """
    if not 2 <= near <= size - near:
        raise ValueError(f"extreme_scores: near={near} of size={size}; need 2 <= near <= "
                         f"size - near, so that the mean lies far below the largest")
    top = source.uniform(750.0, 1000.0) * (1 if high else -1)
    offsets = np.concatenate([[0.0], source.uniform(0.0, 4.0, size=near - 1),
                              source.uniform(2300.0, 3000.0, size=size - near)])
    return source.permutation(top - offsets).astype(np.float32)


def with_variance(source: np.random.Generator, size: int, variance: float,
                  centre: float = 0.0) -> np.ndarray:
    """A vector ``(size,)`` (float32) whose variance (``jnp.var``, dividing by ``size``) is
    ``variance`` (to float32 rounding) and whose mean is ``centre``, the pattern drawn.

    Small variances are where eps matters: ``(x - mean) / sqrt(var + eps)`` changes by about
    ``delta_eps / (2 * variance)`` relatively when eps changes by ``delta_eps``, whatever is
    drawn. For a layer norm's eps of 1e-5, a variance of 0.01 moves the answer by 0.05% for
    eps = 2e-5 and by 0.45% for 1e-4: a tolerance in between tells them apart on every draw.
    """
    if size < 2 or variance <= 0:
        raise ValueError(f"with_variance: size={size}, variance={variance}; a variance needs "
                         f"size >= 2 and variance > 0")
    drawn = source.normal(size=size)
    standard = (drawn - drawn.mean()) / drawn.std()
    return (centre + np.sqrt(variance) * standard).astype(np.float32)


def layer_sizes(case: dict[str, int], hidden_layers: int) -> list[int]:
    """A network's layer sizes from a case of :func:`draw_sizes` with the sizes ``inputs``,
    ``hidden``, ``second`` and ``classes``: ``[inputs, hidden, classes]`` for one hidden layer,
    ``[inputs, hidden, second, classes]`` for two (checks alternate them, so that an answer
    written for one depth fails)."""
    return [case["inputs"], *[case["hidden"], case["second"]][:hidden_layers], case["classes"]]


def network(source: np.random.Generator, sizes: Sequence[int],
            bias: float = 0.1) -> list[tuple[np.ndarray, np.ndarray]]:
    """A small MLP's parameters ``[(W (n, m), b (n,)), ...]`` for the layer sizes ``sizes``
    (``[inputs, hidden..., classes]``), float32: He-sized weights (``normal * sqrt(2 / m)``),
    so that a mistake changes the outputs, and biases of scale ``bias``."""
    return [((source.normal(size=(n, m)) * np.sqrt(2 / m)).astype(np.float32),
             (bias * source.normal(size=n)).astype(np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def labelled_batch(source: np.random.Generator, shape: tuple[int, ...], inputs: int,
                   classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A batch for :func:`network`: ``(x (*shape, inputs)`` uniform in [0, 1) (float32),
    ``labels shape`` (int32, in ``range(classes)``), ``one-hot targets (*shape, classes))``;
    ``shape`` is ``(n,)`` for one batch, ``(devices, local)`` for one per device."""
    x = source.uniform(size=(*shape, inputs)).astype(np.float32)
    labels = source.integers(0, classes, size=shape).astype(np.int32)
    return x, labels, np.eye(classes, dtype=np.float32)[labels]
