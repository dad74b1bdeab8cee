"""The character tokenizer: a sorted vocabulary with id 0 for unknown, a round trip, unknown
characters kept visible, clear errors."""
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.text import UNKNOWN, Tokenizer


def test_the_vocabulary_is_the_sorted_characters_after_unknown():
    tok = Tokenizer.from_text("hello world")
    assert tok.chars == " dehlorw" and tok.vocab_size == 9
    np.testing.assert_array_equal(tok.encode("hold"), [4, 6, 5, 2])
    assert tok.encode("hold").dtype == np.int32


def test_encode_then_decode_gives_the_text_back():
    text = 'def f(x):\n    return {"a": x ** 2}  # ünïcode ✓'
    tok = Tokenizer.from_text(text)
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(jnp.asarray(tok.encode(text))) == text  # JAX ids too
    assert tok.decode([]) == "" and tok.encode("").shape == (0,)


def test_unknown_characters_are_0_and_decode_visibly():
    tok = Tokenizer.from_text("abc")
    np.testing.assert_array_equal(tok.encode("a😀d\u4e2d"), [1, 0, 0, 0])  # beyond the table too
    assert tok.decode(tok.encode("a😀")) == "a" + UNKNOWN


@pytest.mark.parametrize("call, match", [
    (lambda t: t.encode([1, 2]), "takes a str"),
    (lambda t: t.decode(np.zeros((2, 3), int)), "ONE sequence"),
    (lambda t: t.decode([0, 9]), "between 0 and 3"),
    (lambda t: t.decode([0.5]), "integer ids"),
    (lambda t: Tokenizer("ba"), "sorted"),
    (lambda t: Tokenizer.from_text(""), "non-empty"),
])
def test_bad_input_is_refused_with_the_fix(call, match):
    with pytest.raises(InputError, match=match):
        call(Tokenizer.from_text("abc"))
