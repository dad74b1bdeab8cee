"""Python source parsed safely from several threads at once.

The grader prepares notebooks in threads (``--jobs N``), and preparing parses their code more
than once: the copying reader (``grade/reading.py``), the check cells (``grade/verdicts.py``),
a Chinese edition's docstrings (``i18n.docstrings``). CPython 3.11's parser keeps its nesting
count for the whole interpreter, so two parses at once can fail with ``SystemError: AST
constructor recursion depth mismatch``, which says nothing about the source (seen at
``--jobs 2``, a right notebook scored 0 as "could not be prepared"; CPython 3.12+ keeps the
count per thread). :func:`parse` is the one ``ast.parse`` of the package: one thread at a time,
and tried again on that error, since anything else that builds an AST in another thread
(``traceback`` does, to underline the failing expression) touches the same count and no lock
here can hold it back.
"""
import ast
import threading

__all__ = ["AST_RACE", "parse"]

_PARSING = threading.Lock()
AST_RACE = "recursion depth mismatch"  # in the SystemError of the race above
_TRIES = 4


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time, tried again on CPython 3.11's race.
    Raises ``SyntaxError``."""
    for attempt in range(_TRIES):
        try:
            with _PARSING:
                return ast.parse(source)
        except SystemError as err:  # the race above, never the source's fault
            if AST_RACE not in str(err) or attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")
