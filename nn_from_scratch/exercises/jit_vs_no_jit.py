"""Checkers for lesson 09, jit vs no-jit: reading timings, counting dispatches, the roofline.

Timings differ from machine to machine and, on a shared machine, from run to
run by more than the effects the lesson measures, so no checker here looks at a
timing. A question about timings is a function, checked on made-up
:class:`~nn_from_scratch.train.History` records whose answer is known exactly.
Counting matrix multiplies is a function too (a count the student could guess
would prove nothing), checked on jaxprs traced here with the JAX the student
runs: one SGD step of a small network of the lesson's depth (the counts depend on
the number of layers, not on their widths), its loss, and one with none.
"""
import functools
from typing import Any

import numpy as np

from ..i18n import N_, _
from ..train import History
from . import _fixtures
from ._calls import call, more_when_graded, scaled
from ._compare import expect_int, reject_known_wrong
from ._core import Mistake, exercise
from ._hints import summary
from ._remote import beside, session_of

LESSON = "09_jit_vs_no_jit"


def _history(anchor: Any, mode: str, epoch_time: tuple[float, ...], compile_time: float) -> Any:
    """A made-up run of 31 steps of 128, made beside ``anchor`` (the student's function)."""
    return beside(anchor, History, mode, 128, 31, compile_time, epoch_time=epoch_time)


@exercise(LESSON, 1, "epochs to repay the compile")
def epochs_to_repay(student_fn: Any) -> str:
    cases = [  # eager epochs (the first one slower: every operation compiles on first use), jit
        ((3.0, 0.9, 0.8, 0.85), (0.30, 0.10, 0.12, 0.11), 0.6),
        ((2.0, 0.40, 0.42), (0.05, 0.02, 0.021), 1.2),
    ]
    for number, (eager_times, jit_times, compile_time) in enumerate(cases):
        eager_times, jit_times = scaled(eager_times, 50 + number), scaled(jit_times, 52 + number)
        compile_time = scaled((compile_time,), 54 + number)[0]
        eager = _history(student_fn, "eager", eager_times, 0.0)
        jitted = _history(student_fn, "jit", jit_times, compile_time)
        saving = np.median(eager_times) - np.median(jit_times)
        want = compile_time / saving
        what = (_("epochs_to_repay(eager, jitted) for eager epochs {eager_times}, jit "
                  "epochs {jit_times} and a {compile_time} s compile").format(
                    eager_times=eager_times, jit_times=jit_times, compile_time=compile_time))
        got = call(student_fn, eager, jitted, what=what)
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise Mistake(_("{what} returned {summary_got}; return a number of epochs").format(
                              what=what, summary_got=summary(got))) from None
        if np.isclose(value, want, rtol=1e-3):
            continue
        wrong: dict[str, float] = {
            _("used the mean epoch time; use the median (np.median): the first eager epoch also "
              "compiles every operation for its shapes, a one-off that the mean spreads over "
              "every epoch"): float(compile_time / (np.mean(eager_times) - np.mean(jit_times))),
            _("the other way up: epochs = compile time / time saved per epoch"):
                float(saving / compile_time),
            _("divided by the eager epoch time; the compile is repaid by what jit SAVES per "
              "epoch, eager minus jit"): float(compile_time / np.median(eager_times)),
            _("got 0: eager mode compiles nothing (its compile_time is 0.0); use "
              "jitted.compile_time"): 0.0,
        }
        reject_known_wrong(value, wrong, rtol=1e-3)
        raise Mistake(_("{what} gave {value:.4g}; expected {want:.4g} = "
                        "jitted.compile_time / (median eager epoch - median jit epoch)").format(
                          what=what, value=value, want=want))
    return N_("compile time / (median eager epoch - median jit epoch), on 2 made-up runs")


@functools.cache
def _jaxprs() -> dict[str, Any]:
    """The jaxprs the check counts in (:func:`._fixtures.lesson_jaxpr`), made here once."""
    return {name: _fixtures.lesson_jaxpr(name) for name in ("step", "loss", "none")}


def _matmuls(jaxpr: Any) -> int:
    return sum(eqn.primitive.name == "dot_general" for eqn in jaxpr.jaxpr.eqns)


@exercise(LESSON, 2, "matrix multiplies in one step")
def n_matmuls(student_fn: Any) -> str:
    jaxprs = _jaxprs()
    cases = more_when_graded(  # a table of the three written jaxprs' counts earns nothing graded
        tuple((name, 3) for name in jaxprs), 92,
        lambda draw: (("step", "loss")[int(draw.integers(0, 2))], int(draw.integers(2, 7))), 2)
    for name, layers in cases:
        jaxpr = jaxprs[name] if layers == 3 else _fixtures.lesson_jaxpr(name, layers)  # here
        what = {"step": _("count_matmuls(the jaxpr of one SGD step)"),
                "loss": _("count_matmuls(the jaxpr of the loss alone)"),
                "none": _("count_matmuls(the jaxpr of sin(x) * 2, with no matrix multiply)")}[name]
        handed = jaxpr if session_of(student_fn) is None else beside(
            student_fn, _fixtures.lesson_jaxpr, name, layers)  # the same, made where it runs
        got = call(student_fn, handed, what=what)
        value = expect_int(got, what, _("return a number, how many equations e of "
                                        "jaxpr.jaxpr.eqns have e.primitive.name == 'dot_general'"))
        want, eqns = _matmuls(jaxpr), jaxpr.jaxpr.eqns
        if value == want:
            continue
        reject_known_wrong(value, {
            _("{what} gave {value}, every equation; count only those whose "
              "primitive.name is 'dot_general'").format(what=what, value=value): len(eqns),
            _("{what} gave {value}, the number of different kinds of primitive; count "
              "the equations whose primitive.name is 'dot_general'").format(
                what=what, value=value): len({e.primitive.name
                                                                    for e in eqns}),
            _("{what} gave {value}, the equations that are NOT dot_general; count those "
              "that are").format(what=what, value=value): len(eqns) - want,
            _("{what} gave {value}: dot_general is one KIND of primitive, but a jaxpr "
              "can hold several equations of that kind; count every one").format(
                what=what, value=value): min(want, 1),
        }, want=want)
        raise Mistake(_("{what} gave {value}; expected {want}: count the equations e of "
                        "jaxpr.jaxpr.eqns with e.primitive.name == 'dot_general'").format(
                          what=what, value=value, want=want))
    layers, want = len(_fixtures.tiny_step_inputs()[0]), _matmuls(jaxprs["step"])
    if want != 3 * layers - 1:  # another JAX might differentiate differently
        return _("{want} matrix multiplies in one step; every other primitive is small").format(
                   want=want)
    return (_("{want} matrix multiplies in one step of a {layers}-layer network: "
              "{layers} forward, {layers} for the weight gradients and {layers2} to "
              "pass the gradient back through the hidden layers; none for the gradient "
              "of the images, which nobody needs").format(
                want=want, layers=layers, layers2=layers - 1))


@exercise(LESSON, 3, "the roofline")
def max_examples_per_second(student_fn: Any) -> str:
    rates = scaled((1e11, 2.5e9), 56)
    for rate, sizes in ((rates[0], [784, 512, 512, 10]), (rates[1], [100, 50, 10])):
        weights = sum(m * n for m, n in zip(sizes[:-1], sizes[1:]))
        want = rate / (6 * weights)
        what = f"max_examples_per_second({rate:g}, {sizes})"
        got = call(student_fn, rate, sizes, what=what)
        if np.ndim(got) != 0:
            raise Mistake(_("{what} returned {summary_got}; return one number").format(
                              what=what, summary_got=summary(got)))
        value = float(got)
        # biases (m * n + n) change the count by about 1%: not wrong, so allowed
        if np.isclose(value, want, rtol=0.02):
            continue
        reject_known_wrong(value, {
            N_("that is the forward pass alone: training costs about 3 forward passes (the "
               "backward pass does twice the forward work), so divide by 3 more"): 3 * want,
            N_("each weight costs 2 FLOPs per pass, a multiply AND an add"): 2 * want,
            N_("each weight costs 2 FLOPs per pass (a multiply and an add), and training is "
               "about 3 passes: 6 FLOPs per weight per example"): 6 * want,
            N_("the other way up: examples per second = FLOP/s / (FLOPs per example)"): 1 / want,
        }, rtol=0.02)
        raise Mistake(_("{what} gave {value:.4g}; expected {want:.4g} = rate / (3 * 2 * "
                        "sum of m * n over the layers)").format(
                          what=what, value=value, want=want))
    return N_("rate / (3 passes x 2 FLOPs x weights): the most examples per second SGD can reach")


@exercise(LESSON, 4, "time per example")
def per_example_time(student_fn: Any) -> str:
    cases = [  # (epoch times, batch size, steps per epoch): 4,000 images at batch 128 and 32
        ((0.30, 0.12, 0.13), 128, 31),
        ((0.50, 0.23, 0.25, 0.24), 32, 125),
    ]
    for number, (epoch_time, batch_size, steps) in enumerate(cases):
        epoch_time = scaled(epoch_time, 57 + number)
        history = beside(student_fn, History, "jit", batch_size, steps, 0.5,
                         epoch_time=epoch_time)
        what = _("per_example_time(history) for epochs {epoch_time} of {steps} x "
                 "{batch_size}").format(
                   epoch_time=epoch_time, steps=steps, batch_size=batch_size)
        got = call(student_fn, history, what=what)
        if np.ndim(got) != 0:
            raise Mistake(_("{what} returned {summary_got}; return one number").format(
                              what=what, summary_got=summary(got)))
        value = float(got)
        want = np.median(epoch_time) / (steps * batch_size)
        if np.isclose(value, want, rtol=1e-3):
            continue
        reject_known_wrong(value, {
            N_("that is the time per STEP; divide by the number of examples, steps_per_epoch * "
               "batch_size"): np.median(epoch_time) / steps,
            N_("divided by one batch only; an epoch trains on steps_per_epoch * batch_size "
               "examples"): np.median(epoch_time) / batch_size,
            N_("used the mean; use the median (np.median), which the slow first epoch does not "
               "pull up"): np.mean(epoch_time) / (steps * batch_size),
            N_("the other way up: that is examples per second; return seconds per example"):
                (steps * batch_size) / np.median(epoch_time),
        }, rtol=1e-3)
        raise Mistake(_("{what} gave {value:.4g}; expected {want:.4g} = median epoch "
                        "time / (steps_per_epoch * batch_size)").format(
                          what=what, value=value, want=want))
    return N_("median epoch time / examples per epoch, at batch 128 and 32")
