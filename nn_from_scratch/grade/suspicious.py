"""Flags on student code that reaches for the grader's machinery instead of doing the exercise.

Code in the kernel can always, with enough effort, fool a grader that runs in
the same process (by patching NumPy, JAX or the display machinery); nbgrader and
otter-grader say the same. What the grader can do is say so: every cell the
student wrote (exercise cells and added cells) is read, and what no exercise
needs is named in the notebook's notes for the instructor to look at. A flag
changes no points.
"""
import re

__all__ = ["flags"]

# (pattern, what the note says); checked on the student's own cells only.
SIGNS = (
    # any mention, not only at the start of an import: `import math, nn_from_scratch.autodiff`,
    # a name resolved from a string (red team, round four)
    (r"\bnn_from_scratch\b", "imports nn_from_scratch (the library's own code)"),
    (r"_nn_from_scratch_answers", "touches the grader's answering object"),
    (r"\b__main__\b", "touches __main__ (names bound where the grader does not read them)"),
    (r"\bset(?:profile|trace)\b", "switches Python's profiler or tracer (sys.setprofile)"),
    (r"\bthreading\b|\b_thread\b|\bThreadPoolExecutor\b|\bconcurrent\.futures\b",
     "runs code in other threads"),
    (r"\bsys\.modules\b", "touches sys.modules"),
    (r"\b__builtins__\b|\bimport\s+builtins\b|\bbuiltins\.", "touches builtins"),
    (r"\bcheck\s*=(?!=)|\bcheck\.\w+\s*=(?!=)|setattr\(\s*check\b", "rebinds or patches `check`"),
    (r"\bexercises\b", "names the checkers' package (exercises)"),
    (r"\bimportlib\b|\b__import__\b", "imports modules by name (importlib)"),
    (r"\b_getframe\b|\bcurrentframe\b|\bgc\.get_(?:referrers|objects)\b|\bf_locals\b|\bf_globals\b",
     "inspects the call stack"),
    (r"\bget_ipython\b|\bdisplay_pub\b|\bpublish_display_data\b|vnd\.nn-from-scratch",
     "reaches into IPython's display"),
)


def flags(label: str, source: str) -> list[str]:
    """The notes for one student cell, e.g. ``"exercise cell of 07.4 touches sys.modules"``."""
    return [f"{label} {what}" for pattern, what in SIGNS if re.search(pattern, source)]
