"""Characters to numbers and back: the tokenizer of a character-level language model.

A language model predicts the next *token*; here a token is one character, so the vocabulary
is just the characters the training text uses, sorted (about 100 for English prose and code).
Id 0 is kept for "unknown": a character the training text never had (an emoji, a letter from
another alphabet) is encoded as 0 instead of failing, and decoded as :data:`UNKNOWN`, the
Unicode replacement character, so that it stays visible. Real GPTs use subword tokens (GPT-2:
50,257 of them, learned by byte-pair encoding); characters keep the vocabulary small and the
model's output layer tiny, at the price of longer sequences.

Nothing here needs JAX: ids are NumPy ``int32`` arrays.

    >>> tok = Tokenizer.from_text("hello world")
    >>> tok.chars, tok.vocab_size
    (' dehlorw', 9)
    >>> tok.encode("hold!")
    array([4, 6, 5, 2, 0], dtype=int32)
    >>> tok.decode(tok.encode("hold!"))
    'hold\ufffd'
"""
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ._checks import InputError, InputTypeError

__all__ = ["UNKNOWN", "Tokenizer"]

UNKNOWN = "\ufffd"  # '�', what decode shows for id 0, a character the vocabulary lacks


@dataclass(frozen=True)
class Tokenizer:
    """A character vocabulary: id ``i + 1`` is ``chars[i]``; id 0 is "unknown".

    Attributes:
      chars: the vocabulary, each character once, sorted (make it with :meth:`from_text`).
    """

    chars: str

    def __post_init__(self) -> None:
        if not isinstance(self.chars, str):
            raise InputTypeError(f"Tokenizer takes its vocabulary as one str of characters; got "
                                 f"{type(self.chars).__name__}. Use Tokenizer.from_text(text).")
        if list(self.chars) != sorted(set(self.chars)):
            raise InputError(f"Tokenizer's chars must be distinct and sorted, as "
                             f"Tokenizer.from_text(text) makes them; got {self.chars[:40]!r}.")
        # a lookup table from code point to id (0 for any other character), built once
        table = np.zeros(max(map(ord, self.chars), default=0) + 1, np.int32)
        table[[ord(c) for c in self.chars]] = np.arange(1, len(self.chars) + 1)
        object.__setattr__(self, "_ids", table)

    @classmethod
    def from_text(cls, text: str) -> "Tokenizer":
        """The vocabulary of ``text``: every character it uses, sorted. Build it from the
        training split only, so that the validation split is not peeked at."""
        if not isinstance(text, str) or not text:
            raise InputError(f"Tokenizer.from_text needs a non-empty str; got "
                             f"{type(text).__name__} {str(text)[:40]!r}.")
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        """``V``: the characters, plus one for "unknown" (id 0)."""
        return len(self.chars) + 1

    def encode(self, text: str) -> np.ndarray:
        """``text`` as ids, ``(len(text),)`` int32; a character not in the vocabulary is 0."""
        if not isinstance(text, str):
            raise InputTypeError(f"encode takes a str; got {type(text).__name__}. To decode "
                                 f"ids back to text, use decode.")
        codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)  # one code point each
        table: np.ndarray = self._ids  # type: ignore[attr-defined]
        known = codes < len(table)
        return np.where(known, table[np.where(known, codes, 0)], 0).astype(np.int32)

    def decode(self, ids: Iterable[int] | np.ndarray) -> str:
        """Ids ``(T,)`` (any integers: a list, NumPy or JAX array) back to text; id 0 gives
        :data:`UNKNOWN`."""
        array = np.asarray(ids)
        if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
            raise InputError(f"decode takes ONE sequence of integer ids (T,); got shape "
                             f"{array.shape}, dtype {array.dtype}. For a batch, decode each row.")
        if array.size and (array.min() < 0 or array.max() >= self.vocab_size):
            raise InputError(f"decode: ids must be between 0 and {self.vocab_size - 1} (the "
                             f"vocabulary); got {int(array.min())}..{int(array.max())}. Were "
                             f"they made with another tokenizer?")
        alphabet = UNKNOWN + self.chars
        return "".join(alphabet[i] for i in array.tolist())
