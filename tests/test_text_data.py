"""The text path: Python's own documentation, split by position with no overlap, its
vocabulary from the training part only, windows whose targets are the next characters."""
import sys

import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.data import load_text as reexported
from nn_from_scratch.text_data import load_text, windows


@pytest.fixture(scope="module")
def docs():
    return load_text()


def test_the_split_is_by_position_with_no_overlap(docs):
    from pydoc_data.topics import topics
    whole = docs.train_text + docs.val_text
    assert len(whole) == sum(map(len, topics.values())) + 2 * (len(topics) - 1)
    assert len(docs.val_text) == pytest.approx(0.1 * len(whole), abs=1)
    assert docs.val_text[:200] not in docs.train_text  # the validation text is new
    assert len(docs.train_ids) == len(docs.train_text) and docs.train_ids.dtype == np.int32
    assert docs.tokenizer.decode(docs.val_ids) == "".join(
        c if c in docs.tokenizer.chars else "\ufffd" for c in docs.val_text)
    version = ".".join(map(str, sys.version_info[:3]))
    assert version in docs.source and f"{len(whole):,}" in docs.source
    assert f"{len(docs.train_ids):,}" in str(docs)
    assert reexported is load_text


def test_windows_target_the_next_character(docs):
    x, y = docs.windows(np.array([0, 7]), 16)
    assert x.shape == y.shape == (2, 16)
    np.testing.assert_array_equal(x[1], docs.train_ids[7:23])
    np.testing.assert_array_equal(y[1], docs.train_ids[8:24])
    vx, _ = docs.windows(np.array([3]), 4, split="val")
    np.testing.assert_array_equal(vx[0], docs.val_ids[3:7])


@pytest.mark.parametrize("call, match", [
    (lambda: load_text("shakespeare"), "python_docs"),
    (lambda: load_text(val_fraction=0.9), "at most 0.5"),
    (lambda: windows(np.arange(5), np.array([0]), 5), "at least 6 tokens"),
    (lambda: windows(np.arange(5), np.array([0]), 0), "context"),
])
def test_bad_input_is_refused_with_the_fix(call, match):
    with pytest.raises(InputError, match=match):
        call()
