"""Checks in a process of the grader's own (grade/checker_process.py): a deadline the grader
enforces whatever the checker does, and nothing the checker meets (a kill, an interrupt, a
frozen process) reaches the grader; the next check gets a fresh process and passes.

The kernel here is an :class:`~nn_from_scratch.grade.answers.Answers` in this process behind
the same JSON (KernelQuestions.ask replaced), so each test needs no Jupyter kernel."""
import asyncio
import json
import os
import signal
import time

import jax.numpy as jnp
import pytest

from nn_from_scratch.grade import checker_process
from nn_from_scratch.grade.answers import Answers
from nn_from_scratch.grade.checker_process import CheckerProcess
from nn_from_scratch.grade.checking import CheckTimedOut, KernelQuestions

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals are POSIX's")
JOB = {"module": "mlp_from_scratch", "checker": "relu", "names": ["relu"], "seed": 7,
       "language": "en"}


def relu(x):
    return jnp.maximum(0, x)


@pytest.fixture
def kernel(monkeypatch):
    """A stand-in kernel: ``before(question)`` runs before each answer (to stop the child)."""
    answers = Answers({"relu": relu})
    hooks = []

    async def ask(self, question):
        for hook in hooks:
            hook(question)
        return json.loads(json.dumps(answers(json.dumps(question)).data))

    monkeypatch.setattr(KernelQuestions, "ask", ask)
    return hooks


def run(coroutine):
    return asyncio.run(coroutine)


async def one_check():
    checkers = CheckerProcess()
    try:
        return await checkers.check(None, JOB, 60)
    finally:
        await checkers.stop()


def test_a_check_in_the_process_gives_the_verdict_a_check_here_gives(kernel):
    verdict = run(one_check())
    assert verdict["status"] == "passed", verdict


def test_a_frozen_checker_cannot_stretch_the_deadline(kernel):
    """The checker stopped (as a checker computing for hours would be) after its first
    question: the grader says "timed out" at the deadline, kills it, and the next check runs
    in a fresh process and passes."""
    async def go():
        checkers = CheckerProcess()
        process = await checkers.start()
        kernel.append(lambda question: os.kill(process.pid, signal.SIGSTOP))
        start = time.monotonic()
        with pytest.raises(CheckTimedOut):
            await checkers.check(None, JOB, 3)
        took = time.monotonic() - start
        assert process.returncode is not None  # killed, not left behind
        kernel.clear()
        try:
            return took, await checkers.check(None, JOB, 60)
        finally:
            await checkers.stop()

    took, verdict = run(go())
    assert took < 3 + 5, took  # the import before the clock, then 3 s and not more
    assert verdict["status"] == "passed", verdict


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_a_checker_interrupted_or_killed_is_one_error_row_and_the_next_check_passes(kernel, how):
    """KeyboardInterrupt inside the checker (SIGINT), or the checker's process gone (SIGKILL,
    as os._exit or SystemExit would leave it): one error verdict, nothing raised here."""
    async def go():
        checkers = CheckerProcess()
        process = await checkers.start()
        kernel.append(lambda question: os.kill(process.pid, how))
        try:
            hit = await checkers.check(None, JOB, 60)
            kernel.clear()
            return hit, await checkers.check(None, JOB, 60)
        finally:
            await checkers.stop()

    hit, verdict = run(go())
    if how == signal.SIGINT and hit["status"] == "passed":
        # Python raises KeyboardInterrupt at the next bytecode of the main thread; when that is
        # inside a __del__ or a weakref callback, Python prints "Exception ignored" and goes on,
        # and the check ends as it would have (seen in two full runs of the suite, never alone): a
        # verdict of its own, nothing raised here, which is what this test guards
        assert hit["message"] == verdict["message"], hit
    else:
        assert hit["status"] == "error", hit
        expected = "KeyboardInterrupt" if how == signal.SIGINT else "stopped its process"
        assert expected in hit["message"], hit
    assert verdict["status"] == "passed", verdict


def test_a_reply_too_deep_to_relay_is_a_wrong_answer(kernel, monkeypatch):
    deep: object = 0
    for _ in range(100_000):
        deep = [deep]

    async def ask(self, question):
        return {"value": deep}

    monkeypatch.setattr(KernelQuestions, "ask", ask)
    verdict = run(one_check())
    assert verdict["status"] == "error" and "no answer the grader can read" in verdict["message"]
    assert checker_process.READY >= 60
