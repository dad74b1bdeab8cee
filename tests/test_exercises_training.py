"""Lesson 08's checkers: each accepts the reference, says "not done" to the stub, and catches
the typical mistakes with a hint that names the fix."""
import jax
import jax.numpy as jnp
import numpy as np
from conftest import assert_result, stub

from nn_from_scratch import losses, train
from nn_from_scratch.exercises import training as check
from nn_from_scratch.model import batched_predict


# The lesson's answers, written as a student writes them (the library's own, even behind a
# def, is refused: test_ready_made_code_behind_a_def_of_ones_own_earns_nothing)
def one_hot(labels, k):
    return (labels[:, None] == jnp.arange(k)).astype(jnp.float32)


def loss(params, images, targets):
    return -jnp.mean(jnp.sum(batched_predict(params, images) * targets, axis=1))


def accuracy(params, images, targets):
    predicted = jnp.argmax(batched_predict(params, images), axis=1)
    return jnp.mean(predicted == jnp.argmax(targets, axis=1))


def update(params, x, y, step_size):
    grads = jax.grad(loss)(params, x, y)
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]

def test_one_hot():
    assert_result(check.one_hot(one_hot), "passed")
    assert_result(check.one_hot(jax.nn.one_hot), "failed", "not ready-made code")  # JAX's
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
    assert_result(check.loss(loss), "passed")
    assert_result(check.loss(stub), "not done")
    assert_result(check.loss(seed_loss), "failed", "seed tutorial", "our loss /")

    def probabilities(params, images, targets):
        probs = jnp.exp(batched_predict(params, images))
        return -jnp.mean(jnp.sum(probs * targets, axis=1))
    assert_result(check.loss(probabilities), "failed", "probabilities", "log-probabilities")

    def log_of_log(params, images, targets):
        return -jnp.mean(jnp.sum(jnp.log(batched_predict(params, images)) * targets, axis=1))
    assert_result(check.loss(log_of_log), "failed", "nan", "jnp.log")
    assert_result(check.loss(lambda p, x, y: -loss(p, x, y)), "failed", "sign")
    assert_result(check.loss(lambda p, x, y: len(x) * loss(p, x, y)), "failed", "sum", "mean")
    # a student's walk: the sizes of a batch written as numbers (the check's were 12 and 5)
    for typed in (lambda p, x, y: -jnp.sum(batched_predict(p, x) * y) / 12,
                  lambda p, x, y: -5 * jnp.mean(batched_predict(p, x) * y)):
        assert check.loss(typed).status == "failed"
    assert_result(check.loss(lambda p, x, y: -jnp.sum(batched_predict(p, x) * y, axis=1)),
                  "failed", "one loss per example", "mean")
    assert_result(check.loss(lambda p, x, y: float(loss(p, x, y))), "failed",
                  "jax.grad could not", "float()")


def test_accuracy():
    assert_result(check.accuracy(accuracy), "passed")
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
    assert_result(check.accuracy(lambda p, x, y: len(x) * accuracy(p, x, y)), "failed",
                  "count")
    assert_result(check.accuracy(lambda p, x, y: 100 * accuracy(p, x, y)), "failed",
                  "percentage")
    # a student's walk: the batch written as a number, and the check's old answer typed in
    for typed in (lambda p, x, y: jnp.sum(jnp.argmax(batched_predict(p, x), axis=1)
                                          == jnp.argmax(y, axis=1)) / 12,
                  lambda p, x, y: 0.75):
        assert check.accuracy(typed).status == "failed"

    def per_example(params, images, targets):
        return jnp.argmax(batched_predict(params, images), axis=1) == jnp.argmax(targets, axis=1)
    assert_result(check.accuracy(per_example), "failed", "one True/False per example")


def step(params, x, y, step_size, sign=-1, biases=True, weights=True):
    grads = jax.grad(losses.loss)(params, x, y)
    return [(w + sign * step_size * dw if weights else w,
             b + sign * step_size * db if biases else b)
            for (w, b), (dw, db) in zip(params, grads)]


def test_update():
    assert_result(check.update(update), "passed")
    assert_result(check.update(train.update), "failed", "library's own update")
    assert_result(check.update(jax.jit(update)), "passed")

    def with_float(params, x, y, step_size):  # right, but jit cannot trace float()
        return update(params, x, y, float(step_size))
    assert_result(check.update(with_float), "failed", "not under jax.jit", "float()")
    assert_result(check.update(lambda p, x, y, s: step(p, x, y, s) if losses.loss(p, x, y) > 0
                               else p), "failed", "not under jax.jit")

    def no_grad(params, x, y, step_size):  # the loss where its gradient belongs
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, losses.loss(params, x, y))]
    assert_result(check.update(no_grad), "failed", "jax.grad(loss)(params, x, y)")

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
                  "exactly step_size x the gradient")
    assert_result(check.update(lambda p, x, y, s: jax.grad(losses.loss)(p, x, y)), "failed",
                  "returned the gradients")

    def the_step(params, x, y, step_size):  # 08.4 in #15: the step, not params minus it
        grads = jax.grad(losses.loss)(params, x, y)
        return [(step_size * dw, step_size * db) for dw, db in grads]
    assert_result(check.update(the_step), "failed", "the step itself", "w - step_size * dw")
    assert "use the step_size argument" not in check.update(the_step).message

    def seed_update(params, x, y, step_size):
        grads = jax.grad(seed_loss)(params, x, y)
        return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, grads)]
    assert_result(check.update(seed_update), "failed", "x too small", "seed")

    def typed_five(params, x, y, step_size):  # a student's walk: the seed's, times 5 typed in
        grads = jax.grad(seed_loss)(params, x, y)
        return [(w - 5 * step_size * dw, b - 5 * step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]
    assert check.update(typed_five).status == "failed"

    def lists(params, x, y, step_size):
        return [list(layer) for layer in update(params, x, y, step_size)]
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


def test_the_written_pairs_answers_replayed_earn_nothing_when_graded():
    """Issue 35: 08.7 drew no inputs when graded, so its two answers replayed passed."""
    from nn_from_scratch.exercises._calls import fresh_inputs
    for seed in (1, 2, 3):
        replayed = iter([0.95 - 0.925, 0.87 - 0.88] * 5)
        with fresh_inputs(seed):
            assert check.small_network_gap(
                lambda big, small, answers=replayed: next(answers)).status == "failed"
            assert_result(check.small_network_gap(
                lambda big, small: big.val_accuracy[-1] - small.val_accuracy[-1]), "passed")


def test_the_written_runs_answers_replayed_earn_nothing_when_graded():
    """Issue 35: 08.5 drew no inputs when graded, so its three answers replayed in order
    passed; each grading adds runs drawn for it."""
    from nn_from_scratch.exercises._calls import fresh_inputs
    for seed in (1, 2, 3):
        replayed = iter([4, 5, 4] * 5)
        with fresh_inputs(seed):
            assert check.best_epoch(lambda h, answers=replayed: next(answers)).status == "failed"
            assert_result(check.best_epoch(lambda h: 1 + int(np.argmax(h.val_accuracy))),
                          "passed")


def norm_ratio(params, images, targets, ours=losses.loss, seeds=seed_loss, square=False):
    def global_norm(tree):
        total = sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(tree))
        return total if square else jnp.sqrt(total)
    return (global_norm(jax.grad(ours)(params, images, targets))
            / global_norm(jax.grad(seeds)(params, images, targets)))


def test_seed_gradient_ratio():
    assert_result(check.seed_gradient_ratio(norm_ratio), "passed", "exactly k x")
    # a student's walk: the check's old number of classes typed in
    assert check.seed_gradient_ratio(lambda *a: 5.0).status == "failed"
    assert_result(check.seed_gradient_ratio(lambda *a: float(norm_ratio(*a))), "passed")
    assert_result(check.seed_gradient_ratio(stub), "not done")
    assert_result(check.seed_gradient_ratio(...), "not done")
    assert_result(check.seed_gradient_ratio(lambda *a: 10), "failed", "typing")  # 08.6 in #15
    assert_result(check.seed_gradient_ratio(10.0), "failed", "expected a function")
    assert_result(check.seed_gradient_ratio(
        lambda *a: norm_ratio(*a, ours=seed_loss, seeds=losses.loss)), "failed", "other way up")
    assert_result(check.seed_gradient_ratio(lambda *a: norm_ratio(*a, seeds=losses.loss)),
                  "failed", "same")
    assert_result(check.seed_gradient_ratio(lambda *a: norm_ratio(*a, square=True)), "failed",
                  "square root")
    assert_result(check.seed_gradient_ratio(lambda *a: -norm_ratio(*a)), "failed", "negative")
    assert_result(check.seed_gradient_ratio(lambda *a: 3.16), "failed", "expected")


def last_gap(big, small):
    return big.val_accuracy[-1] - small.val_accuracy[-1]


def test_small_network_gap():
    assert_result(check.small_network_gap(last_gap), "passed")
    assert_result(check.small_network_gap(stub), "not done")
    assert_result(check.small_network_gap(...), "not done")
    # 08.7 in #15: a wrong sign, the training set, and a typed 0.0
    assert_result(check.small_network_gap(lambda b, s: -last_gap(b, s)), "failed", "sign")
    assert_result(check.small_network_gap(
        lambda b, s: b.train_accuracy[-1] - s.train_accuracy[-1]), "failed", "TRAINING")
    assert_result(check.small_network_gap(lambda b, s: 0.0), "failed", "expected")
    assert_result(check.small_network_gap(0.0), "failed", "expected a function")
    assert_result(check.small_network_gap(
        lambda b, s: max(b.val_accuracy) - max(s.val_accuracy)), "failed", "best epochs")
    assert_result(check.small_network_gap(
        lambda b, s: b.val_accuracy[0] - s.val_accuracy[0]), "failed", "first epochs")
    assert_result(check.small_network_gap(lambda b, s: b.val_loss[-1] - s.val_loss[-1]),
                  "failed", "LOSSES")
    assert_result(check.small_network_gap(lambda b, s: 100 * last_gap(b, s)), "failed",
                  "percentage")
    # a second walk: the lesson's last epoch typed in, a raw IndexError until then
    assert_result(check.small_network_gap(
        lambda b, s: b.val_accuracy[14] - s.val_accuracy[14]), "failed", "typed in", "[-1]")


def test_update_and_the_ratio_blame_an_unfinished_loss():
    namespace = {"jax": jax}
    exec("def loss(params, images, targets):\n    raise NotImplementedError\n"
         "def update(params, x, y, step_size):\n"
         "    grads = jax.grad(loss)(params, x, y)\n"
         "    return [(w - step_size * dw, b - step_size * db)\n"
         "            for (w, b), (dw, db) in zip(params, grads)]\n"
         "def ratio(params, images, targets):\n"
         "    return jax.grad(loss)(params, images, targets)\n", namespace)
    assert_result(check.update(namespace["update"]), "not done", "finish 08.2")
    assert_result(check.seed_gradient_ratio(namespace["ratio"]), "not done", "finish 08.2")


def test_ready_made_code_behind_a_def_of_ones_own_earns_nothing():
    """A student's walk: the library's one_hot, loss, accuracy and update (and JAX's
    jax.nn.one_hot) each passed behind a def of the student's."""
    assert_result(check.one_hot(lambda labels, k: losses.one_hot(labels, k)), "failed",
                  "not ready-made code")
    assert_result(check.one_hot(lambda labels, k: jax.nn.one_hot(labels, k)), "failed",
                  "not ready-made code")
    assert_result(check.loss(lambda p, x, y: losses.loss(p, x, y)), "failed",
                  "calls the library's loss")
    assert_result(check.accuracy(lambda p, x, y: losses.accuracy(p, x, y)), "failed",
                  "calls the library's accuracy")
    assert_result(check.update(lambda p, x, y, s: train.update(p, x, y, s)), "failed",
                  "calls the library's update")


def test_a_static_step_size_is_refused_with_the_reason():
    """A student's walk: jax.jit(update, static_argnums=3) runs when called with 0.1, but the
    training loop compiles update with step_size traced; JAX's own message was the hint."""
    assert_result(check.update(jax.jit(update, static_argnums=3)), "failed",
                  "cannot be a static argument", "jax.jit(update) alone")


def test_the_librarys_step_reached_through_its_epoch_programs_earns_nothing():
    """A reviewer's walk: update answered by the library's step under another name, or by its
    epoch program run over one batch of all the examples (with plain SGD as an optimizer)."""
    from nn_from_scratch import epoch
    from nn_from_scratch.optim import sgd

    def one_batch(x):  # (1, n): every example in one batch
        return jnp.arange(len(x))[None]

    answers = {
        "_update_with_metrics": lambda p, x, y, s: epoch._update_with_metrics(p, x, y, s)[0],
        "train_epoch": lambda p, x, y, s: epoch.train_epoch(
            jax.tree.map(jnp.copy, p), x, y, one_batch(x), s)[0],
        "_optimizer_epoch": lambda p, x, y, s: epoch._optimizer_epoch(
            (jax.tree.map(jnp.copy, p), sgd(s).init(p)), x, y, one_batch(x), s,
            batched_predict, sgd(s))[0][0],
    }
    for name, answer in answers.items():
        assert_result(check.update(answer), "failed", f"calls the library's {name}")


def test_the_walks_raw_errors_and_misnamed_hints_in_lesson_08():
    def no_column(labels, k):  # the lesson's very point missed: (batch,) == (k,)
        return (labels == jnp.arange(k)).astype(jnp.float32)
    assert_result(check.one_hot(no_column), "failed", "labels[:, None] == jnp.arange(k)")

    def swapped(params, x, y, step_size):  # (db, dw) for (dw, db)
        grads = jax.grad(loss)(params, x, y)
        return [(w - step_size * dw, b - step_size * db) for (w, b), (db, dw) in zip(params,
                                                                                  grads)]
    assert_result(check.update(swapped), "failed", "zip(params, grads)")

    def typed_step(params, x, y, step_size):  # the step size written as 0.1
        return update(params, x, y, 0.1)
    assert_result(check.update(typed_step), "failed", "not a number")

    def steps_only(params, x, y, step_size):  # the step, not the new params: no "argument"
        grads = jax.grad(loss)(params, x, y)
        return [(w - 2 * step_size * dw, b - 2 * step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]
    assert_result(check.update(steps_only), "failed", "exactly step_size x the gradient")


def test_best_epochs_hints_name_a_mistake_only_if_it_explains_every_run():
    """A student's walk: `return 4` was told it returned an index (4 is one less than the
    second run's best), and len(history.val_accuracy) the training accuracy's epoch."""
    result = check.best_epoch(lambda history: 4)
    assert result.status == "failed" and "index" not in result.message, result.line
    assert_result(check.best_epoch(lambda h: int(np.argmax(h.val_accuracy))), "failed",
                  "the index in the list")
