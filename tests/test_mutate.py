"""The mutation operators (tools/mutate.py) that make an answer right by accident: a size
frozen at its first value, a stable idiom made unstable, two statements swapped, eps * 10."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import mutate  # noqa: E402

SOLUTION = '''def attention(query, keys, values):
    """ONE query."""
    scores = keys @ query / np.sqrt(query.shape[0])
    return scores @ values


def masked(scores, mask):
    scores = np.where(mask, scores, -np.inf)
    top = np.max(scores)
    return np.exp(scores - top)


def norm(x):
    return x / np.sqrt(np.var(x) + 1e-5) + logsumexp(x)
'''
LINES = {3, 4, 8, 9, 10, 14}


def by_key():
    return {m.key: m.source for m in mutate.mutants(SOLUTION, LINES)}


def run(source, name):
    ns = {"np": np, "jnp": np, "logsumexp": lambda s: np.log(np.sum(np.exp(s - s.max())))
          + s.max()}
    exec(source, ns)
    return ns[name]


def test_a_size_read_from_the_input_keeps_the_value_of_the_first_call():
    found = by_key()
    frozen = run(found["query.shape[0] -> its value on the check's first case"], "attention")
    right = run(SOLUTION, "attention")
    first = (np.ones(4), np.ones((3, 4)), np.ones((3, 2)))
    assert np.allclose(frozen(*first), right(*first))  # right for the first case's size
    other = (np.ones(9), np.ones((3, 9)), np.ones((3, 2)))
    assert not np.allclose(frozen(*other), right(*other))  # wrong for every other


def test_stable_idioms_get_their_unstable_twins_and_eps_ten_times():
    found = by_key()
    assert "logsumexp(x) -> jnp.log(jnp.sum(jnp.exp(x)))" in found
    assert "1e-05 -> 0.0001" in found
    swapped = found["scores = np.where(mask, scores, -np.inf); top = np.max(scores) -> the two "
                    "swapped"]  # the largest taken before the mask: hidden scores count
    scores, mask = np.array([1.0, 900.0]), np.array([True, False])
    assert run(SOLUTION, "masked")(scores, mask)[0] == 1.0
    assert run(swapped, "masked")(scores, mask)[0] == 0.0  # exp(1 - 900): the visible lost


def test_independent_neighbours_are_not_swapped():
    assert not [key for key in by_key() if "swapped" in key and "keys @ query" in key]
