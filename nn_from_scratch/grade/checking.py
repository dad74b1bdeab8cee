"""The grader's checks: each decided in the grader's own process, on answers the kernel computed.

At each check cell of a submission, the grader does not run the cell: it runs the
lesson's checker *here*, with the student's answers as
:class:`~nn_from_scratch.exercises._remote.Remote` objects. Every call of the
student's code is a question to the kernel (:mod:`.answers`), on inputs drawn
for this grading from a seed the kernel has not seen (:func:`fresh_inputs`),
and every comparison happens here. Nothing the kernel displays, prints, patches
or imports reaches a verdict; the worst it can do is answer wrongly.

- :class:`KernelSession`: questions over the kernel's shell channel, as a Jupyter
  *user expression*, each within the check's time limit (past it, the kernel is
  interrupted and the check "timed out").
- :class:`InProcess`: the same questions, answered by an :class:`.answers.Answers`
  in this process through the very same JSON: for the tests, and for the mutation
  tool's graded mode.
- :func:`check_here`: one check, start to end.
"""
import asyncio
import contextlib
import json
import secrets
import time
from typing import Any

from ..exercises._calls import fresh_inputs
from ..exercises._core import CheckResult
from ..exercises._hints import first_line
from ..exercises._remote import Session
from ..notebook_runner import CellRun, Hook, Kernel
from .answers import MIME, Answers

__all__ = ["PROLOGUE", "CheckTimedOut", "InProcess", "KernelDied", "KernelSession", "check_here",
           "fresh_seed", "grading_hook"]

# What the grader runs in a submission's kernel before its first cell (quietly, outside the
# kernel's history): the object that answers its questions.
PROLOGUE = ("from nn_from_scratch.grade.answers import Answers as _nn_from_scratch_Answers\n"
            "_nn_from_scratch_answers = _nn_from_scratch_Answers(globals())\n"
            "del _nn_from_scratch_Answers")
GRACE = 10  # seconds an interrupted question gets to come back before the kernel is given up


class CheckTimedOut(BaseException):
    """The check ran past its time (a BaseException: no checker's ``except Exception`` eats it)."""


class KernelDied(BaseException):
    """The kernel stopped answering while it was checked."""


class InProcess(Session):
    """The kernel's side in this process: questions and answers go through JSON all the same."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        super().__init__()
        self.answers = Answers(namespace)

    def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        reply = self.answers(json.dumps(question))
        return json.loads(json.dumps(reply.data))


class KernelSession(Session):
    """Questions to a running kernel, from a checker running in a thread of this process.

    ``loop`` is the event loop that owns ``kernel``'s client; ``deadline`` the time
    (``time.monotonic()``) by which the whole check must be done.
    """

    def __init__(self, kernel: Any, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        super().__init__()
        self.kernel, self.loop, self.deadline = kernel, loop, deadline

    def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        future = asyncio.run_coroutine_threadsafe(self._ask(question), self.loop)
        return future.result()

    async def _reply(self, msg_id: str, until: float) -> dict[str, Any] | None:
        client = self.kernel.client
        while (left := until - time.monotonic()) > 0:
            try:
                msg = await client.get_shell_msg(timeout=min(left, 1.0))
            except Exception:  # queue.Empty: nothing yet
                if not await self.kernel.manager.is_alive():
                    raise KernelDied() from None
                continue
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                return dict(msg.get("content", {}))
        return None

    async def _ask(self, question: dict[str, Any]) -> dict[str, Any]:
        expression = f"_nn_from_scratch_answers({json.dumps(question)!r})"
        msg_id = self.kernel.client.execute("", silent=True, store_history=False,
                                            user_expressions={"a": expression},
                                            allow_stdin=False)
        content = await self._reply(msg_id, self.deadline)
        if content is None:  # past the check's time: stop the student's code, say so
            await self.kernel.manager.interrupt_kernel()
            if await self._reply(msg_id, time.monotonic() + GRACE) is None:
                raise KernelDied()
            raise CheckTimedOut()
        answer = content.get("user_expressions", {}).get("a", {})
        if answer.get("status") != "ok":  # the notebook removed or broke the answering object
            return {"error": {"type": str(answer.get("ename", "Error")), "module": "student",
                              "message": str(answer.get("evalue", ""))[:2000], "cause": None}}
        data = answer.get("data", {}).get(MIME)
        return data if isinstance(data, dict) else {"error": {
            "type": "ValueError", "module": "builtins", "cause": None,
            "message": "the kernel gave no answer the grader can read"}}


def fresh_seed() -> int:
    """A seed for one grading's inputs, which no kernel can know before it is asked."""
    return secrets.randbits(32)


def check_here(session: Session, checker: Any, names: list[str], seed: int | None) -> CheckResult:
    """Run ``checker`` here on the objects the notebook calls ``names``, through ``session``,
    on inputs drawn from ``seed`` (:func:`fresh_seed`; ``None``: a check in class's inputs).
    Raises :class:`CheckTimedOut` or :class:`KernelDied`; a name the notebook never defined
    is the ``NameError`` Python would raise."""
    with fresh_inputs(seed) if seed is not None else contextlib.nullcontext():
        answers = [session.lookup(name) for name in names]
        result = checker(*answers)
    try:
        session.forget()
    except Exception:  # a kernel that cannot forget is cleaned up with the kernel
        pass
    return result


def grading_hook(index: int, checker: Any, names: tuple[str, ...],
                 verdicts: dict[str, dict[str, str]], exercise: str) -> Hook:
    """What the grader does at a check cell: ``checker`` run here, in a thread of its own (the
    kernel's client stays on this loop), on inputs drawn for this grading; its verdict goes to
    ``verdicts[exercise]``, and the cell's run says how the check went."""
    async def hook(kernel: Kernel, limit: float) -> CellRun:
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        session = KernelSession(kernel, loop, start + limit)
        try:
            result = await loop.run_in_executor(None, check_here, session, checker, list(names),
                                                fresh_seed())
        except CheckTimedOut:
            return CellRun(index, "timed out", f"was interrupted after {limit:.0f} s",
                           time.monotonic() - start)
        except KernelDied:
            return CellRun(index, "error", "made the kernel die (a crash)",
                           time.monotonic() - start)
        except Exception as err:  # the answer was never defined (NameError), or gibberish
            verdicts[exercise] = {"status": "error", "message": first_line(err, 300)}
            return CellRun(index, "error", first_line(err, 300), time.monotonic() - start,
                           raised=True)
        verdicts[exercise] = {"status": result.status, "message": result.message}
        return CellRun(index, "ok", "", time.monotonic() - start)
    return hook
