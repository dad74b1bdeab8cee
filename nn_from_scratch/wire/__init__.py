"""What crosses between the grader and a student's kernel: plain data, never pickle.

A check decided in the grader's process calls the student's code in the kernel;
both ways go values in a JSON form that this module makes and reads, and that
holds only:

- ``None``, ``...``, booleans, integers, floats (NaN and infinities too), strings;
- lists, tuples and dicts of these (their kind kept: a tuple comes back a tuple), and
  named tuples of a fixed list of Optax's state classes (:data:`NAMED_TUPLES`), made
  without running any code of the class;
- arrays as ``.npy`` bytes (base64) of booleans or numbers, NumPy's or JAX's (which one,
  the dtype and a 0-d array versus a NumPy scalar are kept), and JAX's PRNG keys (their
  data and one of JAX's own implementations);
- *handles*: anything else stays in the kernel, and crosses as a number naming
  it, with its type's name and whether it can be called (:class:`Handle`);
- *references*: a function or class of the course's package, JAX, NumPy or the
  standard library, by its module and name, which the kernel imports (the grader
  never imports a name a kernel sends);
- an exception: its class's name and module, its message and its cause.

Reading one imports nothing and calls nothing a message names: every kind it can
make is fixed here (``np.load`` with ``allow_pickle=False``), and it stops at
:data:`LIMITS` (bytes, nesting, items) with :class:`TooBig`. No part of it costs
more than its size: a dict whose keys share hashes (integers chosen to collide
make a dict quadratic to build) is refused before it is built. Whatever a kernel
sends, the worst it can be is a wrong value. :func:`encode` takes ``handle``, the
sender's way of keeping an object it cannot send, and :func:`decode` takes
``resolve``, the receiver's way of turning a handle back into an object.

The format is one package of three modules: :mod:`.write` (the kinds, :func:`encode`,
:func:`reference`), :mod:`.read` (:func:`decode` and its :data:`LIMITS`) and
:mod:`.errors` (exceptions both ways).
"""
from .errors import decode_error, encode_error
from .read import LIMITS, Limits, TooBig, decode, json_values
from .write import NAMED_TUPLES, SENDABLE, Handle, encode, reference

__all__ = ["LIMITS", "NAMED_TUPLES", "SENDABLE", "Handle", "Limits", "TooBig", "decode",
           "decode_error", "encode", "encode_error", "json_values", "reference"]
