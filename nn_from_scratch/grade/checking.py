"""The grader's checks: each decided by the grader, never the kernel, on what the kernel computed.

At each check cell of a submission, the grader does not run the cell: it runs the
lesson's checker in a process of its own (:mod:`.checker_process`), with the student's
answers as :class:`~nn_from_scratch.exercises._remote.Remote` objects. Every call of the
student's code is a question to the kernel (:mod:`.answers`), on inputs drawn
for this grading from a seed the kernel has not seen (:func:`fresh_inputs`),
and every comparison happens there. Nothing the kernel displays, prints, patches
or imports reaches a verdict; the worst it can do is answer wrongly.

- :class:`KernelQuestions`: questions over the kernel's shell channel, as a Jupyter
  *user expression*, each within the check's time limit (past it, the kernel is
  interrupted and the check "timed out"), asked for a checker that runs in a process
  of its own (:mod:`.checker_process`).
- :class:`InProcess`: the same questions, answered by an :class:`.answers.Answers`
  in this process through the very same JSON: for the tests, and for the mutation
  tool's graded mode.
- :func:`check_here`: one check, start to end.
"""
import contextlib
import json
import queue
import secrets
import time
from typing import Any

from ..exercises._calls import fresh_inputs
from ..exercises._core import CheckResult
from ..exercises._remote import Session
from ..kernel_channel import MAX_MESSAGE
from .answers import MIME, Answers

__all__ = ["PROLOGUE", "CheckTimedOut", "InProcess", "KernelDied", "KernelQuestions",
           "check_here", "fresh_seed"]

# What the grader runs in a submission's kernel before its first cell (quietly, outside the
# kernel's history): the object that answers its questions.
PROLOGUE = ("from nn_from_scratch.grade.answers import Answers as _nn_from_scratch_Answers\n"
            "_nn_from_scratch_answers = _nn_from_scratch_Answers(globals(), afresh=True)\n"
            "del _nn_from_scratch_Answers")
GRACE = 10  # seconds an interrupted question gets to come back before the kernel is given up


class CheckTimedOut(BaseException):
    """The check ran past its time (a BaseException: no checker's ``except Exception`` eats it)."""


class KernelDied(BaseException):
    """The kernel stopped answering while it was checked."""


class InProcess(Session):
    """The kernel's side in this process: questions and answers go through JSON all the same."""

    def __init__(self, namespace: dict[str, Any], afresh: bool = False) -> None:
        super().__init__()
        self.answers = Answers(namespace, afresh)

    def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        reply = self.answers(json.dumps(question))
        return json.loads(json.dumps(reply.data))


class KernelQuestions:
    """Questions to a running kernel, asked on the event loop that owns its client, each
    answered by ``deadline`` (``time.monotonic()``) or the kernel is interrupted. The replies
    are not read here: they go, as they came, to the checker's process."""

    def __init__(self, kernel: Any, deadline: float) -> None:
        self.kernel, self.deadline = kernel, deadline

    async def _reply(self, msg_id: str, until: float) -> dict[str, Any] | None:
        client = self.kernel.client
        while (left := until - time.monotonic()) > 0:
            try:
                msg = await client.get_shell_msg(timeout=min(left, 1.0))
            except queue.Empty:  # nothing yet
                if not await self.kernel.manager.is_alive():
                    raise KernelDied() from None
                if await self.kernel.reconnect_requests():  # the reply was over MAX_MESSAGE
                    return {"user_expressions": {"a": {"status": "error", "ename": "ValueError",
                            "evalue": f"the answer was over {MAX_MESSAGE // 2**20} MB, the most "
                                      "one message to the grader may carry: refused unread"}}}
                continue
            except Exception:  # a reply Jupyter could not read (JSON nested 100,000 deep): the
                return {"user_expressions": {"a": {"status": "ok", "data": {}}}}  # answer's
            if msg.get("parent_header", {}).get("msg_id") == msg_id:      # only one asked
                return dict(msg.get("content", {}))
        return None

    async def ask(self, question: dict[str, Any]) -> dict[str, Any]:
        """The kernel's reply to ``question``: ``{"value": ...}`` or ``{"error": ...}``, as data;
        :class:`CheckTimedOut` past the deadline, :class:`KernelDied` if it stops answering."""
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
