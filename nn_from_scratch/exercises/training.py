"""Checkers for lesson 08, training: the student writes the four pieces of SGD training.

``one_hot``, ``loss``, ``accuracy`` and ``update`` are compared with the library
on small random networks and batches made with NumPy, and the usual mistakes get
their own hints: a transposed or integer one-hot, the seed tutorial's loss that
also averages over the classes, probabilities where log-probabilities belong,
accuracy that compares one-hot rows entry by entry, a step UP the gradient, an
update that forgets the biases. Then three functions about reading runs: which
epoch to keep (by the validation curve), what the seed's loss does to the
gradients (on a 5-class network, so the lesson's 10 typed in fails), and the gap
between two runs' validation accuracies (on made-up histories).
"""
from typing import Any

import jax
import numpy as np

from ..i18n import N_, _
from ..train import History
from ._calls import call, fast_call, finish_first, generator, more_when_graded, shuffled
from ._compare import (
    as_array,
    expect_close,
    expect_int,
    expect_own_code,
    expect_shape,
    reject_known_wrong,
)
from ._core import Mistake, NotDone, exercise
from ._draws import draw_sizes, labelled_batch, network
from ._hints import summary, the_stubs
from ._remote import transformed, twins

LESSON = "08_training"
# Every check uses networks of the same layer sizes and batches of the same size, made with
# NumPy, and runs the student's function under jax.jit (fast_call): one compile of the whole
# function, where eager JAX would compile each of its operations, a hundred of them for a
# gradient. The reference is NumPy (backpropagation by hand in _grads): no compile at all.
# 5 classes: neither a batch size nor 10, so mistakes show. The checks of loss, accuracy,
# update and the gradient ratio draw their sizes (_drawn): a size written as a number (a
# batch of 12, 5 classes) is right for one case at most.
SIZES = [8, 6, 6, 5]
N_CLASSES = SIZES[-1]
N = 12  # examples per batch


def _drawn(seed: int, cases: int) -> list[tuple[list[int], int]]:
    """``(layer sizes, batch size)`` for ``cases`` cases of a check (:func:`draw_sizes` with
    ``generator(seed)``): the inputs, the hidden width, the classes (never the lesson's 10)
    and the batch each take another value in each case, no two equal within one."""
    return [([s["inputs"], s["hidden"], s["hidden"], s["classes"]], s["batch"])
            for s in draw_sizes(generator(seed), cases, inputs=(5, 10), hidden=(4, 9),
                                classes=(3, 9), batch=(11, 18))]


def _network(sizes: list[int], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`network` with biases of scale 0.3."""
    return network(generator(seed), sizes, bias=0.3)


def _batch(seed: int, n: int = N, inputs: int = SIZES[0],
           classes: int = N_CLASSES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(images (n, inputs), labels (n,), one-hot targets (n, classes))``, a
    :func:`labelled_batch`."""
    return labelled_batch(generator(seed), (n,), inputs, classes)


def _forward(params: Any, images: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The reference in NumPy (no JAX compile): each layer's input, and the log-probabilities."""
    inputs, a = [], images.astype(np.float64)
    for i, (w, b) in enumerate(params):
        inputs.append(a)
        a = a @ w.T + b
        a = np.maximum(0, a) if i < len(params) - 1 else a
    top = a.max(axis=1, keepdims=True)
    return inputs, a - top - np.log(np.sum(np.exp(a - top), axis=1, keepdims=True))


def _log_probs(params: Any, images: np.ndarray) -> np.ndarray:
    return _forward(params, images)[1]


def _loss(params: Any, images: np.ndarray, targets: np.ndarray) -> float:
    return float(-np.mean(np.sum(_log_probs(params, images) * targets, axis=1)))


def _grads(params: Any, images: np.ndarray, targets: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """jax.grad(losses.loss), by hand: backpropagation through the layers, in NumPy."""
    inputs, log_probs = _forward(params, images)
    delta = (np.exp(log_probs) - targets) / len(images)  # d loss / d logits, (N, classes)
    grads: list[tuple[np.ndarray, ...]] = []
    for i in reversed(range(len(params))):
        grads.append((delta.T @ inputs[i], delta.sum(axis=0)))
        if i:  # back through W, then through the relu of the layer before
            delta = (delta @ params[i][0]) * (inputs[i] > 0)
    return grads[::-1]


@exercise(LESSON, 1, "one_hot")
def one_hot(student_fn: Any) -> str:
    cases = [(shuffled(np.array([3, 0, 4, 1, 1, 0, 2], np.int32), 80), 5),  # 7 labels, 5 classes
             (np.array([0, 2, 1], np.int32), 6)]  # the top classes 3..5 are absent
    for labels, k in cases:
        what = _("one_hot(labels, {k}) for {len_labels} labels").format(k=k, len_labels=len(labels))
        got = as_array(fast_call(student_fn, labels, k, what=what, static_argnums=(1,), hints={
            ("incompatible shapes", "Incompatible shapes"): _(
                "{what} compared arrays whose shapes do not broadcast: compare a column of "
                "the labels with a row of the classes, labels[:, None] == jnp.arange(k), "
                "which gives (batch, k)").format(what=what)}))
        batch = len(labels)
        if got.shape == (k, batch):
            raise Mistake(_("{what} returned shape {shape}, the transpose: one ROW per "
                            "label, shape ({batch}, {k}). Compare labels[:, None] (a "
                            "column) with jnp.arange(k) (a row)").format(
                              what=what, shape=got.shape, batch=batch, k=k))
        if got.shape == (batch, int(labels.max()) + 1) and k != labels.max() + 1:
            raise Mistake(_("{what} returned {shape} columns, labels.max() + 1; it must "
                            "have k = {k} columns, one per class, even when a batch "
                            "lacks the top classes").format(
                              what=what, shape=got.shape[1], k=k))
        got = expect_shape(got, (batch, k), what)
        if got.dtype != np.float32:
            raise Mistake(_("{what} has dtype {dtype}; make it float32, like "
                            "jax.nn.one_hot and the library (jnp.array(..., "
                            "dtype=jnp.float32)): the targets multiply the float32 "
                            "log-probabilities in the loss, and jit compiles update "
                            "again for every new dtype").format(
                              what=what, dtype=got.dtype))
        expect_close(got, np.eye(k, dtype=np.float32)[labels], what,
                     hint=_("row i must hold a single 1, in column labels[i], and 0 elsewhere"))
    # right, through ready-made code behind a def of the student's (a student's walk): the
    # library's one_hot, or JAX's own jax.nn.one_hot
    expect_own_code(student_fn, (labels, k), what, ("nn_from_scratch.losses", "jax"),
                    ("one_hot",), message=_("{what} calls {name}: the exercise wants your own "
                                            "code (labels[:, None] == jnp.arange(k)), not "
                                            "ready-made code"))
    return N_("(batch, k) float32 rows with a 1 at each label, also when a batch lacks the top "
              "classes")


@exercise(LESSON, 2, "loss")
def loss(student_fn: Any) -> str:
    for seed, (sizes, N) in enumerate(_drawn(111, 2)):  # noqa: N806 - the lesson's N
        N_CLASSES = sizes[-1]  # noqa: N806
        params = _network(sizes, seed)
        images, labels, targets = _batch(10 + seed, N, sizes[0], N_CLASSES)
        what = _("loss(params, images, targets) for a batch of {N}").format(N=N)
        got = as_array(fast_call(student_fn, params, images, targets, what=what))
        want = _loss(params, images, targets)
        if got.shape == (N,):
            raise Mistake(_("{what} returned shape ({N},), one loss per example; return "
                            "their mean, a single number (grad needs a scalar)").format(
                              what=what, N=N))
        if got.shape != ():
            raise Mistake(_("{what} returned shape {shape}; the loss is a single "
                            "number: -jnp.mean(jnp.sum(preds * targets, axis=1))").format(
                              what=what, shape=got.shape))
        value = float(got)
        log_probs = _log_probs(params, images)
        p_true = np.exp(log_probs)[np.arange(N), labels]
        if np.isnan(value):
            raise Mistake("the loss is nan: batched_predict already returns LOG-probabilities "
                          "(negative numbers), so do not take jnp.log of them")
        wrong = {
            _("this is the seed tutorial's -jnp.mean(preds * targets), which also "
              "averages over the {N_CLASSES} classes: our loss / {N_CLASSES}. Sum "
              "over the classes (axis=1), then take the mean over the examples").format(
                N_CLASSES=N_CLASSES): want / N_CLASSES,
            _("used probabilities where log-probabilities belong: batched_predict already returns "
              "log-probabilities, so use them as they are, with no jnp.exp"):
                -float(np.mean(p_true)),
            _("used probabilities where log-probabilities belong (and averaged over the classes "
              "too): use batched_predict's log-probabilities as they are, sum them over the "
              "classes and average over the examples"): -float(np.mean(p_true)) / N_CLASSES,
            _("the sign is wrong: cross-entropy is MINUS the mean log-probability of the true "
              "class, a positive number"): -want,
            _("this is the sum over the batch; take the mean over the examples, so that the step "
              "size does not depend on the batch size"): N * want,
        }
        reject_known_wrong(value, wrong, rtol=1e-4)
        expect_close(value, want, what, hint=_("-mean over examples of sum over classes of "
                                               "targets * log-probabilities"))
        expect_own_code(student_fn, (params, images, targets), what, "nn_from_scratch.losses",
                        ("loss",))
    params = _network(SIZES, 0)
    images, _unused, targets = _batch(10)
    try:
        transformed(student_fn, jax.grad, jax.make_jaxpr)(params, images, targets)  # no compile
    except NotDone:
        raise
    except Exception as err:
        if the_stubs(err):
            raise
        raise Mistake(_("jax.grad could not differentiate your loss ({name}): build it "
                        "from jnp operations on batched_predict's output, with no np. "
                        "functions and no float()").format(name=type(err).__name__)) from None
    return N_("mean cross-entropy, equal to the library's on 2 networks and batches of drawn "
              "sizes, and jax.grad works on it")


@exercise(LESSON, 3, "accuracy")
def accuracy(student_fn: Any) -> str:
    for number, (sizes, n) in enumerate(_drawn(112, 2)):
        _accuracy_case(student_fn, sizes, n, number)
    return N_("the fraction of examples whose argmax matches the target's, on two batches of "
              "drawn sizes")


def _accuracy_case(student_fn: Any, sizes: list[int], N: int, number: int) -> None:  # noqa: N803
    N_CLASSES = sizes[-1]  # noqa: N806 - the lesson's names
    params = _network(sizes, 3 + number)
    images, _unused, _unused = _batch(20 + number, N, sizes[0], N_CLASSES)
    predicted = np.argmax(_log_probs(params, images), axis=1)
    # most targets are what the network predicts, 2 to 4 are another class
    right_count = N - int(generator(113 + number).integers(2, 5))
    right = np.arange(N) < right_count
    target_class = np.where(right, predicted, (predicted + 1) % N_CLASSES)
    targets = np.eye(N_CLASSES, dtype=np.float32)[target_class]
    want = right_count / N
    what = _("accuracy(params, images, targets) for {N} examples, {right} of them "
             "right").format(N=N, right=right_count)
    got = as_array(fast_call(student_fn, params, images, targets, what=what, hints={
        ("broadcast", "shapes"): N_("compared class indices (batch,) with the one-hot targets "
                                    "(batch, k): turn the targets into classes first, "
                                    "jnp.argmax(targets, axis=1)")}))
    if got.shape == (N,):
        raise Mistake("returned one True/False per example; accuracy is their mean, the "
                      "fraction right: jnp.mean(...)")
    if got.shape != ():
        raise Mistake(_("returned shape {shape}; accuracy is one number, the fraction "
                        "of examples whose predicted class equals the target class").format(
                          shape=got.shape))
    value = float(got)
    entrywise = 1 - 2 * (1 - want) / N_CLASSES  # a wrong row still matches in k - 2 places
    if np.isclose(value, entrywise):
        raise Mistake(_("got {value:.3g}, not {want:.3g}: one-hot rows were compared entry "
                        "by entry, so a wrong row still agrees in {N_CLASSES} of its "
                        "{N_CLASSES2} places. Compare classes: jnp.argmax(predictions, "
                        "axis=1) == jnp.argmax(targets, axis=1)").format(
                          value=value, want=want, N_CLASSES=N_CLASSES - 2,
                          N_CLASSES2=N_CLASSES))
    if np.isclose(value, right_count):
        raise Mistake(_("returned the count of right answers, {right}; accuracy is the "
                        "fraction, {want:.3g} (jnp.mean, not jnp.sum)").format(
                            right=right_count, want=want))
    if np.isclose(value, 100 * want):
        raise Mistake(_("returned a percentage, {percent:.3g}; return the fraction, "
                        "{want:.3g}").format(percent=100 * want, want=want))
    if not np.isclose(value, want, atol=1e-6):
        raise Mistake(_("got {value:.4g}, expected {want:.4g}: take the argmax over the "
                        "classes (axis=1) of both the predictions and the targets, and "
                        "the mean of where they agree").format(value=value, want=want))
    expect_own_code(student_fn, (params, images, targets), what, "nn_from_scratch.losses",
                    ("accuracy",))


@exercise(LESSON, 4, "update")
def update(student_fn: Any) -> str:
    finish_first(student_fn, "loss", loss)  # update takes the gradient of the student's loss
    for (sizes, n), step_size in zip(_drawn(114, 2), (0.1, 0.5)):
        N_CLASSES = sizes[-1]  # noqa: N806 - the lesson's name
        params = _network(sizes, 4)
        images, _unused, targets = _batch(40, n, sizes[0], N_CLASSES)
        grads = _grads(params, images, targets)
        structure = jax.tree.structure(params)
        what = f"update(params, x, y, {step_size})"
        got = fast_call(student_fn, params, images, targets, step_size, what=what, hints={
            "iteration over a 0-d array": N_("the loss is one number, with nothing to take "
                                             "apart per layer: its gradient, "
                                             "jax.grad(loss)(params, x, y), is a (dW, db) per "
                                             "layer"),
            ("Incompatible shapes", "incompatible shapes"): N_(
                "a W met a gradient of another shape: pair each (w, b) with its own (dw, db), "
                "in that order, for (w, b), (dw, db) in zip(params, grads)"),
            # a student's walk: jax.jit(update, static_argnums=3), fine called with 0.1
            ("Non-hashable static arguments", "static_argnums"): N_(
                "step_size cannot be a static argument: the training loop compiles update "
                "with jax.jit, where step_size is traced like params, x and y (and a schedule "
                "changes it every epoch); leave static_argnums out, jax.jit(update) alone")},
            needs_jit=_("{what} works as written but not under jax.jit, and the "
                        "training loop compiles it: use jnp operations on the values, "
                        "with no float() or if on them").format(what=what))
        if str(jax.tree.structure(got)) != str(structure):  # e.g. lists instead of tuples
            raise Mistake(_("{what} returned {structure_got}; return the same structure "
                            "as params, a list of (W, b) tuples, so that the result can "
                            "be passed straight back in (jit and lax.scan need that)").format(
                              what=what, structure_got=jax.tree.structure(got)))
        new = [(np.asarray(w), np.asarray(b)) for w, b in got]
        w0, dw0 = params[0][0], grads[0][0]
        moved = (w0 - new[0][0]).ravel() @ dw0.ravel() / (dw0.ravel() @ dw0.ravel())
        if all(np.allclose(nw, dw, atol=1e-6) for (nw, _w), (dw, _b) in zip(new, grads)):
            raise Mistake("returned the gradients; return the new parameters, "
                          "w - step_size * dw and b - step_size * db")
        if all(np.allclose(nw, step_size * dw, atol=1e-6)
               for (nw, _w), (dw, _b) in zip(new, grads)):
            raise Mistake("returned the step itself, step_size * dw; return the new parameters, "
                          "the old ones minus that step: w - step_size * dw, b - step_size * db")
        if np.isclose(moved, -step_size, rtol=1e-3):
            raise Mistake("the step goes UP the gradient (w + step_size * dw), so the loss grows; "
                          "subtract: w - step_size * dw")
        if all(np.array_equal(nb, b) for (_w, nb), (_v, b) in zip(new, params)) and not np.isclose(
                moved, 0):
            raise Mistake("the weights moved but the biases did not: update every (W, b), "
                          "b - step_size * db too")
        if all(np.array_equal(nw, w) for (nw, _unused), (w, _unused) in zip(new, params)):
            raise Mistake("the weights did not move: update W as well as b, "
                          "w - step_size * dw")
        if np.isclose(moved, step_size / N_CLASSES, rtol=1e-3):
            raise Mistake(_("the step is {N_CLASSES}x too small: that is the gradient "
                            "of the seed tutorial's loss, our loss / n_classes. Take "
                            "grad of the lesson's loss").format(N_CLASSES=N_CLASSES))
        if not np.isclose(step_size, 0.1) and np.isclose(moved, 0.1, rtol=1e-3):
            raise Mistake(_("with step_size = {step_size} the weights moved by 0.1 x the "
                            "gradient, as with the first step size: use the step_size "
                            "argument, not a number, w - step_size * dw").format(
                                step_size=step_size))
        if not np.isclose(moved, step_size, rtol=1e-3) and moved > 0:
            raise Mistake(_("the weights moved by {moved:.3g} x the gradient with "
                            "step_size = {step_size}; one step moves them by exactly "
                            "step_size x the gradient, w - step_size * dw").format(
                                moved=moved, step_size=step_size))
        for i, ((nw, nb), (w, b), (dw, db)) in enumerate(zip(new, params, grads)):
            expect_close(nw, w - step_size * dw, _("W of layer {i} after {what}").format(
                                                     i=i, what=what),
                         hint=_("W - step_size * dW, with dW from jax.grad(loss)"))
            expect_close(nb, b - step_size * db, _("b of layer {i} after {what}").format(
                                                     i=i, what=what),
                         hint=_("b - step_size * db, with db from jax.grad(loss)"))
    # every function of epoch.py: its update, and the steps inside its epoch programs
    expect_own_code(student_fn, (params, images, targets, 0.1), "update(params, x, y, 0.1)",
                    "nn_from_scratch.epoch")
    return N_("params - step_size * grad(loss), for every W and b, at two step sizes, on "
              "networks and batches of drawn sizes")


def _history(anchor: Any, val_accuracy: list[float], val_loss: list[float],
             train_end: float = 1.0) -> tuple[History, Any]:
    """A made-up run: training accuracy rises every epoch; the validation curves are given.
    ``(here, there)``: one to read, one to hand to the student's code (:func:`twins`)."""
    n = len(val_accuracy)
    train_accuracy = tuple(float(a) for a in np.linspace(0.8, train_end, n))
    return twins(anchor, History, "scan", 128, 31, 0.5, epoch_time=(0.2,) * n,
                 train_loss=tuple(float(v) for v in np.linspace(0.6, 0.01, n)),
                 train_accuracy=train_accuracy, val_loss=tuple(val_loss),
                 val_accuracy=tuple(val_accuracy))


def _drawn_run(draw: np.random.Generator, epochs: int = 0) -> tuple[list[float], list[float], int]:
    """A made-up run of ``epochs`` (else 3-9) for a grading: validation accuracies all
    different, the loss falling where they rise; and its best epoch, counted from 1."""
    accuracy = [round(float(a), 3) for a in draw.permutation(
        np.linspace(0.6, 0.95, epochs or int(draw.integers(3, 10))))]
    loss = [round(1.2 - a + float(draw.uniform(0, 0.05)), 3) for a in accuracy]
    return accuracy, loss, 1 + int(np.argmax(accuracy))


@exercise(LESSON, 5, "best_epoch")
def best_epoch(student_fn: Any) -> str:
    runs = [  # (validation accuracy, validation loss, best epoch counted from 1)
        ([0.80, 0.86, 0.89, 0.92, 0.91, 0.90, 0.905, 0.90],
         [0.60, 0.40, 0.32, 0.27, 0.29, 0.31, 0.33, 0.36], 4),
        ([0.70, 0.78, 0.84, 0.85, 0.88, 0.87],
         [0.80, 0.55, 0.40, 0.42, 0.43, 0.41], 5),   # the lowest loss is at epoch 3
        ([0.75, 0.81, 0.86, 0.90], [0.7, 0.5, 0.4, 0.3], 4),  # still improving at the end
    ]
    answers = []  # (got, the run) for every run
    for val_accuracy, val_loss, want in more_when_graded(tuple(runs), 85, _drawn_run):
        _here, history = _history(student_fn, val_accuracy, val_loss)
        got = call(student_fn, history, what="best_epoch(history)")
        answers.append((expect_int(got, "best_epoch(history)",
                                   _("return an epoch number, an int")),
                        (val_accuracy, val_loss, want)))
    wrong = [(got, run) for got, run in answers if got != run[2]]
    if not wrong:
        return N_("the epoch with the highest validation accuracy, counted from 1, on 3 made-up "
                  "runs")
    # a mistake is named only if it gives the answer on EVERY run, not by a coincidence of one
    # (a student's walk: `return 4` was told it returned an index)
    got, (val_accuracy, val_loss, want) = wrong[0]
    if all(g == run[2] - 1 for g, run in answers):
        raise Mistake(_("returned {got}, the index in the list; epochs count from 1 "
                        "(the first epoch is epoch 1), so add 1").format(got=got))
    if all(g == len(run[0]) for g, run in answers):
        raise Mistake(_("returned the last epoch, {got}, where the training "
                        "accuracy is highest; choose by the VALIDATION accuracy, "
                        "which peaked at epoch {want}").format(got=got, want=want))
    if all(g == 1 + int(np.argmin(run[1])) for g, run in answers):
        raise Mistake(_("returned {got}, where the validation LOSS is lowest; the "
                        "exercise asks for the highest validation accuracy (epoch "
                        "{want} here)").format(got=got, want=want))
    raise Mistake(_("returned {got} for a run whose validation accuracy per epoch "
                    "was {val_accuracy}; expected {want}: 1 + the argmax of "
                    "history.val_accuracy").format(
                      got=got, val_accuracy=val_accuracy, want=want))


@exercise(LESSON, 6, "seed loss gradient ratio")
def seed_gradient_ratio(student_fn: Any) -> str:
    finish_first(student_fn, "loss", loss)
    drawn = _drawn(116, 2)
    for number, (sizes, n) in enumerate(drawn):
        _ratio_case(student_fn, sizes, n, number)
    return (_("our gradients are exactly k x the seed's for k classes ({first} and {second} "
              "here): the seed's loss at step size s trains like ours at s / (number of "
              "classes)").format(first=drawn[0][0][-1], second=drawn[1][0][-1]))


def _ratio_case(student_fn: Any, sizes: list[int], n: int, number: int) -> None:
    N_CLASSES = sizes[-1]  # noqa: N806 - the lesson's name
    # one hidden layer: two gradients compile faster, and the ratio is the same
    params = _network([sizes[0], sizes[1], N_CLASSES], 6 + number)
    images, _unused, targets = _batch(60 + number, n, sizes[0], N_CLASSES)
    what = (_("gradient_norm_ratio(params, images, targets) for a network with "
              "{N_CLASSES} classes").format(N_CLASSES=N_CLASSES))
    got = fast_call(student_fn, params, images, targets, what=what)
    if np.ndim(got) != 0:
        raise Mistake(_("{what} returned {summary_got}; return one number, the ratio of "
                        "the two global norms").format(
                          what=what, summary_got=summary(got)))
    value = float(got)
    if np.isclose(value, N_CLASSES, rtol=1e-3):
        return
    if not np.isfinite(value):
        raise Mistake(_("{what} gave {value}; divide the global norm of our loss's "
                        "gradient by that of the seed's, both positive").format(
                          what=what, value=value))
    reject_known_wrong(value, {
        _("got 10 on a network with {N_CLASSES} classes: compute the ratio from the two "
          "gradients rather than typing the lesson's 10").format(N_CLASSES=N_CLASSES): 10,
        _("got {value:.3g}, the other way up: the ratio is (our gradient norm) / (the "
          "seed's)").format(value=value):
            1 / N_CLASSES,
        N_("got 1: both gradients are the same, so one of the two losses is not the seed's "
           "-jnp.mean(preds * targets)"): 1,
        _("got {value:.3g}, the square of the ratio: the global norm is the square root "
          "of the sum of the squares").format(value=value): N_CLASSES ** 2,
        _("got {value:.3g}: a norm is never negative; check the signs of the two losses").format(
            value=value):
            -N_CLASSES,
    }, rtol=1e-3)
    raise Mistake(_("{what} gave {value:.4g}; the seed's loss averages over the "
                    "{N_CLASSES} classes as well as the examples, so its gradient is "
                    "ours / {N_CLASSES} exactly: expected {N_CLASSES}. Take the global "
                    "norms of jax.grad(loss) and jax.grad(seed_loss)").format(
                      what=what, value=value, N_CLASSES=N_CLASSES))


@exercise(LESSON, 7, "a smaller network")
def small_network_gap(student_fn: Any) -> str:
    runs = [  # (big's, small's) (validation accuracy, validation loss): the last epoch counts
        (([0.80, 0.90, 0.95, 0.94], [0.6, 0.3, 0.2, 0.21]),
         ([0.78, 0.86, 0.91, 0.925], [0.7, 0.4, 0.28, 0.26])),
        (([0.70, 0.85, 0.87], [0.9, 0.5, 0.45]), ([0.75, 0.89, 0.88], [0.8, 0.4, 0.41])),
    ]

    def drawn(draw: np.random.Generator) -> tuple[tuple[list[float], list[float]], ...]:
        epochs = int(draw.integers(2, 8))  # a pair of runs as long, drawn for a grading
        return tuple(_drawn_run(draw, epochs)[:2] for _run in range(2))
    for (big_acc, big_loss), (small_acc, small_loss) in more_when_graded(tuple(runs), 87, drawn):
        (big, big_there), (small, small_there) = (
            _history(student_fn, big_acc, big_loss),
            _history(student_fn, small_acc, small_loss, train_end=0.93))
        what = (_("validation_gap(big, small) for validation accuracies {big_acc} "
                  "(big) and {small_acc} (small)").format(
                    big_acc=big_acc, small_acc=small_acc))
        got = call(student_fn, big_there, small_there, what=what, hints={
            ("IndexError", "index out of range"): _(
                "{what}: an epoch's index typed in? These runs have {epochs} epochs each; "
                "the last one, whatever the run's length, is history.val_accuracy[-1]").format(
                    what=what, epochs=len(big_acc))})
        if np.ndim(got) != 0:
            raise Mistake(_("{what} returned {summary_got}; return one number").format(
                              what=what, summary_got=summary(got)))
        value, want = float(got), big_acc[-1] - small_acc[-1]
        if np.isclose(value, want, atol=1e-9):
            continue
        reject_known_wrong(value, {
            N_("the sign is wrong: big minus small, positive when the big network does better"):
                -want,
            N_("compared the TRAINING accuracies; compare the last validation accuracies, "
               "history.val_accuracy[-1]"): big.train_accuracy[-1] - small.train_accuracy[-1],
            N_("compared the best epochs; compare the LAST validation accuracies, "
               "history.val_accuracy[-1]"): max(big_acc) - max(small_acc),
            N_("compared the first epochs; the last one is history.val_accuracy[-1]"):
                big_acc[0] - small_acc[0],
            N_("compared the validation LOSSES; compare the validation accuracies"):
                big_loss[-1] - small_loss[-1],
            N_("a percentage: accuracies are fractions in [0, 1], so is their difference"):
                100 * want,
        }, atol=1e-9, want=want)
        raise Mistake(_("{what} gave {value:.4g}; expected {want:.4g} = "
                        "big.val_accuracy[-1] - small.val_accuracy[-1]").format(
                          what=what, value=value, want=want))
    return N_("the last validation accuracy of the big run minus the small one's, on 2 "
              "made-up pairs")
