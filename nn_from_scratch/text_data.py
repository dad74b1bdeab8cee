"""Real text with no download: the Python documentation that ships with every CPython.

:func:`load_text` is the text path beside :func:`~nn_from_scratch.data.load_dataset`'s
images (``data.py`` re-exports it). Its corpus is ``pydoc_data.topics``, the help pages that
``help("assert")`` prints, installed with Python itself: about 0.47-0.51 MB of English prose
and code examples in about 80 topics, 103-104 distinct characters. It was chosen because every
fresh install already has it (no network, nothing copied into this repository, no licence
question), because it is big enough for a small GPT to beat add-alpha counting and draw level
with back-off counting (``ngram.py``; a names list is not),
and because it mixes prose, code and reStructuredText, so that a sample shows at a glance
what the model learned. It differs a little between Python versions (3.11.7: 465,126
characters, 103 distinct; newer versions add topics), so every figure quoted from it names
the Python version: :attr:`TextDataset.source` says which text was read.

The topics are joined in sorted order, and split by position: the first 90 % trains, the
last 10 % validates. A split by position, unlike a shuffle of windows, leaves no validation
window sharing a position with a training window (a few topics are only in the validation
part). Its text can still repeat the training text: the documentation repeats boilerplate and
whole passages, and about 8 % of the 128-character validation windows occur verbatim in the
training text. The validation part is also easier: every model scores lower on it (the bigram
3.35 bits per character against 3.57 on the training text), so compare models on one split.
"""
import sys
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import InputError, check_choice, check_positive_int
from .i18n import _
from .text import Tokenizer

__all__ = ["TEXTS", "TextDataset", "load_text", "windows"]

TEXTS = ("python_docs",)


def _python_docs() -> str:
    """The help topics of this Python, joined in sorted order, with a blank line between."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name] for name in sorted(topics))


@dataclass(frozen=True)
class TextDataset:
    """A text split by position into training and validation, and its tokenizer.

    Attributes:
      train_text, val_text: the two parts, the first ``1 - val_fraction`` and the rest.
      tokenizer: the vocabulary of ``train_text`` only (validation characters it lacks are 0).
      train_ids, val_ids: both texts encoded, ``(n_train,)`` and ``(n_val,)`` int32.
      name: ``"python_docs"``.
      source: one line saying what the text is, which Python's, and its size.
    """

    train_text: str = field(repr=False)
    val_text: str = field(repr=False)
    tokenizer: Tokenizer = field(repr=False)
    train_ids: np.ndarray = field(repr=False)
    val_ids: np.ndarray = field(repr=False)
    name: str
    source: str

    def windows(self, starts: jax.Array | np.ndarray, context: int,
                split: str = "train") -> tuple[jax.Array, jax.Array]:
        """``(x, y)`` windows of this data set's ``split``: see :func:`windows`."""
        check_choice(split, "split", ("train", "val"))
        return windows(self.train_ids if split == "train" else self.val_ids, starts, context)

    def __str__(self) -> str:
        return _("Text {name}: {source}; {train:,} characters for training, {val:,} for "
                 "validation (the last {share:.0%}); {vocab} tokens (the training text's "
                 "characters and 1 for unknown)").format(
                     name=self.name, source=self.source, train=len(self.train_ids),
                     val=len(self.val_ids),
                     share=len(self.val_ids) / (len(self.train_ids) + len(self.val_ids)),
                     vocab=self.tokenizer.vocab_size)


def windows(ids: jax.Array | np.ndarray, starts: jax.Array | np.ndarray,
            context: int) -> tuple[jax.Array, jax.Array]:
    """Training pairs cut from ONE long text: ``x[i] = ids[s : s + T]``, ``y[i] = ids[s + 1 :
    s + T + 1]`` for ``s = starts[i]``: at every position the target is the next character.

    Args:
      ids: ``(n,)`` int token ids.
      starts: ``(B,)`` ints, each in ``0 .. n - context - 1``.
      context: ``T``, the window's length (static under ``jit``).

    Returns:
      ``(x, y)``, each ``(B, T)`` int32. Works under ``jit`` (``starts`` may be traced).
    """
    check_positive_int(context, "context", minimum=1)
    n = jnp.shape(ids)[0]
    if n < context + 1:
        raise InputError(f"windows of context {context} need at least {context + 1} tokens "
                         f"(a window and the character after it); the text has {n}. Use a "
                         f"smaller context or a longer text.")
    ids = jnp.asarray(ids, jnp.int32)

    def one(start: jax.Array) -> jax.Array:  # ONE window and its next character: (T + 1,)
        return jax.lax.dynamic_slice_in_dim(ids, start, context + 1)

    both = jax.vmap(one)(jnp.asarray(starts, jnp.int32))  # (B, T + 1)
    return both[:, :-1], both[:, 1:]


def load_text(name: str = "python_docs", val_fraction: float = 0.1) -> TextDataset:
    """A text to model, split by position (see the module docstring for the corpus).

    Args:
      name: ``"python_docs"``, this Python's own documentation (``pydoc_data.topics``).
      val_fraction: the share at the end kept for validation, between 0 and 0.5.

    Returns:
      a :class:`TextDataset`; its tokenizer is built from the training part.
    """
    check_choice(name, "name", TEXTS)
    if not isinstance(val_fraction, (int, float)) or not 0 < val_fraction <= 0.5:
        raise InputError(f"val_fraction is the share of the text kept for validation, a number "
                         f"above 0 and at most 0.5; got {val_fraction!r}. The usual is 0.1.")
    try:
        text = _python_docs()
    except ImportError as err:  # some Linux distributions split it into another package
        raise InputError(f"load_text('python_docs') reads pydoc_data.topics, which this Python "
                         f"lacks ({err}); install your distribution's full Python (e.g. "
                         f"python3-full, or the python3-doc package).") from None
    cut = round(len(text) * (1 - val_fraction))
    train_text, val_text = text[:cut], text[cut:]
    tokenizer = Tokenizer.from_text(train_text)
    version = ".".join(map(str, sys.version_info[:3]))
    source = _("the help topics of Python {version} (pydoc_data.topics, no download): "
               "{chars:,} characters, {distinct} distinct").format(
                   version=version, chars=len(text), distinct=len(set(text)))
    return TextDataset(train_text, val_text, tokenizer, tokenizer.encode(train_text),
                       tokenizer.encode(val_text), name, source)
