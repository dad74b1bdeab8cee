"""The checks' shared way to draw sizes and values (exercises/_draws): the promises its
docstrings make hold on every draw."""
import numpy as np
import pytest

from nn_from_scratch.exercises._draws import (
                                              EXP_LIMIT,
                                              draw_sizes,
                                              extreme_scores,
                                              layer_sizes,
                                              with_variance,
)

SEEDS = range(50)


def test_every_size_differs_across_the_cases_and_within_each():
    for seed in SEEDS:
        drawn = draw_sizes(np.random.default_rng(seed), 3, d=(2, 9), t=(3, 8), heads=(1, 4))
        assert len(drawn) == 3 and all(set(case) == {"d", "t", "heads"} for case in drawn)
        for name, (low, high) in {"d": (2, 9), "t": (3, 8), "heads": (1, 4)}.items():
            column = [case[name] for case in drawn]
            assert len(set(column)) == 3 and low <= min(column) and max(column) <= high
        assert all(len(set(case.values())) == 3 for case in drawn)
    assert draw_sizes(np.random.default_rng(1), 2, a=(2, 5)) == \
        draw_sizes(np.random.default_rng(1), 2, a=(2, 5))  # the same generator, the same sizes


def test_keep_holds_in_every_case():
    for seed in SEEDS:
        for case in draw_sizes(np.random.default_rng(seed), 2, heads=(2, 4), d_k=(2, 5),
                               t=(3, 8), keep=lambda s: s["t"] != s["heads"] * s["d_k"]):
            assert case["t"] != case["heads"] * case["d_k"]


def test_apart_false_lets_two_sizes_of_a_case_coincide():
    found = [draw_sizes(np.random.default_rng(s), 2, apart=False, a=(2, 3), b=(2, 3))
             for s in SEEDS]
    assert any(case["a"] == case["b"] for cases in found for case in cases)


def test_impossible_ranges_are_said_when_the_check_is_written():
    with pytest.raises(ValueError, match="fewer than the 3 cases"):
        draw_sizes(np.random.default_rng(0), 3, heads=(1, 2))
    with pytest.raises(ValueError, match="apart=False"):
        draw_sizes(np.random.default_rng(0), 2, a=(2, 3), b=(2, 3), c=(2, 3))


def softmax(scores, shift):
    with np.errstate(all="ignore"):
        exps = np.exp(scores - shift(scores))
        return exps / exps.sum()


def test_extreme_scores_break_every_unstable_softmax_and_no_stable_one():
    for seed in SEEDS:
        for high in (True, False):
            for dtype in (np.float32, np.float64):
                scores = extreme_scores(np.random.default_rng(seed), 7, near=3,
                                        high=high).astype(dtype)
                right = softmax(scores, np.max)
                assert np.isfinite(right).all() and np.isclose(right.sum(), 1)
                assert np.sum(right > 0.01) >= 2  # no one-hot: the near scores share it
                for shift in (lambda s: 0.0, np.mean, np.min):
                    assert not np.isfinite(softmax(scores, shift)).all()
            assert scores.max() - scores.mean() > EXP_LIMIT


def test_with_variance_has_the_variance_asked_for():
    for seed in SEEDS:
        x = with_variance(np.random.default_rng(seed), 8, 0.01, centre=2.0)
        assert x.dtype == np.float32 and x.shape == (8,)
        assert np.isclose(np.var(x.astype(np.float64)), 0.01, rtol=1e-5)
        assert np.isclose(np.mean(x.astype(np.float64)), 2.0, rtol=1e-6)
    with pytest.raises(ValueError):
        with_variance(np.random.default_rng(0), 1, 0.01)


def test_layer_sizes_take_one_or_two_hidden_layers():
    case = {"inputs": 9, "hidden": 4, "second": 6, "classes": 3}
    assert layer_sizes(case, 1) == [9, 4, 3]
    assert layer_sizes(case, 2) == [9, 4, 6, 3]
