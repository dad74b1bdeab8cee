"""Lesson 08's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import assert_result, stub

from nn_from_scratch import losses, train
from nn_from_scratch.exercises import training as check
from nn_from_scratch.model import batched_predict


def test_one_hot():
    assert_result(check.one_hot(losses.one_hot), "passed")
    assert_result(check.one_hot(jax.nn.one_hot), "passed")
    assert_result(check.one_hot(stub), "not done", "NotImplementedError")
    assert_result(check.one_hot(lambda labels, k: losses.one_hot(labels, k).T), "failed",
                  "transpose", "ROW per label")
    assert_result(check.one_hot(lambda labels, k: labels[:, None] == jnp.arange(k)), "failed",
                  "dtype bool", "float32")
    assert_result(check.one_hot(lambda labels, k: np.eye(k)[labels]), "failed", "float64")
    assert_result(check.one_hot(lambda labels, k: jax.nn.one_hot(labels, labels.max() + 1)),
                  "failed", "labels.max() + 1", "k = 6")
    assert_result(check.one_hot(lambda labels, k: losses.one_hot(labels - 1, k)), "failed",
                  "column labels[i]")


def seed_loss(params, images, targets):  # the seed tutorial's: averages over classes too
    return -jnp.mean(batched_predict(params, images) * targets)


def test_loss():
    assert_result(check.loss(losses.loss), "passed")
    assert_result(check.loss(stub), "not done")
    assert_result(check.loss(seed_loss), "failed", "seed tutorial", "our loss / 5")

    def probabilities(params, images, targets):
        probs = jnp.exp(batched_predict(params, images))
        return -jnp.mean(jnp.sum(probs * targets, axis=1))
    assert_result(check.loss(probabilities), "failed", "probabilities", "log-probabilities")

    def log_of_log(params, images, targets):
        return -jnp.mean(jnp.sum(jnp.log(batched_predict(params, images)) * targets, axis=1))
    assert_result(check.loss(log_of_log), "failed", "nan", "jnp.log")
    assert_result(check.loss(lambda p, x, y: -losses.loss(p, x, y)), "failed", "sign")
    assert_result(check.loss(lambda p, x, y: 12 * losses.loss(p, x, y)), "failed", "sum", "mean")
    assert_result(check.loss(lambda p, x, y: -jnp.sum(batched_predict(p, x) * y, axis=1)),
                  "failed", "shape (12,)", "mean")
    assert_result(check.loss(lambda p, x, y: float(losses.loss(p, x, y))), "failed",
                  "jax.grad could not", "float()")


def test_accuracy():
    assert_result(check.accuracy(losses.accuracy), "passed")
    assert_result(check.accuracy(stub), "not done")

    def rows_entrywise(params, images, targets):
        predicted = jax.nn.one_hot(jnp.argmax(batched_predict(params, images), axis=1),
                                   targets.shape[1])
        return jnp.mean(predicted == targets)
    assert_result(check.accuracy(rows_entrywise), "failed", "entry by entry", "argmax")

    def against_one_hot(params, images, targets):
        return jnp.mean(jnp.argmax(batched_predict(params, images), axis=1) == targets)
    assert_result(check.accuracy(against_one_hot), "failed", "one-hot targets",
                  "jnp.argmax(targets, axis=1)")
    assert_result(check.accuracy(lambda p, x, y: 12 * losses.accuracy(p, x, y)), "failed",
                  "count")
    assert_result(check.accuracy(lambda p, x, y: 100 * losses.accuracy(p, x, y)), "failed",
                  "percentage")

    def per_example(params, images, targets):
        return jnp.argmax(batched_predict(params, images), axis=1) == jnp.argmax(targets, axis=1)
    assert_result(check.accuracy(per_example), "failed", "one True/False per example")


def step(params, x, y, step_size, sign=-1, biases=True, weights=True):
    grads = jax.grad(losses.loss)(params, x, y)
    return [(w + sign * step_size * dw if weights else w,
             b + sign * step_size * db if biases else b)
            for (w, b), (dw, db) in zip(params, grads)]


def test_update():
    assert_result(check.update(train.update), "passed")
    assert_result(check.update(jax.jit(train.update)), "passed")

    def tree_map_update(params, x, y, step_size):
        grads = jax.grad(losses.loss)(params, x, y)
        return jax.tree.map(lambda p, g: p - step_size * g, params, grads)
    assert_result(check.update(tree_map_update), "passed")
    assert_result(check.update(stub), "not done")
    assert_result(check.update(lambda *a: step(*a, sign=+1)), "failed", "UP the gradient")
    assert_result(check.update(lambda *a: step(*a, biases=False)), "failed", "biases did not")
    assert_result(check.update(lambda *a: step(*a, weights=False)), "failed",
                  "weights did not move")
    assert_result(check.update(lambda p, x, y, s: step(p, x, y, 0.01)), "failed",
                  "use the step_size argument")
    assert_result(check.update(lambda p, x, y, s: jax.grad(losses.loss)(p, x, y)), "failed",
                  "returned the gradients")

    def seed_update(params, x, y, step_size):
        grads = jax.grad(seed_loss)(params, x, y)
        return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]
    assert_result(check.update(seed_update), "failed", "5x too small", "seed")

    def lists(params, x, y, step_size):
        return [list(layer) for layer in train.update(params, x, y, step_size)]
    assert_result(check.update(lists), "failed", "(W, b) tuples")


def test_best_epoch():
    assert_result(check.best_epoch(lambda h: 1 + int(np.argmax(h.val_accuracy))), "passed")
    assert_result(check.best_epoch(lambda h: np.argmax(h.val_accuracy) + 1), "passed")
    assert_result(check.best_epoch(stub), "not done")
    assert_result(check.best_epoch(lambda h: int(np.argmax(h.val_accuracy))), "failed",
                  "count from 1")
    assert_result(check.best_epoch(lambda h: 1 + int(np.argmax(h.train_accuracy))), "failed",
                  "VALIDATION")
    assert_result(check.best_epoch(lambda h: 1 + int(np.argmin(h.val_loss))), "failed",
                  "validation LOSS")
    assert_result(check.best_epoch(lambda h: max(h.val_accuracy)), "failed", "an int")


@pytest.mark.parametrize("ratio, status, hint", [
    (10.0, "passed", "10x"), (10.0004, "passed", ""), (..., "not done", ""),
    (0.1, "failed", "other way up"), (1.0, "failed", "same"), (3.16, "failed", "global norm"),
    (float("nan"), "failed", "divide")])
def test_seed_gradient_ratio(ratio, status, hint):
    assert_result(check.seed_gradient_ratio(ratio), status, hint)


@pytest.mark.parametrize("gap, status, hint", [
    (0.012, "passed", "within"), (-0.01, "passed", ""), (..., "not done", ""),
    (1.2, "failed", "percentages"), (0.3, "failed", "10 points"),
    (float("inf"), "failed", "subtract")])
def test_small_network_gap(gap, status, hint):
    assert_result(check.small_network_gap(gap), status, hint)
