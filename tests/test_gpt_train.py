"""Training the GPT: random windows, the library's optimizer, fit's History; the loss falls and
validation scores every character once, with half a window before it; clear errors."""
import math

import jax
import numpy as np
import pytest

from nn_from_scratch import InputError
from nn_from_scratch.gpt import init_gpt_params, predict_gpt
from nn_from_scratch.gpt_train import evaluate_gpt, fit_gpt, format_gpt_epoch
from nn_from_scratch.optim import adam
from nn_from_scratch.text_data import load_text


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


@pytest.mark.parametrize("context", [4, 5])
def test_validation_scores_every_character_once_with_half_a_window_before_it(context):
    params = init_gpt_params(jax.random.key(0), 20, context=context, width=8, heads=2, depth=1)
    ids = (np.arange(41) * 7) % 20
    nats, accuracy = evaluate_gpt(params, ids, context)
    stride, scored = context - context // 2, {}  # target index -> (nats, hit, characters before)
    for start in range(0, 41 - context, stride):
        log_p = np.asarray(predict_gpt(params, ids[start:start + context]))
        for t in range(0 if start == 0 else context - stride, context):
            target = ids[start + t + 1]
            scored[start + t + 1] = (-log_p[t, target], log_p[t].argmax() == target, t + 1)
    assert sorted(scored) == list(range(1, len(scored) + 1))  # each once, in a run from 1
    assert len(scored) >= 40 - stride
    assert all(before >= context // 2 for j, (_, _, before) in scored.items() if j > context)
    assert float(nats) == pytest.approx(np.mean([v[0] for v in scored.values()]), rel=1e-5)
    assert float(accuracy) == pytest.approx(np.mean([v[1] for v in scored.values()]))


def test_a_model_for_another_vocabulary_is_refused(docs):
    params = init_gpt_params(jax.random.key(0), 50, context=8, width=8, heads=2, depth=1)
    with pytest.raises(InputError, match="init_gpt_params\\(key, data.tokenizer.vocab_size\\)"):
        fit_gpt(params, docs, optimizer=adam(1e-3), key=jax.random.key(0), epochs=1,
                steps_per_epoch=1, batch_size=2)
