"""Training the GPT: random windows, the library's optimizer, fit's History; the loss falls and
validation is measured on every character once; clear errors."""
import math

import jax
import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.gpt import gpt_loss, init_gpt_params
from nn_from_scratch.gpt_train import evaluate_gpt, fit_gpt, format_gpt_epoch
from nn_from_scratch.optim import adam
from nn_from_scratch.text_data import load_text, windows


@pytest.fixture(scope="module")
def docs():
    return load_text()


def test_a_few_steps_lower_the_loss_and_fill_the_history(docs):
    params = init_gpt_params(jax.random.key(0), docs.tokenizer.vocab_size, context=16,
                             width=32, heads=2, depth=1)
    trained, history = fit_gpt(params, docs, optimizer=adam(3e-3), key=jax.random.key(1),
                               epochs=2, steps_per_epoch=30, batch_size=8)
    assert history.epochs == 2 and history.steps_per_epoch == 30
    assert history.val_loss[1] < history.val_loss[0] < math.log(docs.tokenizer.vocab_size)
    assert "bits/char" in format_gpt_epoch(history, 1)
    assert params[0][0] is not trained[0][0]  # the caller's arrays are kept


def test_validation_scores_every_window_once():
    params = init_gpt_params(jax.random.key(0), 20, context=4, width=8, heads=2, depth=1)
    ids = np.arange(40) % 20
    nats, _ = evaluate_gpt(params, ids, 4)
    x, y = windows(ids, np.arange(9) * 4, 4)  # (40 - 1) // 4 = 9 windows
    assert float(nats) == pytest.approx(float(jax.jit(gpt_loss)(params, x, y)), rel=1e-5)


def test_a_model_for_another_vocabulary_is_refused(docs):
    params = init_gpt_params(jax.random.key(0), 50, context=8, width=8, heads=2, depth=1)
    with pytest.raises(InputError, match="init_gpt_params\\(key, data.tokenizer.vocab_size\\)"):
        fit_gpt(params, docs, optimizer=adam(1e-3), key=jax.random.key(0), epochs=1,
                steps_per_epoch=1, batch_size=2)
