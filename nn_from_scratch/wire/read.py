"""Reading the wire's JSON form: :func:`decode`, bounded, importing and calling nothing a
message names.

Every kind it makes is fixed in :mod:`.write`; it counts as it reads, and stops at
:data:`LIMITS` (characters and bytes, nesting, values) with :class:`TooBig`. No part costs
more than its size: a dict whose keys share hashes (integers chosen to collide make a
dict quadratic to build: 150,000 of them took 450 s) is refused before it is built.
"""
import base64
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .write import ARRAY_KINDS, import_named, named_tuples

__all__ = ["LIMITS", "Limits", "TooBig", "decode", "json_values"]

_KEY_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg")  # JAX's own PRNG implementations
_SAME_HASH = 8  # keys of one dict that may share a hash: past it, building it is quadratic


@dataclass(frozen=True)
class Limits:
    """How much one message may hold: characters of strings plus bytes of arrays, nesting
    levels, and values (every number, string, container and array counts one)."""

    size: int = 64 * 2**20
    depth: int = 64
    items: int = 250_000


LIMITS = Limits()


class TooBig(ValueError):
    """A message past :data:`LIMITS`: refused at once, as a wrong answer."""


def json_values(raw: bytes) -> int:
    """At least as many as the JSON values ``raw`` holds, from its bytes, without parsing it:
    every value but the first follows a ``{``, a ``[`` or a ``,`` (those in strings count
    too). Parsing costs per value (16 MB of ``{},`` is 5.6 million dicts, 350 MB), counting
    per byte."""
    return raw.count(b"{") + raw.count(b"[") + raw.count(b",")


def _spread(keys: list[Any]) -> None:
    """Refuse keys that share hashes (a dict of them costs time quadratic in their number);
    sorting the hashes costs n log n, whatever they are."""
    try:
        hashes = sorted(hash(key) for key in keys)
    except TypeError:  # an array as a key: never made by encode
        raise ValueError("a dict with a key that cannot be a key") from None
    run = 1
    for before, after in zip(hashes, hashes[1:]):
        run = run + 1 if before == after else 1
        if run > _SAME_HASH:
            raise TooBig(f"a dict of {len(keys)} keys, more than {_SAME_HASH} of them with "
                         f"one hash: refused rather than built in quadratic time")


class _Reader:
    """One message read against ``limits``: each value counted as it is made."""

    def __init__(self, resolve: Callable[[dict[str, Any]], Any], named: bool,
                 limits: Limits) -> None:
        self.resolve, self.named, self.limits = resolve, named, limits
        self.size = self.items = 0

    def count(self, size: int = 0) -> None:
        self.items, self.size = self.items + 1, self.size + size
        if self.items > self.limits.items or self.size > self.limits.size:
            raise TooBig(f"an answer of more than {self.limits.items:,} values or "
                         f"{self.limits.size // 2**20} MB: refused")

    def many(self, data: dict[str, Any], field: str, depth: int) -> list[Any]:
        items = data.get(field)
        if type(items) is not list:
            raise ValueError(f"a {data.get('t')!r} without its list")
        return [self.read(item, depth + 1) for item in items]

    def array(self, data: dict[str, Any]) -> np.ndarray:
        text = data.get("d")
        if type(text) is not str:
            raise ValueError("an array without its data")
        self.count(len(text))
        array = np.load(io.BytesIO(base64.b64decode(text, validate=True)), allow_pickle=False)
        if array.dtype.kind not in ARRAY_KINDS:
            raise ValueError(f"an array of {array.dtype}: only booleans and numbers cross")
        return array

    def read(self, data: Any, depth: int = 0) -> Any:
        if depth > self.limits.depth:
            raise TooBig(f"an answer nested more than {self.limits.depth} levels deep: refused")
        if data is None or type(data) in (bool, int, float, str):
            self.count(len(data) if type(data) is str else 0)
            return data
        if type(data) is not dict:  # never made by encode: a tampered message
            raise ValueError(f"a bare {type(data).__name__}")
        self.count()
        kind = data.get("t")
        if kind == "...":
            return Ellipsis
        if kind == "int" and type(data.get("v")) is str and len(data["v"]) <= 400:
            return int(data["v"])
        if kind in ("list", "tuple"):
            items = self.many(data, "v", depth)
            return items if kind == "list" else tuple(items)
        if kind == "namedtuple":  # Optax's states, from the fixed list; nothing imported
            cls = named_tuples().get(data.get("ref"))  # type: ignore[arg-type]
            if cls is None:
                raise ValueError(f"{str(data.get('ref'))[:80]} is not a named tuple that crosses")
            return tuple.__new__(cls, self.many(data, "v", depth))
        if kind == "dict":
            keys, values = self.many(data, "k", depth), self.many(data, "v", depth)
            if len(keys) != len(values):
                raise ValueError("a dict with more keys than values, or fewer")
            _spread(keys)
            return dict(zip(keys, values))
        if kind in ("np", "npscalar"):
            array = self.array(data)
            return array if kind == "np" else array[()]
        if kind == "jax":
            return _jax(self.array(data), bool(data.get("weak")))
        if kind == "key" and data.get("impl") in _KEY_IMPLS:
            import jax
            return jax.random.wrap_key_data(_jax(self.array(data), False), impl=data["impl"])
        if kind == "ref" and self.named and type(data.get("v")) is str:
            return import_named(data["v"])
        if kind == "handle" and type(data.get("id")) is int:
            return self.resolve(data)
        raise ValueError(f"unknown kind {str(kind)[:40]!r}")


def _jax(array: np.ndarray, weak: bool) -> Any:
    """A JAX array of ``array``'s values, dtype and shape: ``jax.device_put``, which copies.
    ``jnp.asarray`` gives the same array but compiles a program for every new shape (JAX
    0.10: 14 ms a shape, against 0.08 ms), and a check's every question sends arrays of
    drawn shapes, after the kernel's compiled programs were dropped (``grade/answers.py``)."""
    import jax

    if weak and array.ndim == 0 and array.dtype.kind in "biuf":
        return jax.device_put(array.item())  # a Python number's weak type, as it was
    with jax.enable_x64(array.dtype.itemsize == 8):  # a float64 answer stays float64
        return jax.device_put(array)


def decode(data: Any, resolve: Callable[[dict[str, Any]], Any], named: bool = False,
           limits: Limits = LIMITS) -> Any:
    """A value from its JSON form; ``resolve(handle)`` gives the object a handle names (the
    handle's dict: its ``"id"`` and what it says of itself).

    Only with ``named`` (the kernel, reading the grader's question) is a name imported.
    Raises :class:`TooBig` past ``limits``, ``ValueError`` for anything else malformed.
    """
    return _Reader(resolve, named, limits).read(data)


