"""Flags on student code that reaches for the grader's machinery instead of doing the exercise.

Code in the kernel can always, with enough effort, fool a grader that runs in
the same process (by patching NumPy, JAX or the display machinery); nbgrader and
otter-grader say the same. What the grader can do is say so: every cell the
student wrote (exercise cells and added cells) is read, and what no exercise
needs is named in the notebook's notes for the instructor to look at. A flag
changes no points.
"""
import ast
import io
import re
import tokenize
import unicodedata

from ..parsing import parse
from .reaching import reaching

__all__ = ["ORDER", "flags", "signs"]

REACHES = ("reaches any object of the kernel (gc.get_objects, __subclasses__, frames), the "
           "grader's answering object included")
# (pattern, what the note says); checked on the student's own cells only.
SIGNS: tuple[tuple[str | None, str], ...] = (
    # any mention, not only at the start of an import: `import math, nn_from_scratch.autodiff`,
    # a name resolved from a string (red team, round four)
    (r"(?<![/\\])\bnn_from_scratch\b(?![/\\])", "imports nn_from_scratch (the library's own code)"),
    # a folder of that name in a path (Colab's `sys.path.insert(0, ".../nn_from_scratch")`)
    # imports nothing by itself, but the library's files can be loaded from it (sys.path,
    # runpy.run_path) under other names: said as what it is (red team, round six)
    (r"[/\\]nn_from_scratch\b|\bnn_from_scratch[/\\]",
     "names a folder nn_from_scratch in a path (the library's files can be loaded from it)"),
    (r"_nn_from_scratch_answers", "touches the grader's answering object"),
    (None, REACHES),  # read as grade/reaching.py reads it: the note where the points go
    (r"\b__main__\b", "touches __main__ (names bound where the grader does not read them)"),
    (r"\b[sg]et(?:profile|trace)\b",
     "reads or switches Python's profiler or tracer (sys.setprofile, sys.getprofile)"),
    (r"\bglobals\s*\(|\bvars\s*\(|\blocals\s*\(",
     "reaches names through globals(), vars() or locals()"),
    # (round twenty-seven, on Python 3.11: the kernel's own output thread, through
    # sys.stdout's pub_thread or its echo, and XLA's threads, through a callback)
    (r"\bthreading\b|\b_thread\b|\bThreadPoolExecutor\b|\bconcurrent\.futures\b|"
     r"\bpub_thread\b|\bstd(?:out|err)\s*\.\s*echo\b|\b(?:pure|io)_callback\b",
     "runs code in other threads"),
    (r"\bsys\.modules\b", "touches sys.modules"),
    (r"\b__builtins__\b|\bimport\s+builtins\b|\bbuiltins\.", "touches builtins"),
    (r"\bcheck\s*=(?!=)|\bcheck\.\w+\s*=(?!=)|setattr\(\s*check\b", "rebinds or patches `check`"),
    (r"\bexercises\b", "names the checkers' package (exercises)"),
    # the checkers' module reached for anything but a check (round ten: `check.model.relu`,
    # the library through the notebook's own `check`, `check.__file__`)
    # (and getattr(check, "model"), round twenty-seven: the library with no note)
    (r"\bcheck\s*\.\s*\w+\b(?!\s*\()|\b(?:getattr|hasattr)\s*\(\s*check\s*,",
     "reaches into the checkers' module (check.<name>, not a check called)"),
    (r"\bimportlib\b|\b__import__\b", "imports modules by name (importlib)"),
    (r"\b_getframe\b|\bcurrentframe\b|\bf_locals\b|\bf_globals\b|\bf_back\b|\btb_frame\b|"
     r"\b[gc]r?_frame\b|\binspect\s*\.\s*(?:stack|trace|getouterframes|getinnerframes|"
     r"getargvalues)\b", "inspects the call stack"),
    (r"\bget_ipython\b|\bdisplay_pub\b|\bpublish_display_data\b|vnd\.nn-from-scratch",
     "reaches into IPython's display"),
    # round fifteen: the shell's table of namespaces, reached with no get_ipython()
    (r"\bInteractiveShell\b|\bns_table\b|\buser_module\b|\buser_ns(?:_hidden)?\b|"
     r"\buser_global_ns\b", "reaches IPython's shell and its namespaces"),
    # round seven: text run as code (a docstring's, IPython's input history), event hooks
    (r"(?<!\.)\b(?:exec|eval|compile)\s*\(", "runs text as code (exec, eval, compile)"),  # (a
    # method named eval, tracker.eval(): a red team's false positive, round sixteen)
    (r"\b__doc__\b", "reads a docstring (__doc__) as data"),
    (r"\bIn\s*\[|\bOut\s*\[|\b_i(?:h|i{1,2}|\d+)\b|\b_oh\b",
     "reads IPython's input or output history"),
    (r"\bevents\s*\.\s*register\b", "registers an IPython event hook"),
)


ORDER = [what for _pattern, what in SIGNS]  # the order notes are given in

# the script idiom, which names __main__ without touching it
MAIN_IDIOM = r"""\b__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__\b"""


def _without_docstrings(text: str) -> str:
    """``text`` with every string that stands alone as a statement (a docstring, a note
    written as a bare string) blanked: it runs nothing, whatever it names. A string that is
    used (``import_module("nn_from_scratch.model")``, a path) is code and kept."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return text
    lines = re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text)  # Python's own line ends only
    # (not \x0c, \u2028...: one in a comment shifted the blanking onto code, round seven)
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str) and node.end_lineno is not None:
            for number in range(node.lineno - 1, node.end_lineno):
                encoded = lines[number].encode()  # ast's columns count UTF-8 bytes
                start = node.col_offset if number == node.lineno - 1 else 0
                end = node.end_col_offset if number == node.end_lineno - 1 and \
                    node.end_col_offset is not None else len(encoded)
                kept = encoded[:start] + b" " * (end - start) + encoded[end:]
                lines[number] = kept.decode(errors="replace")
    return "".join(lines)


def _code(source: str) -> str:
    """``source`` as Python reads it: identifiers NFKC-normalised (``ｎn_from_scratch`` IS
    ``nn_from_scratch`` to Python: red team, round five), comments and docstrings left out (an
    honest note that mentions the library is no code: rounds five and six), the script idiom
    ``__name__ == "__main__"`` too."""
    # docstrings and comments found in the source Python runs, and only then normalised:
    # NFKC makes quotes of ＂ and a comment sign of ＃ (inside a string to Python), and so a line
    # of code a string or a comment (rounds seven and eight)
    text = _without_docstrings(source)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        text = tokenize.untokenize(t._replace(string="") if t.type == tokenize.COMMENT else t
                                   for t in tokens)  # full tokens: the spacing is kept
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # read as it is: a cell that does not tokenize does not run either
    return re.sub(MAIN_IDIOM, "", unicodedata.normalize("NFKC", text))


# what is said only of code, not of the text in its strings: print("exercises done") names no
# package (red team, round fourteen: an honest notebook's string drew that note)
_IN_CODE_ONLY = {"names the checkers' package (exercises)",
                 "reads IPython's input or output history"}  # (a string "In [3]": round 14)


def _without_strings(code: str) -> str:
    """``code`` with the text of its strings blanked (f-strings' expressions kept)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return code
    text = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    return tokenize.untokenize(t._replace(string='""' if t.type == tokenize.STRING else " ")
                               if t.type in text else t for t in tokens)


def signs(source: str) -> list[str]:
    """What one student cell does that no exercise needs, in :data:`SIGNS`' order (the
    library and the grader's machinery first), e.g. ``["touches sys.modules"]``."""
    code = _code(source)
    bare = _without_strings(code)
    return [what for pattern, what in SIGNS
            if (pattern is None and _reaches(code)) or pattern is not None and re.search(
                pattern, bare if what in _IN_CODE_ONLY else code)]


def _reaches(code: str) -> bool:
    try:
        return bool(reaching(parse(code)))
    except (SyntaxError, ValueError):
        return False


def flags(label: str, source: str) -> list[str]:
    """The notes for one student cell, e.g. ``"exercise cell of 07.4 touches sys.modules"``."""
    return [f"{label} {what}" for what in signs(source)]
