"""What crosses between the grader and a kernel (wire.py, grade/answers.py): plain data that
keeps its kind, handles for the rest, never a function the kernel names run by the grader, and
exceptions that keep their class where the grader knows it."""
import json
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from nn_from_scratch import autodiff, wire
from nn_from_scratch.exercises import _fixtures
from nn_from_scratch.exercises._core import Mistake
from nn_from_scratch.exercises._remote import RemoteFunction, beside, same_object, transformed
from nn_from_scratch.grade.answers import Answers
from nn_from_scratch.grade.checking import InProcess


def through(value, named=True):
    """``value`` sent and read back, through JSON text, as between the two processes."""
    return wire.decode(json.loads(json.dumps(wire.encode(value, named=named))), {}.__getitem__,
                       named=named)


def test_plain_data_keeps_its_kind():
    values = [None, ..., True, 3, 2**60, 2.5, float("inf"), "text", [1, (2, 3)], (4,),
              {"w": 1.0, 3: "b"}, np.arange(6, dtype=np.int16).reshape(2, 3),
              np.float32(1.5), np.array(True)]
    for value in values:
        back = through(value)
        assert type(back) is type(value), value
        if isinstance(value, np.ndarray):
            assert back.dtype == value.dtype and np.array_equal(back, value)
        elif value == value:  # not NaN
            assert back == value


def test_jax_arrays_keys_and_weak_types_survive():
    array = jnp.arange(4.0)
    back = through(array)
    assert isinstance(back, jax.Array) and back.dtype == jnp.float32
    assert np.array_equal(back, array)
    assert through(jnp.asarray(2.0)).weak_type and not through(jnp.float32(2.0)).weak_type
    key = jax.random.key(7)
    assert np.array_equal(jax.random.key_data(through(key)), jax.random.key_data(key))
    with jax.enable_x64(True):
        wide = jnp.asarray(np.float64(1e8 + 1))
    assert through(wide).dtype == np.float64  # a float64 answer stays float64


def test_arrays_of_every_kind_cross_as_jnp_asarray_would_make_them_and_compile_nothing():
    """A check's every question sends arrays of drawn shapes to a kernel whose compiled
    programs were dropped: ``jnp.asarray`` compiled a program for each new shape (JAX 0.10:
    lesson 07's solution graded alone, its checks 14.3 s on average, against 12.0 s with
    ``jax.device_put``, which makes the same array)."""
    arrays = [np.array([True, False]), np.arange(6, dtype=np.int8).reshape(2, 3),
              np.arange(3, dtype=np.uint32), np.arange(3), np.linspace(0, 1, 5, dtype=np.float16),
              np.linspace(0, 1, 7, dtype=np.float32).reshape(7, 1), np.ones(2, np.complex64),
              np.zeros((0, 3), np.float32), np.array(2.5, np.float32), np.array(-3)]
    events = []
    listener = lambda name, seconds, **_: events.append(name)  # noqa: E731
    with jax.enable_x64(True):
        wide = [jnp.asarray(np.float64(1e8 + 1)), jnp.arange(3, dtype=jnp.int64)]
    values = [jnp.asarray(a) for a in arrays] + wide + [jnp.asarray(2.0), jnp.asarray(3)]
    jax.clear_caches()
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        backs = [through(value) for value in values]
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert not [name for name in events if "compile" in name], events
    for value, back in zip(values, backs):
        assert isinstance(back, jax.Array), value
        assert (back.dtype, back.shape, back.weak_type) == (value.dtype, value.shape,
                                                            value.weak_type), (value, back)
        assert np.array_equal(back, value), (value, back)


def test_a_named_tuple_of_a_known_package_crosses_but_not_another():
    import optax

    state = optax.sgd(0.1, momentum=0.9).init([jnp.ones(2)])
    back = through(state)
    assert type(back) is type(state) and type(back[0]).__name__ == "TraceState"
    mine = namedtuple("Mine", "a b")(1, 2)
    with pytest.raises(TypeError, match="not plain data"):
        wire.encode(mine)


def test_functions_cross_by_name_from_the_grader_only():
    assert through(np.add) is np.add and through(_fixtures.cube) is _fixtures.cube
    kernel_says = {"t": "ref", "v": "builtins:exec"}
    with pytest.raises(ValueError, match="unknown kind"):  # a kernel cannot make the grader run it
        wire.decode(kernel_says, {}.__getitem__)
    with pytest.raises(ValueError, match="not something the grader lets cross"):
        wire.decode({"t": "ref", "v": "os:system"}, {}.__getitem__, named=True)
    with pytest.raises(ValueError, match="not a named tuple"):
        wire.decode({"t": "namedtuple", "ref": "builtins:eval", "v": []}, {}.__getitem__)


def test_errors_keep_their_class_and_never_one_that_stops_the_grader():
    def crossed(err):
        return wire.decode_error(json.loads(json.dumps(wire.encode_error(err))),
                                 {"nn_from_scratch.exercises._outcomes.Mistake": Mistake})

    assert type(crossed(ValueError("v"))) is ValueError
    assert type(crossed(Mistake("hint"))) is Mistake and str(crossed(Mistake("hint"))) == "hint"
    from nn_from_scratch._checks import InputError
    err = crossed(InputError("a batch of 10"))
    assert type(err).__name__ == "InputError" and isinstance(err, ValueError)
    assert type(crossed(jax.errors.TracerBoolConversionError.__new__(
        jax.errors.TracerBoolConversionError))) is jax.errors.TracerBoolConversionError
    for stopper in (SystemExit(), KeyboardInterrupt()):
        err = crossed(stopper)
        assert isinstance(err, Exception) and type(err).__name__ == type(stopper).__name__
    try:
        raise ValueError("outer") from TypeError("inner")
    except ValueError as raised:
        assert type(crossed(raised).__cause__) is TypeError


def test_errors_with_a_new_or_a_str_of_their_own_cross_with_their_message():
    """A student's open() raising PermissionError was hinted as "raised TypeError:
    Exception.__new__(PermissionError) is not safe" (OSError's classes refuse it)."""
    def crossed(err):
        return wire.decode_error(json.loads(json.dumps(wire.encode_error(err))), {})

    for err in (PermissionError(13, "denied"), FileNotFoundError("no such file"), OSError()):
        back = crossed(err)
        assert type(back) is type(err) and str(back) == str(err), (err, back)
    back = crossed(UnicodeDecodeError("utf-8", b"x", 0, 1, "bad"))  # its str reads its fields
    assert type(back).__name__ == "UnicodeDecodeError" and "can't decode" in str(back)


def test_a_kernel_that_answers_gibberish_gives_a_wrong_answer_not_a_crash():
    session = InProcess({})
    session.ask = lambda question: {"value": {"t": "handle", "id": "x"}}
    with pytest.raises(ValueError):
        session.lookup("anything")
    session.ask = lambda question: ["not", "an", "answer"]
    with pytest.raises(ValueError, match="not an answer"):
        session.lookup("anything")


def test_objects_stay_where_they_were_made_and_keep_their_identity():
    def mul(a, b):
        return autodiff.Value(a.data * b.data, parents=(a, b), local_grads=(b.data, a.data),
                              op="*")

    session = InProcess({"mul": mul})
    student = session.lookup("mul")
    assert isinstance(student, RemoteFunction) and student.name == "mul"
    a, b = beside(student, autodiff.Value, 2.0), beside(student, autodiff.Value, -3.0)
    out = student(a, b)
    assert out.data == -6.0 and out.local_grads == (-3.0, 2.0) and out.op == "*"
    assert out.parents[0] is a and out.parents[1] is b  # one proxy per kernel object
    session.forget()
    assert session.answers.objects == {}


def test_the_kernel_says_what_a_function_is_and_the_grader_runs_transforms_there():
    from nn_from_scratch.model import relu

    session = InProcess({"relu": relu, "mine": lambda x: x * 2, "softplus": jax.nn.softplus})
    library = session.lookup("relu")
    assert library._about["ref"] == "nn_from_scratch.model:relu"
    assert same_object(session.lookup("softplus"), jax.nn.softplus)
    mine = session.lookup("mine")
    assert not same_object(mine, jax.nn.softplus)
    jitted = transformed(mine, jax.jit, (jax.vmap, {"in_axes": 0}))
    assert np.array_equal(jitted(np.arange(3.0)), [0.0, 2.0, 4.0])
    assert isinstance(session.answers.objects[jitted._number], type(jax.vmap(abs)))


def test_answers_never_raise_and_name_an_unknown_answer_as_python_would():
    answers = Answers({})
    reply = answers(json.dumps({"op": "lookup", "name": "predict"})).data
    assert reply["error"]["type"] == "NameError"
    assert "predict" in reply["error"]["message"]
    assert "error" in answers("{ not json").data


# Issue 35, section 1: decoding what a kernel sends imports nothing, calls nothing of the
# kernel's choosing, and costs no more than its size.

def test_a_named_tuple_by_module_path_imports_nothing():
    """The attack: a "named tuple" whose class is numpy.f2py's __main__, whose import reads the
    grader's argv and calls sys.exit(), ending the whole batch. Only Optax's states, from a
    fixed list, are named tuples now; nothing is imported to find one."""
    import sys

    sys.modules.pop("numpy.f2py.__main__", None)
    forged = {"t": "namedtuple", "ref": "numpy.f2py.__main__:main", "v": []}
    for named in (False, True):  # the grader reading, and the kernel reading
        with pytest.raises(ValueError, match="not a named tuple that crosses"):
            wire.decode(forged, {}.__getitem__, named=named)
    assert "numpy.f2py.__main__" not in sys.modules
    assert set(wire.NAMED_TUPLES) >= {"EmptyState", "TraceState", "ScaleByAdamState"}


def test_keys_chosen_to_collide_are_refused_at_once_and_honest_keys_decode_in_linear_time():
    import time

    collide = 2**61 - 1  # hash(k * collide) == 0 for every k: a dict of them is quadratic
    keys = [{"t": "int", "v": str(k * collide)} for k in range(1, 100_001)]
    forged = {"t": "dict", "k": keys, "v": [0] * len(keys)}
    start = time.perf_counter()
    with pytest.raises(wire.TooBig, match="one hash"):
        wire.decode(forged, {}.__getitem__)
    refused = time.perf_counter() - start
    honest = {"t": "dict", "k": list(range(100_000)), "v": [0] * 100_000}
    start = time.perf_counter()
    assert len(wire.decode(honest, {}.__getitem__)) == 100_000
    decoded = time.perf_counter() - start
    assert refused < 3 * decoded + 1.0, (refused, decoded)  # 150,000 built took 450 s
    with pytest.raises(wire.TooBig, match="values"):  # and 150,000 are past the values cap
        wire.decode({**forged, "k": keys * 2, "v": [0] * 2 * len(keys)}, {}.__getitem__)
    few = {"t": "dict", "k": [{"t": "int", "v": str(k * collide)} for k in (1, 2, 3)],
           "v": [1, 2, 3]}
    assert sorted(wire.decode(few, {}.__getitem__).values()) == [1, 2, 3]  # a few may collide


def test_every_message_is_bounded_in_depth_values_and_bytes():
    deep: object = 1
    for _ in range(wire.LIMITS.depth + 5):
        deep = {"t": "list", "v": [deep]}
    with pytest.raises(wire.TooBig, match="levels deep"):
        wire.decode(deep, {}.__getitem__)
    many = {"t": "list", "v": [0] * (wire.LIMITS.items + 1)}
    with pytest.raises(wire.TooBig, match="values"):
        wire.decode(many, {}.__getitem__)
    small = wire.Limits(size=1000)
    with pytest.raises(wire.TooBig, match="MB"):
        wire.decode(wire.encode(np.zeros(1000)), {}.__getitem__, limits=small)
    assert wire.decode(wire.encode(np.zeros(10)), {}.__getitem__, limits=small).shape == (10,)


def test_only_numbers_keys_of_jax_and_handles_by_number_decode():
    import base64
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.zeros(2, dtype=[("a", "i4"), ("b", "f4")]), allow_pickle=False)
    structured = {"t": "np", "d": base64.b64encode(buffer.getvalue()).decode()}
    with pytest.raises(ValueError, match="only booleans and numbers"):
        wire.decode(structured, {}.__getitem__)
    key = wire.encode(jax.random.key(0))
    with pytest.raises(ValueError, match="unknown kind"):
        wire.decode({**key, "impl": "my_module.MyImpl"}, {}.__getitem__)
    with pytest.raises(ValueError, match="unknown kind"):
        wire.decode({"t": "handle", "id": "1; import os"}, {}.__getitem__)
    with pytest.raises(ValueError, match="more keys than values"):
        wire.decode({"t": "dict", "k": [1, 2], "v": [1]}, {}.__getitem__)


def test_an_error_with_ten_thousand_causes_is_read_without_recursing():
    data: dict = {"type": "ValueError", "module": "builtins", "base": "ValueError",
                  "message": "bottom", "cause": None}
    for _ in range(10_000):
        data = {**data, "message": "up", "cause": data}
    err = wire.decode_error(data, {})
    depth = 0
    while err.__cause__ is not None:
        err, depth = err.__cause__, depth + 1
    assert depth == 8
    with pytest.raises(ValueError, match="not an error"):
        wire.decode_error(["a", "list"], {})
