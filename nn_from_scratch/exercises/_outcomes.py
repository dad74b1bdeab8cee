"""What a checker finds besides a pass: the two exceptions that carry a verdict.

A checker raises :class:`Mistake` for a wrong answer (its message is the hint the
student reads) and :class:`NotDone` for a stub. :mod:`._core` turns them into a
:class:`~._core.CheckResult`; :mod:`._remote` recognises them when one is raised in
the student's kernel (by a stand-in the kernel was handed) and comes back over the
wire. Both sides need them, so they live here, below both, and import nothing::

    raise Mistake("predict returned shape (10, 1) for one example; expected (10,)")
"""

__all__ = ["Mistake", "NotDone", "verdict_errors"]


class Mistake(Exception):
    """Raised inside a checker for a wrong answer; the message is the hint the student sees."""


class NotDone(Exception):
    """Raised inside a checker when the answer is still the stub."""


def verdict_errors() -> dict[str, type]:
    """``"module.Name" -> class`` of the exceptions above: what :func:`..wire.decode_error`
    rebuilds as the very class when a kernel sends one back."""
    return {f"{cls.__module__}.{cls.__name__}": cls for cls in (Mistake, NotDone)}
